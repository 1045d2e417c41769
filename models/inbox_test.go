package models_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
)

func TestTheApprovalsInboxPutsWhatNeedsAttentionFirstWhateverTheBacklog(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		ada, err := s.CreateMember(ctx, org.ID, "ada@example.com", "", "")
		require.NoError(t, err)
		bob, err := s.CreateMember(ctx, org.ID, "bob@example.com", "", "")
		require.NoError(t, err)
		now := time.Now().UTC().Truncate(time.Second)
		create := func(title, risk string, expires time.Time, status string, orgID string, approvers ...string) *approvals.Approval {
			a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: orgID, Title: title,
				ExpiresAt: expires, Requester: "key_test", RequestedBy: "agent"}, Risk: risk, ApproverIDs: approvers,
				RequiredApprovals: 1}
			_, err := requests.Insert(ctx, s, approvals.Records(s), a, nil)
			require.NoError(t, err)
			if status != states.Pending {
				testenv.Transition(t, s, approvals.Records(s), orgID, a.ID, 1, func(a *approvals.Approval) { a.Status = status })
			}
			return a
		}

		// What needs attention most is among the oldest: a list read
		// newest first and cut short would miss it.
		create("urgent low", models.RiskLow, now.Add(time.Hour), states.Pending, org.ID, ada.ID)
		urgentCritical := create("urgent critical", models.RiskCritical, now.Add(time.Hour), states.Pending, org.ID, ada.ID, bob.ID)
		var later []*approvals.Approval
		for i := range 5 {
			later = append(later, create("later", models.RiskMedium, now.Add(time.Duration(48+i)*time.Hour), states.Pending, org.ID, ada.ID))
		}
		soonHigh := create("soon high", models.RiskHigh, now.Add(3*time.Hour), states.Pending, org.ID, ada.ID)
		// Not Ada's to decide, not pending, or another organisation's.
		create("bob's", models.RiskCritical, now.Add(time.Minute), states.Pending, org.ID, bob.ID)
		create("decided", models.RiskCritical, now.Add(time.Minute), "approved", org.ID, ada.ID)
		other := testenv.NewOrg(t, s)
		create("elsewhere", models.RiskCritical, now.Add(time.Minute), states.Pending, other.ID, ada.ID)

		in, err := pendingFor(ctx, s, org.ID, ada.ID, now.Add(24*time.Hour), models.Attention, 3)
		require.NoError(t, err)
		require.Len(t, in.Items, 3)
		assert.Equal(t, []string{urgentCritical.ID, soonHigh.ID, later[0].ID},
			[]string{in.Items[0].ID, in.Items[1].ID, in.Items[2].ID}, "the highest risk first, then the earliest expiry")
		assert.Equal(t, 8, in.Total, "counts cover what is not listed")
		assert.Equal(t, map[string]int{models.RiskCritical: 1, models.RiskHigh: 1, models.RiskMedium: 5, models.RiskLow: 1}, in.ByRisk)
		assert.Equal(t, 3, in.DueBefore)

		in, err = pendingFor(ctx, s, org.ID, ada.ID, now.Add(24*time.Hour), models.Newest, 3)
		require.NoError(t, err)
		require.Len(t, in.Items, 3)
		assert.Equal(t, []string{soonHigh.ID, later[4].ID, later[3].ID},
			[]string{in.Items[0].ID, in.Items[1].ID, in.Items[2].ID}, "the newest first")
		assert.Equal(t, 8, in.Total)

		in, err = pendingFor(ctx, s, org.ID, bob.ID, now.Add(24*time.Hour), models.Attention, 10)
		require.NoError(t, err)
		assert.Equal(t, 2, in.Total)
		assert.Equal(t, "bob's", in.Items[0].Title)

		in, err = pendingFor(ctx, s, other.ID, bob.ID, now.Add(24*time.Hour), models.Attention, 10)
		require.NoError(t, err)
		assert.Zero(t, in.Total)
		assert.Empty(t, in.Items)
	})
}

