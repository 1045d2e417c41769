package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// TestUpdateGuestRenames: a guest is renamed in place; the address stays,
// another organisation's guest is not found, and a request made earlier
// still lists the guest and still waits on them.
func TestUpdateGuestRenames(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		g, _, err := s.CreateGuest(ctx, org.ID, "gus@partner.example", "Gus")
		require.NoError(t, err)
		earlier := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Share",
			ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow, ApproverIDs: []string{g.ID},
			RequiredApprovals: 1}
		_, err = requests.Insert(ctx, s, approvals.Records(s), earlier, nil)
		require.NoError(t, err)

		name := "  Gus Grey "
		got, err := s.UpdateGuest(ctx, org.ID, g.ID, &name)
		require.NoError(t, err)
		assert.Equal(t, "Gus Grey", got.Name)
		assert.Equal(t, "gus@partner.example", got.Email)
		got, err = s.UpdateGuest(ctx, org.ID, g.ID, nil)
		require.NoError(t, err)
		assert.Equal(t, "Gus Grey", got.Name, "nil leaves the name")
		d, err := s.LookUp(ctx, org.ID, []string{g.ID})
		require.NoError(t, err)
		require.Len(t, d.Guests(g.ID), 1)
		assert.Equal(t, "Gus Grey", d.Guests(g.ID)[0].Name)

		_, err = s.UpdateGuest(ctx, other.ID, g.ID, &name)
		assert.True(t, apperr.Is(err, apperr.NotFound), "another organisation's guest: %v", err)
		_, err = s.UpdateGuest(ctx, org.ID, "gst_nobody", &name)
		assert.True(t, apperr.Is(err, apperr.NotFound), "%v", err)

		kept, err := approvals.Records(s).Get(ctx, org.ID, earlier.ID)
		require.NoError(t, err)
		assert.Equal(t, models.StringList{g.ID}, kept.ApproverIDs, "a request made earlier is unchanged")
		inbox, err := pendingFor(ctx, s, org.ID, g.ID, time.Now(), models.Attention, 10)
		require.NoError(t, err)
		assert.Equal(t, 1, inbox.Total, "and still waits on the guest")
	})
}
