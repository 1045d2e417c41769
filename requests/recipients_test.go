package requests_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Resolve serves every role the same way; the role only names the field
// and the codes a refusal carries. Here a role other than approvers shows
// that nothing of the approval kind is built in.
func TestResolveForAnyRole(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		ann, err := store.CreateMember(ctx, org.ID, "ann@example.com", "Ann", "")
		require.NoError(t, err)
		bo, err := store.CreateMember(ctx, org.ID, "bo@example.com", "Bo", "")
		require.NoError(t, err)
		off := false
		testenv.ChangeMember(t, store, org.ID, bo.ID, func(m *models.Member) { m.Active = off })
		cy, err := store.CreateMember(ctx, org.ID, "cy@example.com", "Cy", "")
		require.NoError(t, err)
		_, err = testenv.CreateTeam(store, ctx, org.ID, "Ops", models.TeamKindTeam, []string{ann.Email, cy.Email})
		require.NoError(t, err)
		_, err = testenv.CreateTeam(store, ctx, org.ID, "ann@example.com", models.TeamKindGroup, []string{cy.Email})
		require.NoError(t, err)
		guest, _, err := store.CreateGuest(ctx, org.ID, "gus@partner.example", "")
		require.NoError(t, err)

		role := requests.Role{Field: "reviewers", Unknown: apperr.UnknownReviewer, Ambiguous: apperr.AmbiguousAudience,
			GuestRefusal: "a guest; guests may not review here"}

		got, err := requests.Resolve(ctx, store, org.ID, []string{"Ops", cy.ID, " CY@example.com "}, role)
		require.NoError(t, err)
		assert.Equal(t, []string{ann.ID, cy.ID}, got, "a team expands once; each person is named once, in order")

		_, err = requests.Resolve(ctx, store, org.ID, []string{"nobody@example.com", bo.Email, guest.Email, "Ops"}, role)
		e, ok := apperr.As(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, apperr.UnknownReviewer, e.Code)
		assert.Equal(t, "reviewers", e.Field)
		assert.Contains(t, e.Message, "nobody@example.com")
		assert.Contains(t, e.Message, "bo@example.com (inactive)")
		assert.Contains(t, e.Message, "gus@partner.example (a guest; guests may not review here)")
		assert.NotContains(t, e.Message, "Ops", "only refused entries are named")

		_, err = requests.Resolve(ctx, store, org.ID, []string{cy.ID, "ann@example.com"}, role)
		e, ok = apperr.As(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, apperr.AmbiguousAudience, e.Code)
		assert.Equal(t, "reviewers[1]", e.Field)
		assert.Len(t, e.Candidates, 2)

		role.Guests = true
		got, err = requests.Resolve(ctx, store, org.ID, []string{guest.ID, requests.Everyone}, role)
		require.NoError(t, err)
		assert.Equal(t, []string{guest.ID, ann.ID, cy.ID}, got, "everyone is every active member; guests only when named")
	})
}

// TestHandoverStopsBeforeWhomTheRequestMayNotGoTo: a chain is followed
// to its end, but stops before the request's requester or someone May
// refuses, leaving the one before them asked; a requester is not away
// from their own request.
func TestHandoverStopsBeforeWhomTheRequestMayNotGoTo(t *testing.T) {
	ctx := context.Background()
	away := map[string]models.Delegation{
		"ann": {DelegatorID: "ann", DelegateID: "bo", Delegator: &models.Member{Name: "Ann"}, Delegate: &models.Member{Name: "Bo"}},
		"bo":  {DelegatorID: "bo", DelegateID: "cy", Delegator: &models.Member{Name: "Bo"}, Delegate: &models.Member{Name: "Cy"}},
	}
	standIn := func(h requests.Handover, id string) string {
		to, err := h.StandIn(ctx, away, id)
		require.NoError(t, err)
		return to
	}
	assert.Equal(t, []string{"bo", "cy"}, requests.Chain(away, "ann"))
	assert.Equal(t, "cy", standIn(requests.Handover{}, "ann"))
	assert.Equal(t, "cy", standIn(requests.Handover{Requester: "key_agent"}, "ann"))
	assert.Equal(t, "ann", standIn(requests.Handover{Requester: "bo"}, "ann"), "never to or through the requester")
	assert.Equal(t, "bo", standIn(requests.Handover{Requester: "cy"}, "ann"), "the last before the requester")
	assert.Equal(t, "ann", standIn(requests.Handover{Requester: "ann"}, "ann"), "the requester is not away from their own request")
	assert.Equal(t, "dee", standIn(requests.Handover{Requester: "cy"}, "dee"), "not away")
	mayNotCy := requests.Handover{May: func(_ context.Context, id string) (bool, error) { return id != "cy", nil }}
	assert.Equal(t, "bo", standIn(mayNotCy, "ann"))

	r, ok, err := requests.Handover{Requester: "cy"}.Delegate(ctx, away, "ann")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, workflows.AddDelegateRequest{DelegatorID: "ann", DelegatorName: "Ann", DelegateID: "bo", DelegateName: "Bo"}, r)
	_, ok, err = requests.Handover{Requester: "bo"}.Delegate(ctx, away, "ann")
	require.NoError(t, err)
	assert.False(t, ok, "nobody may stand in")
}
