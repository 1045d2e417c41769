package admin_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

func TestTeamsResolveMembersByEmailOrID(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		svc := admin.New(s)
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		a, _ := s.CreateMember(ctx, org.ID, "a@example.com", "", "")
		b, _ := s.CreateMember(ctx, org.ID, "b@example.com", "", "")
		stranger, _ := s.CreateMember(ctx, other.ID, "s@example.com", "", "")

		team, err := svc.CreateTeam(ctx, org.ID, admin.NewTeam{Name: "Finance", Kind: "group", Members: []string{a.ID, "B@example.com", a.Email}})
		require.NoError(t, err)
		assert.Len(t, team.Members, 2)

		_, err = svc.CreateTeam(ctx, org.ID, admin.NewTeam{Name: "Ops", Kind: "team", Members: []string{stranger.ID, "nobody@example.com"}})
		e, ok := apperr.As(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, "members", e.Field)
		assert.Contains(t, e.Message, stranger.ID)
		assert.Contains(t, e.Message, "nobody@example.com")

		_, err = svc.CreateTeam(ctx, org.ID, admin.NewTeam{Name: "Finance", Kind: "team", Members: nil})
		assert.True(t, apperr.Is(err, apperr.Conflict), "%v", err)

		teams, next, err := s.ListTeams(ctx, org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		assert.Empty(t, next)
		require.Len(t, teams, 1)
		assert.ElementsMatch(t, []string{a.ID, b.ID}, []string{teams[0].Members[0].ID, teams[0].Members[1].ID})
	})
}

// TestTeamsAreEditedAndRemoved: a team is renamed, its members replaced and
// the team removed; requests made earlier keep the people it stood for.
func TestTeamsAreEditedAndRemoved(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		svc := admin.New(s)
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		a, _ := s.CreateMember(ctx, org.ID, "a@example.com", "", "")
		b, _ := s.CreateMember(ctx, org.ID, "b@example.com", "", "")
		team, err := svc.CreateTeam(ctx, org.ID, admin.NewTeam{Name: "Finance", Kind: "group", Members: []string{a.ID}})
		require.NoError(t, err)
		_, err = svc.CreateTeam(ctx, org.ID, admin.NewTeam{Name: "Ops", Kind: "team", Members: nil})
		require.NoError(t, err)
		earlier := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
			ExpiresAt: time.Now().Add(time.Hour), Requester: "key_x", RequestedBy: "agent"}, Risk: models.RiskLow, ApproverIDs: []string{a.ID},
			RequiredApprovals: 1}
		_, err = requests.Insert(ctx, s, approvals.Records(s), earlier, nil)
		require.NoError(t, err)

		name := "Finance team"
		got, err := svc.UpdateTeam(ctx, org.ID, team.ID, admin.TeamPatch{Name: &name, Members: nil})
		require.NoError(t, err)
		assert.Equal(t, "Finance team", got.Name)
		require.Len(t, got.Members, 1, "members stay when not given")

		refs := []string{b.Email}
		got, err = svc.UpdateTeam(ctx, org.ID, team.ID, admin.TeamPatch{Name: nil, Members: &refs})
		require.NoError(t, err)
		require.Len(t, got.Members, 1)
		assert.Equal(t, b.ID, got.Members[0].ID)

		taken := "Ops"
		_, err = svc.UpdateTeam(ctx, org.ID, team.ID, admin.TeamPatch{Name: &taken, Members: nil})
		assert.True(t, apperr.Is(err, apperr.Conflict), "%v", err)
		_, err = svc.UpdateTeam(ctx, other.ID, team.ID, admin.TeamPatch{Name: &name, Members: nil})
		assert.True(t, apperr.Is(err, apperr.NotFound), "another organisation's team: %v", err)
		assert.True(t, apperr.Is(svc.DeleteTeam(ctx, other.ID, team.ID), apperr.NotFound))

		require.NoError(t, svc.DeleteTeam(ctx, org.ID, team.ID))
		var links int64
		require.NoError(t, db.Table("team_members").Where("team_id = ?", team.ID).Count(&links).Error)
		assert.Zero(t, links, "its membership list goes with it")
		teams, _, err := s.ListTeams(ctx, org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, teams, 1)

		kept, err := approvals.Records(s).Get(ctx, org.ID, earlier.ID)
		require.NoError(t, err)
		assert.Equal(t, models.StringList{a.ID}, kept.ApproverIDs, "a request made earlier is unchanged")
	})
}

// TestAnAddressIsAMembersOrAGuests: the same address made a member and a
// guest at once ends as one of them, never both, round after round.
func TestAnAddressIsAMembersOrAGuests(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		svc := admin.New(s)
		org := testenv.NewOrg(t, s)
		for round := range 4 {
			email := fmt.Sprintf("both-%d@example.com", round)
			var wg sync.WaitGroup
			var memberErr, guestErr error
			wg.Go(func() {
				_, memberErr = svc.CreateMember(ctx, org.ID, admin.Operator, admin.NewMember{Email: email})
			})
			wg.Go(func() { _, _, guestErr = svc.CreateGuest(ctx, org.ID, admin.NewGuest{Email: email}) })
			wg.Wait()
			require.True(t, (memberErr == nil) != (guestErr == nil), "round %d: member %v, guest %v", round, memberErr, guestErr)
			refusal := memberErr
			if refusal == nil {
				refusal = guestErr
			}
			assert.True(t, apperr.Is(refusal, apperr.Conflict), "%v", refusal)
		}
	})
}