// TestTheInboxFollowsEveryTransition: what waits on a person is read from
// the asked index, in order, and every transition that changes whom a
// request waits on or how urgently moves it there: a reply, a settled
// request, a new due time, a person added.
func TestTheInboxFollowsEveryTransition(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		qs, err := questions.Define([]questions.Input{{Prompt: "Budget", Kind: questions.Number}})
		require.NoError(t, err)
		start := models.Now().Add(time.Hour)
		var cols []*collections.Collection
		for i := range 250 {
			due := start.Add(time.Duration(i) * time.Minute)
			c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: fmt.Sprintf("c%03d", i),
				ExpiresAt: start.Add(72 * time.Hour), Requester: "key_1", RequestedBy: "agent"}, Questions: models.JSON[[]questions.Question]{V: qs},
				Respondents: []string{"a"}, RespondentIDs: []string{"mem_a"}, RequiredResponses: 1,
				DueAt: &due}
			if i < 150 {
				c.Replies.V = []collections.StoredReply{{RespondentID: "mem_a", SubmittedAt: models.Now()}}
			}
			_, err := requests.Insert(ctx, s, collections.Records(s), c, nil)
			require.NoError(t, err)
			cols = append(cols, c)
		}
		titles := func(order models.InboxOrder, limit int, personID string) []string {
			rows, err := collections.Records(s).Waiting(ctx, org.ID, personID, order, limit)
			require.NoError(t, err)
			out := make([]string, len(rows))
			for i, c := range rows {
				out[i] = c.Title
			}
			return out
		}
		title := func(from, to int) []string {
			var out []string
			for i := from; i != to; i += cmp.Compare(to, from) {
				out = append(out, cols[i].Title)
			}
			return out
		}
		assert.Equal(t, title(150, 170), titles(models.Attention, 20, "mem_a"), "the earliest due of those not answered")
		assert.Equal(t, title(249, 229), titles(models.Newest, 20, "mem_a"), "the newest")
		assert.Len(t, titles(models.Attention, 200, "mem_a"), 100, "all there are, when fewer than the limit")
		newest, err := collections.Records(s).WaitingKeys(ctx, org.ID, "mem_a", models.Newest, 20)
		require.NoError(t, err)
		require.Len(t, newest, 20)
		assert.Equal(t, cols[249].ID, newest[0].ID, "the newest waiting ids, newest first")
		assert.Equal(t, cols[230].ID, newest[19].ID)
		first, err := collections.Records(s).WaitingKeys(ctx, org.ID, "mem_a", models.Attention, 20)
		require.NoError(t, err)
		require.Len(t, first, 20)
		assert.Equal(t, cols[150].ID, first[0].ID, "the earliest due first")
		assert.True(t, first[0].DueAt.Equal(*cols[150].DueAt), "with its due time: %v", first[0].DueAt)
		newest, err = collections.Records(s).WaitingKeys(ctx, other.ID, "mem_a", models.Newest, 20)
		require.NoError(t, err)
		assert.Empty(t, newest, "another organisation's ids")
		none, err := collections.Records(s).Waiting(ctx, other.ID, "mem_a", models.Attention, 10)
		require.NoError(t, err)
		assert.Empty(t, none, "another organisation's inbox")

		change := func(c *collections.Collection, apply func(*collections.Collection)) {
			_, err := requests.Persist(ctx, s, collections.Records(s), requests.Change[collections.Collection]{OrganizationID: org.ID, ID: c.ID, Seq: c.Seq + 1,
				Apply: func(rec *collections.Collection) (models.AuditEntry, error) {
					apply(rec)
					return models.AuditEntry{Action: "changed", ActorID: "mem_a", At: models.Now()}, nil
				}})
			require.NoError(t, err)
			c.Seq++
		}
		change(cols[150], func(c *collections.Collection) {
			c.Replies.V = append(c.Replies.V, collections.StoredReply{RespondentID: "mem_a", SubmittedAt: models.Now()})
		})
		change(cols[151], func(c *collections.Collection) { c.Status = states.Cancelled })
		change(cols[249], func(c *collections.Collection) { c.DueAt = &start })
		change(cols[160], func(c *collections.Collection) { c.RespondentIDs = append(c.RespondentIDs, "mem_b") })
		assert.Equal(t, append([]string{cols[249].Title}, title(152, 156)...), titles(models.Attention, 5, "mem_a"),
			"a reply and a settled request leave; a request due sooner moves up")
		assert.Equal(t, []string{cols[160].Title}, titles(models.Attention, 5, "mem_b"), "a person added is asked")

		waiting, err := s.WaitingOn(ctx, org.ID, "mem_a")
		require.NoError(t, err)
		assert.Len(t, waiting[events.RequestCollection], 98)
		assert.True(t, slices.IsSorted(waiting[events.RequestCollection]), "oldest first")
	})
}

