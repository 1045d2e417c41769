package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestRemoveGuestEndsTheirAccess: removing a guest ends their sessions,
// sign-in links and decision links in one go and reports the pending
// requests that still list them; only the workflow's persist path takes
// them off those, and the address may be admitted again afterwards.
func TestRemoveGuestEndsTheirAccess(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		ada, err := s.CreateMember(ctx, org.ID, "ada@example.com", "", models.RoleOwner)
		require.NoError(t, err)
		g, _, err := s.CreateGuest(ctx, org.ID, "gus@partner.example", "Gus")
		require.NoError(t, err)
		// The same address is a guest of another organisation too, untouched.
		elsewhere, _, err := s.CreateGuest(ctx, other.ID, "gus@partner.example", "")
		require.NoError(t, err)

		approval := func(status string, approvers ...string) *models.Approval {
			a := &models.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
				ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow, ApproverIDs: approvers,
				RequiredApprovals: 1}
			_, err := s.Approvals().Create(ctx, a, nil)
			require.NoError(t, err)
			if status != states.Pending {
				testenv.Transition(t, s.Approvals(), org.ID, a.ID, 1, func(a *models.Approval) { a.Status = status })
			}
			return a
		}
		pending := approval(states.Pending, g.ID)
		approval(states.Approved, g.ID, ada.ID)
		approval(states.Pending, ada.ID)

		_, session, err := accounts.New(s).CreateSession(ctx, org.ID, g.ID)
		require.NoError(t, err)
		_, otherSession, err := accounts.New(s).CreateSession(ctx, other.ID, elsewhere.ID)
		require.NoError(t, err)
		links, err := accounts.New(s).CreateSignInLinks(ctx, "gus@partner.example")
		require.NoError(t, err)
		require.Len(t, links, 2)
		decision, err := s.CreateDecisionLink(ctx, pending, g.ID)
		require.NoError(t, err)

		_, err = s.RemoveGuest(ctx, other.ID, g.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound), "another organisation's guest: %v", err)

		removed, err := s.RemoveGuest(ctx, org.ID, g.ID)
		require.NoError(t, err)
		require.NotNil(t, removed.Guest)
		assert.Equal(t, "gus@partner.example", removed.Guest.Email)
		assert.Equal(t, models.Waiting{events.RequestApproval: {pending.ID}}, removed.Waiting, "settled requests and other people's are left alone")

		_, _, err = accounts.New(s).LoadSession(ctx, session)
		assert.ErrorIs(t, err, models.ErrSessionInvalid)
		for _, l := range links {
			_, err = accounts.New(s).ConsumeSignInLink(ctx, l.Token)
			if l.Person.Organization.ID == org.ID {
				assert.ErrorIs(t, err, models.ErrSignInLinkInvalid)
			} else {
				assert.NoError(t, err, "the other organisation's guest still signs in")
			}
		}
		_, _, err = accounts.New(s).LoadSession(ctx, otherSession)
		assert.NoError(t, err)
		_, err = s.OpenDecisionLink(ctx, pending.ID, decision)
		assert.ErrorIs(t, err, models.ErrDecisionLinkInvalid)
		d, err := s.LookUp(ctx, org.ID, []string{"gus@partner.example", g.ID})
		require.NoError(t, err)
		assert.Empty(t, d.Guests("gus@partner.example"), "a removed guest resolves as nobody")
		assert.Empty(t, d.Guests(g.ID))
		_, err = s.GuestByEmail(ctx, org.ID, "gus@partner.example")
		assert.True(t, apperr.Is(err, apperr.NotFound))

		// A retry after a crash finds the guest gone and the request still
		// listing them: there is still something to finish.
		again, err := s.RemoveGuest(ctx, org.ID, g.ID)
		require.NoError(t, err)
		assert.Nil(t, again.Guest)
		assert.Equal(t, models.Waiting{events.RequestApproval: {pending.ID}}, again.Waiting)

		// The workflow's write takes the guest off the index with the record.
		_, err = s.Approvals().Apply(ctx, models.RequestChange[models.Approval]{OrganizationID: org.ID, ID: pending.ID, Seq: 1,
			Apply: func(a *models.Approval) (models.AuditEntry, error) {
				a.ApproverIDs = models.StringList{ada.ID}
				return models.AuditEntry{Action: "approver_removed", ActorID: "key_admin", ActorName: "admin", At: models.Now()}, nil
			}})
		require.NoError(t, err)
		inbox, err := s.PendingFor(ctx, org.ID, ada.ID, time.Now(), models.Attention, 10)
		require.NoError(t, err)
		assert.Equal(t, 2, inbox.Total, "the owner now has it")
		_, err = s.RemoveGuest(ctx, org.ID, g.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound), "nothing left to do: %v", err)

		// The address may be admitted again, as a new guest.
		back, created, err := s.CreateGuest(ctx, org.ID, "gus@partner.example", "")
		require.NoError(t, err)
		assert.True(t, created)
		assert.NotEqual(t, g.ID, back.ID)
	})
}

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
		earlier := &models.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Share",
			ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow, ApproverIDs: []string{g.ID},
			RequiredApprovals: 1}
		_, err = s.Approvals().Create(ctx, earlier, nil)
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

		kept, err := s.Approvals().Get(ctx, org.ID, earlier.ID)
		require.NoError(t, err)
		assert.Equal(t, models.StringList{g.ID}, kept.ApproverIDs, "a request made earlier is unchanged")
		inbox, err := s.PendingFor(ctx, org.ID, g.ID, time.Now(), models.Attention, 10)
		require.NoError(t, err)
		assert.Equal(t, 1, inbox.Total, "and still waits on the guest")
	})
}

