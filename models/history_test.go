package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// TestSettledForPagesBothKindsBySettledTime: a person's history pages
// through approvals and requests for information together, the most
// recently settled first whenever each was created, and the pages join up
// with nothing lost or repeated, requests settled at the same moment
// included; an approval expired or cancelled settled at its last write.
func TestSettledForPagesBothKindsBySettledTime(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		ada, err := s.CreateMember(ctx, org.ID, "ada@example.com", "", "")
		require.NoError(t, err)
		base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		// Workflow times keep nanoseconds; the page must still join up.
		at := func(minutes int) time.Time { return base.Add(time.Duration(minutes)*time.Minute + 123456789) }
		// Each settles by a transition; one without a time of its own (an
		// approval expired or cancelled) settles at that write.
		approval := func(status string, settled time.Time, decided bool) (string, time.Time) {
			a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "a",
				ExpiresAt: base.Add(time.Hour), Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow, ApproverIDs: []string{ada.ID},
				RequiredApprovals: 1}
			_, err := requests.Insert(ctx, s, approvals.Records(s), a, nil)
			require.NoError(t, err)
			testenv.Transition(t, s, approvals.Records(s), org.ID, a.ID, 1, func(a *approvals.Approval) {
				a.Status = status
				if decided {
					a.DecidedAt, a.DecidedBy = &settled, &ada.Email
				}
			})
			if !decided {
				got, err := approvals.Records(s).Get(ctx, org.ID, a.ID)
				require.NoError(t, err)
				settled = got.UpdatedAt
			}
			return a.ID, settled
		}
		collection := func(status string, settled time.Time) (string, time.Time) {
			c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "c",
				ExpiresAt: base.Add(time.Hour), Requester: "key_test", RequestedBy: "agent"}, RespondentIDs: []string{ada.ID}, RequiredResponses: 1,
			}
			_, err := requests.Insert(ctx, s, collections.Records(s), c, nil)
			require.NoError(t, err)
			testenv.Transition(t, s, collections.Records(s), org.ID, c.ID, 1, func(c *collections.Collection) {
				c.Status, c.SettledAt = status, &settled
			})
			return c.ID, settled
		}
		// Created in one order, settled in another; three at minute 5.
		want := map[string]time.Time{}
		add := func(id string, settled time.Time) { want[id] = settled.UTC() }
		add(collection(states.Complete, at(9)))
		add(approval(states.Approved, at(1), true))
		add(approval(states.Expired, at(7), false))
		add(collection(states.Expired, at(5)))
		add(approval(states.Rejected, at(5), true))
		add(collection(states.Cancelled, at(5)))
		add(approval(states.Cancelled, at(3), false))
		add(collection(states.Complete, at(2)))

		var got []models.Settled
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10, "the pages never end")
			page, next, err := s.SettledFor(ctx, org.ID, ada.ID, models.HistoryFilter{}, models.Page{Limit: 3, Cursor: cursor})
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), 3)
			got = append(got, page...)
			if next == "" {
				break
			}
			cursor = next
		}
		require.Len(t, got, len(want), "every request once")
		seen := map[string]bool{}
		for i, g := range got {
			assert.False(t, seen[g.ID], "%s twice", g.ID)
			seen[g.ID] = true
			// PostgreSQL keeps microseconds.
			assert.True(t, want[g.ID].Truncate(time.Microsecond).Equal(g.SettledAt.Truncate(time.Microsecond)),
				"%s settled at %s, not %s", g.ID, want[g.ID], g.SettledAt)
			if i > 0 {
				assert.False(t, g.SettledAt.After(got[i-1].SettledAt), "the most recently settled first")
			}
			kind := events.RequestApproval
			if g.Title == "c" {
				kind = events.RequestCollection
			}
			assert.Equal(t, kind, g.Kind)
			if kind == events.RequestApproval {
				assert.Equal(t, models.RiskLow, g.Risk, "an approval's risk")
				if g.Status == states.Approved || g.Status == states.Rejected {
					assert.Equal(t, &ada.Email, g.DecidedBy)
				}
			} else {
				assert.Empty(t, g.Risk)
			}
		}

		only, _, err := s.SettledFor(ctx, org.ID, ada.ID, models.HistoryFilter{Status: states.Expired}, models.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, only, 2, "an expired approval and an expired request for information")
		assert.NotEqual(t, only[0].Kind, only[1].Kind)

		_, _, err = s.SettledFor(ctx, org.ID, ada.ID, models.HistoryFilter{}, models.Page{Limit: 3, Cursor: models.EncodeCursor("apr_1")})
		assert.True(t, apperr.Is(err, apperr.InvalidRequest), "a cursor of another list: %v", err)
	})
}