// TestTheInboxMigrationFillsTheIndex: requests written before the asked
// indexes carried the inbox's order are in the inbox after the migration,
// each in its place, without those settled or already acted on.
func TestTheInboxMigrationFillsTheIndex(t *testing.T) {
	t.Parallel()
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) {
			db := openBefore(t, kind, "202612050001_inbox_order")
			ctx := context.Background()
			s := models.NewStore(db, testenv.Keys())
			org := testenv.NewOrg(t, s)
			at := models.Now().Add(time.Hour)
			asked := func(table, column, id string, people ...string) {
				for _, p := range people {
					require.NoError(t, db.Table(table).Create(map[string]any{column: id, "person_id": p}).Error)
				}
			}
			approval := func(id, status, risk string, expires time.Duration) {
				require.NoError(t, db.Omit("asked").Create(&approvals.Approval{RequestBase: models.RequestBase{ID: id, OrganizationID: org.ID, Status: status, Title: id,
					Requester: "key_1", RequestedBy: "agent",
					ExpiresAt: at.Add(expires), Seq: 1}, Risk: risk,
					ApproverIDs: models.StringList{"mem_a"}, RequiredApprovals: 1,
				}).Error)
				asked("approval_approvers", "approval_id", id, "mem_a")
			}
			approval("apr_1", states.Pending, models.RiskLow, time.Hour)
			approval("apr_2", states.Pending, models.RiskCritical, time.Hour)
			approval("apr_3", states.Pending, models.RiskHigh, 0)
			approval("apr_4", states.Approved, models.RiskHigh, 0)
			due := at.Add(-30 * time.Minute)
			for _, c := range []*collections.Collection{
				{RequestBase: models.RequestBase{ID: "col_1", Status: states.Open, ExpiresAt: at}},
				{RequestBase: models.RequestBase{ID: "col_2", Status: states.Open, ExpiresAt: at.Add(time.Hour)}, DueAt: &due},
				{RequestBase: models.RequestBase{ID: "col_3", Status: states.Open, ExpiresAt: at}, Replies: models.JSON[[]collections.StoredReply]{V: []collections.StoredReply{{RespondentID: "mem_a"}}}},
				{RequestBase: models.RequestBase{ID: "col_4", Status: states.Complete, ExpiresAt: at}},
			} {
				c.OrganizationID, c.Title, c.RespondentIDs, c.Requester, c.RequestedBy, c.Seq = org.ID, c.ID, models.StringList{"mem_a", "mem_b"}, "key_1", "agent", 1
				require.NoError(t, db.Create(c).Error)
				asked("collection_respondents", "collection_id", c.ID, "mem_a", "mem_b")
			}
			for _, r := range []*reviews.Review{
				{RequestBase: models.RequestBase{ID: "rev_1", Status: states.Open}},
				{RequestBase: models.RequestBase{ID: "rev_2", Status: states.Open}, Verdicts: models.JSON[[]reviews.StoredVerdict]{V: []reviews.StoredVerdict{{ReviewerID: "mem_a"}}}},
			} {
				r.OrganizationID, r.Title, r.ReportID, r.ReviewerIDs, r.ExpiresAt, r.Requester, r.RequestedBy, r.Seq = org.ID, r.ID, "rpt_1", models.StringList{"mem_a"}, at, "key_1", "agent", 1
				require.NoError(t, db.Create(r).Error)
				asked("review_reviewers", "review_id", r.ID, "mem_a")
			}
			require.NoError(t, models.Migrate(db))
			var ranks []int
			require.NoError(t, db.Table("collection_respondents").Distinct().Pluck("risk_rank", &ranks).Error)
			assert.Equal(t, []int{2}, ranks, "a request for information ranks as medium")
			// A migration that failed part way is taken again from the start.
			require.NoError(t, db.Table("migrations").Where("id = ?", "202612050001_inbox_order").Delete(nil).Error)
			require.NoError(t, models.Migrate(db))

			in, err := pendingFor(ctx, s, org.ID, "mem_a", at.Add(30*time.Minute), models.Attention, 10)
			require.NoError(t, err)
			assert.Equal(t, []string{"apr_2", "apr_3", "apr_1"}, idsOf(in.Items, func(a approvals.Approval) string { return a.ID }),
				"the most severe risk, then the earliest expiry")
			assert.Equal(t, 3, in.Total)
			assert.Equal(t, 1, in.DueBefore)
			cols, err := collections.Records(s).Waiting(ctx, org.ID, "mem_a", models.Attention, 10)
			require.NoError(t, err)
			assert.Equal(t, []string{"col_2", "col_1"}, idsOf(cols, func(c collections.Collection) string { return c.ID }),
				"due, else expiring; not the one replied to or the complete one")
			cols, err = collections.Records(s).Waiting(ctx, org.ID, "mem_b", models.Attention, 10)
			require.NoError(t, err)
			assert.Len(t, cols, 3, "another respondent still owes a reply")
			revs, err := reviews.Records(s).Waiting(ctx, org.ID, "mem_a", models.Attention, 10)
			require.NoError(t, err)
			assert.Equal(t, []string{"rev_1"}, idsOf(revs, func(r reviews.Review) string { return r.ID }))
		})
	}
}