// TestRemoveGuestReportsTheirOpenReviews: removing a guest reports the
// open reviews still waiting on their verdict (not one they returned, not
// a settled one) until the workflow's write takes them off the reviewer
// index with the record.
func TestRemoveGuestReportsTheirOpenReviews(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		ada, err := s.CreateMember(ctx, org.ID, "ada@example.com", "", models.RoleOwner)
		require.NoError(t, err)
		g, _, err := s.CreateGuest(ctx, org.ID, "gus@partner.example", "Gus")
		require.NoError(t, err)
		review := func(status string, verdicts ...models.Verdict) *models.Review {
			r := &models.Review{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Check",
				ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_test", RequestedBy: "agent"}, ReportID: "rpt_1", VersionID: "ver_1", Version: 1,
				Reviewers: []string{g.Email, ada.Email}, ReviewerIDs: []string{g.ID, ada.ID}, RequiredApprovals: 2,
			}
			r.Verdicts.V = verdicts
			_, err := s.Reviews().Create(ctx, r, nil)
			require.NoError(t, err)
			if status != states.Open {
				testenv.Transition(t, s.Reviews(), org.ID, r.ID, 1, func(r *models.Review) { r.Status = status })
			}
			return r
		}
		open := review(states.Open)
		review(states.Open, models.Verdict{ReviewerID: g.ID, Verdict: "approved"})
		review(states.Approved)

		removed, err := s.RemoveGuest(ctx, org.ID, g.ID)
		require.NoError(t, err)
		assert.Equal(t, models.Waiting{events.RequestReview: {open.ID}}, removed.Waiting, "a verdict returned stands; settled reviews are left alone")
		again, err := s.RemoveGuest(ctx, org.ID, g.ID)
		require.NoError(t, err)
		assert.Nil(t, again.Guest)
		assert.Equal(t, models.Waiting{events.RequestReview: {open.ID}}, again.Waiting, "still something to finish")

		_, err = s.Reviews().Apply(ctx, models.RequestChange[models.Review]{OrganizationID: org.ID, ID: open.ID, Seq: 1,
			Apply: func(r *models.Review) (models.AuditEntry, error) {
				r.ReviewerIDs = models.StringList{ada.ID}
				return models.AuditEntry{Action: "reviewer_removed", ActorID: "key_admin", ActorName: "admin", At: models.Now()}, nil
			}})
		require.NoError(t, err)
		_, err = s.RemoveGuest(ctx, org.ID, g.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound), "nothing left to do: %v", err)
		waiting, err := s.Reviews().Waiting(ctx, org.ID, ada.ID, models.Attention, 10)
		require.NoError(t, err)
		assert.Len(t, waiting, 2, "Ada is still asked on both open reviews")
	})
}
