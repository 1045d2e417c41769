package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
)

// Removing a guest ends their sessions, sign-in links and decision links in
// one go and asks each kind to take them off the pending requests that
// still list them, again on a retry until the workflow's write has; the
// address may be admitted again afterwards.
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

		approval := func(status string, approvers ...string) *approvals.Approval {
			a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
				ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow, ApproverIDs: approvers,
				RequiredApprovals: 1}
			_, err := requests.Insert(ctx, s, approvals.Records(s), a, nil)
			require.NoError(t, err)
			if status != states.Pending {
				testenv.Transition(t, s, approvals.Records(s), org.ID, a.ID, 1, func(a *approvals.Approval) { a.Status = status })
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
		decision, err := s.CreateDecisionLink(ctx, pending.OrganizationID, pending.ID, pending.ExpiresAt, g.ID)
		require.NoError(t, err)

		spy := &askedSpy{kind: events.RequestApproval}
		svc := admin.New(s, spy)
		err = svc.RemoveGuest(ctx, other.ID, g.ID, admin.Operator)
		assert.True(t, apperr.Is(err, apperr.NotFound), "another organisation's guest: %v", err)

		require.NoError(t, svc.RemoveGuest(ctx, org.ID, g.ID, admin.Operator))
		assert.Equal(t, []string{org.ID + " " + g.ID + " gus@partner.example " + pending.ID}, spy.calls,
			"settled requests and other people's are left alone")

		_, _, err = accounts.New(s).LoadSession(ctx, session)
		assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
		for _, l := range links {
			_, err = accounts.New(s).ConsumeSignInLink(ctx, l.Token)
			if l.Person.Organization.ID == org.ID {
				assert.ErrorIs(t, err, accounts.ErrSignInLinkInvalid)
			} else {
				assert.NoError(t, err, "the other organisation's guest still signs in")
			}
		}
		_, _, err = accounts.New(s).LoadSession(ctx, otherSession)
		assert.NoError(t, err)
		_, err = s.OpenDecisionLink(ctx, pending.ID, decision)
		assert.True(t, apperr.Is(err, apperr.NotFound), "the link went with the guest: %v", err)
		d, err := s.LookUp(ctx, org.ID, []string{"gus@partner.example", g.ID})
		require.NoError(t, err)
		assert.Empty(t, d.Guests("gus@partner.example"), "a removed guest resolves as nobody")
		assert.Empty(t, d.Guests(g.ID))
		_, err = s.GuestByEmail(ctx, org.ID, "gus@partner.example")
		assert.True(t, apperr.Is(err, apperr.NotFound))

		// A retry after a crash finds the guest gone and the request still
		// listing them: there is still something to finish.
		spy.calls = nil
		require.NoError(t, svc.RemoveGuest(ctx, org.ID, g.ID, admin.Operator))
		assert.Equal(t, []string{org.ID + " " + g.ID + " " + g.ID + " " + pending.ID}, spy.calls,
			"the guest record is gone by then: the timeline names them by id")

		// The workflow's write takes the guest off the index with the record.
		_, err = requests.Persist(ctx, s, approvals.Records(s), requests.Change[approvals.Approval]{OrganizationID: org.ID, ID: pending.ID, Seq: 1,
			Apply: func(a *approvals.Approval) (models.AuditEntry, error) {
				a.ApproverIDs = models.StringList{ada.ID}
				return models.AuditEntry{Action: "approver_removed", ActorID: "key_admin", ActorName: "admin", At: models.Now()}, nil
			}})
		require.NoError(t, err)
		counts, err := approvals.Records(s).Counts(ctx, org.ID, ada.ID, time.Now())
		require.NoError(t, err)
		assert.Equal(t, 2, counts.Total, "the owner now has it")
		err = svc.RemoveGuest(ctx, org.ID, g.ID, admin.Operator)
		assert.True(t, apperr.Is(err, apperr.NotFound), "nothing left to do: %v", err)

		// The address may be admitted again, as a new guest.
		back, created, err := s.CreateGuest(ctx, org.ID, "gus@partner.example", "")
		require.NoError(t, err)
		assert.True(t, created)
		assert.NotEqual(t, g.ID, back.ID)
	})
}

// Removing a guest asks the reviews' kind to take them off the open
// reviews still waiting on their verdict (not one they returned, not a
// settled one), again on a retry until the workflow's write has.
func TestRemoveGuestAsksOnlyTheReviewsWaitingOnThem(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		ada, err := s.CreateMember(ctx, org.ID, "ada@example.com", "", models.RoleOwner)
		require.NoError(t, err)
		g, _, err := s.CreateGuest(ctx, org.ID, "gus@partner.example", "Gus")
		require.NoError(t, err)
		review := func(status string, verdicts ...reviews.StoredVerdict) *reviews.Review {
			r := &reviews.Review{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Check",
				ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_test", RequestedBy: "agent"}, ReportID: "rpt_1", VersionID: "ver_1", Version: 1,
				Reviewers: []string{g.Email, ada.Email}, ReviewerIDs: []string{g.ID, ada.ID}, RequiredApprovals: 2,
			}
			r.Verdicts.V = verdicts
			_, err := requests.Insert(ctx, s, reviews.Records(s), r, nil)
			require.NoError(t, err)
			if status != states.Open {
				testenv.Transition(t, s, reviews.Records(s), org.ID, r.ID, 1, func(r *reviews.Review) { r.Status = status })
			}
			return r
		}
		open := review(states.Open)
		review(states.Open, reviews.StoredVerdict{ReviewerID: g.ID, Verdict: "approved"})
		review(states.Approved)

		spy := &askedSpy{kind: events.RequestReview}
		svc := admin.New(s, spy)
		require.NoError(t, svc.RemoveGuest(ctx, org.ID, g.ID, admin.Operator))
		assert.Equal(t, []string{org.ID + " " + g.ID + " gus@partner.example " + open.ID}, spy.calls,
			"a verdict returned stands; settled reviews are left alone")
		spy.calls = nil
		require.NoError(t, svc.RemoveGuest(ctx, org.ID, g.ID, admin.Operator))
		assert.Equal(t, []string{org.ID + " " + g.ID + " " + g.ID + " " + open.ID}, spy.calls, "still something to finish")

		_, err = requests.Persist(ctx, s, reviews.Records(s), requests.Change[reviews.Review]{OrganizationID: org.ID, ID: open.ID, Seq: 1,
			Apply: func(r *reviews.Review) (models.AuditEntry, error) {
				r.ReviewerIDs = models.StringList{ada.ID}
				return models.AuditEntry{Action: "reviewer_removed", ActorID: "key_admin", ActorName: "admin", At: models.Now()}, nil
			}})
		require.NoError(t, err)
		err = svc.RemoveGuest(ctx, org.ID, g.ID, admin.Operator)
		assert.True(t, apperr.Is(err, apperr.NotFound), "nothing left to do: %v", err)
		waiting, err := reviews.Records(s).Waiting(ctx, org.ID, ada.ID, models.Attention, 10)
		require.NoError(t, err)
		assert.Len(t, waiting, 2, "Ada is still asked on both open reviews")
	})
}