func idsOf[T any](rows []T, id func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

// TestWhoHasActedLeavesTheInbox: a request stops waiting on whoever has
// done what it asks, counted as the workflows count: an approver who
// approved a request needing two, whoever stands in for them or whom they
// stand in for, and the requester, who may not decide their own request.
func TestWhoHasActedLeavesTheInbox(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		asBobsDelegate := []models.Via{{Field: "approvers", Kind: models.ViaDelegation, ID: "mem_bob", Name: "Bob"}}
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
			ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "mem_dan", RequestedBy: "Dan"}, Risk: models.RiskLow, RequiredApprovals: 2,
			ApproverIDs: models.StringList{"mem_ada", "mem_bob", "mem_cy", "mem_dan"},
			ApproverVia: models.JSON[map[string][]models.Via]{V: map[string][]models.Via{"mem_cy": asBobsDelegate}},
		}
		_, err := requests.Insert(ctx, s, approvals.Records(s), a, nil)
		require.NoError(t, err)
		waiting := func(person string) bool {
			in, err := pendingFor(ctx, s, org.ID, person, time.Now(), models.Attention, 10)
			require.NoError(t, err)
			return in.Total == 1
		}
		assert.True(t, waiting("mem_ada"))
		assert.True(t, waiting("mem_bob"))
		assert.False(t, waiting("mem_dan"), "the requester may not decide their own request")

		testenv.Transition(t, s, approvals.Records(s), org.ID, a.ID, 1, func(a *approvals.Approval) {
			a.ApprovedBy = models.StringList{"mem_cy"}
			a.ApprovalsSoFar = 1
		})
		assert.True(t, waiting("mem_ada"), "one approval of two: still pending")
		assert.False(t, waiting("mem_cy"), "Cy approved")
		assert.False(t, waiting("mem_bob"), "Cy stood in for Bob")

		c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Budgets",
			ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_1", RequestedBy: "agent"}, RespondentIDs: models.StringList{"mem_bob", "mem_cy"},
			Asked:             models.JSON[[]models.PersonRef]{V: []models.PersonRef{{ID: "mem_bob"}, {ID: "mem_cy", Via: asBobsDelegate}}},
			RequiredResponses: 1}
		_, err = requests.Insert(ctx, s, collections.Records(s), c, nil)
		require.NoError(t, err)
		testenv.Transition(t, s, collections.Records(s), org.ID, c.ID, 1, func(c *collections.Collection) {
			c.Replies.V = []collections.StoredReply{{RespondentID: "mem_bob", SubmittedAt: models.Now()}}
		})
		for _, p := range []string{"mem_bob", "mem_cy"} {
			rows, err := collections.Records(s).Waiting(ctx, org.ID, p, models.Attention, 10)
			require.NoError(t, err)
			assert.Empty(t, rows, "%s: Bob replied, in his own name, for the delegate too", p)
		}
	})
}

// TestKindsWithoutARiskRankAsMedium: a request for information ranks as
// an approval without a risk does, between high and low.
func TestKindsWithoutARiskRankAsMedium(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		qs, err := questions.Define([]questions.Input{{Prompt: "Budget", Kind: questions.Number}})
		require.NoError(t, err)
		c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "c",
			ExpiresAt: models.Now().Add(time.Hour), Requester: "key_1", RequestedBy: "agent"}, Questions: models.JSON[[]questions.Question]{V: qs},
			Respondents: []string{"a"}, RespondentIDs: []string{"mem_a"}, RequiredResponses: 1,
		}
		_, err = requests.Insert(ctx, s, collections.Records(s), c, nil)
		require.NoError(t, err)
		rank := func() int {
			keys, err := collections.Records(s).WaitingKeys(ctx, org.ID, "mem_a", models.Attention, 10)
			require.NoError(t, err)
			require.Len(t, keys, 1)
			return keys[0].RiskRank
		}
		assert.Equal(t, 2, rank(), "medium: critical 0, high 1, medium 2, low 3")
	})
}

// pendingFor is the approvals' part of personID's inbox, as the inbox
// reads it: its first limit approvals in order, and counts over them all.
func pendingFor(ctx context.Context, s *models.Store, orgID, personID string, dueBefore time.Time, order models.InboxOrder, limit int) (inbox, error) {
	items, err := approvals.Records(s).Waiting(ctx, orgID, personID, order, limit)
	if err != nil {
		return inbox{}, err
	}
	counts, err := approvals.Records(s).Counts(ctx, orgID, personID, dueBefore)
	return inbox{Items: items, Counts: counts}, err
}

type inbox struct {
	Items []approvals.Approval
	models.Counts
}
