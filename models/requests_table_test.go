package models_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
)

// requestRows reads the rows of the requests table by id.
func requestRows(t *testing.T, db *gorm.DB) map[string]models.Request {
	t.Helper()
	var rows []models.Request
	require.NoError(t, db.Find(&rows).Error)
	out := map[string]models.Request{}
	for _, r := range rows {
		out[r.ID] = r
	}
	return out
}

// TestTheRequestsMigrationCopiesEveryKind: the requests of every kind made
// before the requests table are in it after the migration, each with its
// kind, status, risk and when and by whom it settled, and a person's
// history lists them; a migration that failed part way is taken again.
func TestTheRequestsMigrationCopiesEveryKind(t *testing.T) {
	t.Parallel()
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) {
			db := openBefore(t, kind, "202612100001_requests")
			ctx := context.Background()
			s := models.NewStore(db, testenv.Keys())
			org := testenv.NewOrg(t, s)
			created := models.Now().Add(-time.Hour)
			decided := created.Add(10 * time.Minute)
			last := created.Add(20 * time.Minute)
			ada, flow, ext := "ada@example.com", "flw_1", "job-7"
			base := func(id, status string) models.RequestBase {
				return models.RequestBase{ID: id, OrganizationID: org.ID, Status: status, Title: "t " + id, ExpiresAt: created.Add(2 * time.Hour),
					Requester: "mem_a", RequestedBy: "agent", Seq: 2, CreatedAt: created, UpdatedAt: last}
			}
			for _, a := range []*approvals.Approval{
				{RequestBase: base("apr_open", states.Pending), Risk: models.RiskHigh},
				{RequestBase: base("apr_decided", states.Approved), Risk: models.RiskCritical, DecidedAt: &decided, DecidedBy: &ada},
				{RequestBase: base("apr_expired", states.Expired), Risk: models.RiskLow},
			} {
				a.ApproverIDs, a.RequiredApprovals = models.StringList{"mem_b"}, 1
				a.FlowID, a.ExternalID = &flow, &ext
				require.NoError(t, db.Omit("asked").Create(a).Error) // a column added later
			}
			require.NoError(t, db.Create(&collections.Collection{RequestBase: base("col_done", states.Complete),
				RespondentIDs: models.StringList{"mem_b"}, RequiredResponses: 1, SettledAt: &decided}).Error)
			require.NoError(t, db.Create(&reviews.Review{RequestBase: base("rev_open", states.Open),
				ReportID: "rpt_1", ReviewerIDs: models.StringList{"mem_b"}, RequiredApprovals: 1}).Error)

			require.NoError(t, models.Migrate(db))
			require.NoError(t, db.Table("migrations").Where("id = ?", "202612100001_requests").Delete(nil).Error)
			require.NoError(t, models.Migrate(db), "taken again")

			rows := requestRows(t, db)
			require.Len(t, rows, 5, "every kind's requests, once")
			same := func(want time.Time, got *time.Time, msg string) {
				t.Helper()
				if assert.NotNil(t, got, msg) {
					assert.True(t, want.Equal(*got), "%s: %s, not %s", msg, want, *got)
				}
			}
			open := rows["apr_open"]
			assert.Equal(t, events.RequestApproval, open.Kind)
			assert.Equal(t, states.Pending, open.Status)
			assert.Equal(t, models.RiskHigh, open.Risk)
			assert.Equal(t, org.ID, open.OrganizationID)
			assert.Equal(t, "t apr_open", open.Title)
			assert.Equal(t, "mem_a", open.Requester)
			assert.Equal(t, 2, open.Seq)
			assert.Equal(t, &flow, open.FlowID)
			assert.Equal(t, &ext, open.ExternalID)
			assert.True(t, created.Equal(open.CreatedAt) && last.Equal(open.UpdatedAt), "the record's own times")
			assert.Nil(t, open.SettledAt, "still open")
			same(decided, rows["apr_decided"].SettledAt, "decided")
			assert.Equal(t, &ada, rows["apr_decided"].SettledBy)
			same(last, rows["apr_expired"].SettledAt, "expired: at its last write")
			assert.Nil(t, rows["apr_expired"].SettledBy)
			assert.Equal(t, events.RequestCollection, rows["col_done"].Kind)
			assert.Empty(t, rows["col_done"].Risk)
			same(decided, rows["col_done"].SettledAt, "completed")
			assert.Equal(t, events.RequestReview, rows["rev_open"].Kind)
			assert.Nil(t, rows["rev_open"].SettledAt)

			made, _, err := s.SettledFor(ctx, org.ID, "mem_a", models.HistoryFilter{Role: models.RoleMade}, models.Page{Limit: 10})
			require.NoError(t, err)
			assert.Equal(t, []string{"apr_expired", "col_done", "apr_decided"}, idsOf(made, func(r models.Settled) string { return r.ID }),
				"the most recently settled first, ties newest id first")
		})
	}
}

// TestATransitionWritesTheRowOnlyWhenItChangesWhatTheRowHolds: a create
// writes the request's row; a transition that changes only its sequence
// and time (the first, a reminder) leaves it; the one that settles it
// writes it; one after that keeps the time it settled.
func TestATransitionWritesTheRowOnlyWhenItChangesWhatTheRowHolds(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay", Requester: "key_1", RequestedBy: "agent",
			ExpiresAt: time.Now().Add(time.Hour).UTC()}, Risk: models.RiskHigh, ApproverIDs: models.StringList{"mem_ada"}, RequiredApprovals: 1}
		_, err := requests.Insert(ctx, s, approvals.Records(s), a, nil)
		require.NoError(t, err)
		made := requestRows(t, db)[a.ID]
		assert.Equal(t, states.Pending, made.Status)
		assert.Equal(t, models.RiskHigh, made.Risk)

		testenv.Transition(t, s, approvals.Records(s), org.ID, a.ID, 1, func(*approvals.Approval) {})
		assert.Equal(t, made, requestRows(t, db)[a.ID], "the first transition changed nothing the row holds")

		testenv.Transition(t, s, approvals.Records(s), org.ID, a.ID, 2, func(a *approvals.Approval) { a.Status = states.Expired })
		settled := requestRows(t, db)[a.ID]
		assert.Equal(t, states.Expired, settled.Status)
		assert.Equal(t, 2, settled.Seq)
		require.NotNil(t, settled.SettledAt)

		testenv.Transition(t, s, approvals.Records(s), org.ID, a.ID, 3, func(*approvals.Approval) {})
		assert.Equal(t, settled, requestRows(t, db)[a.ID], "a transition after it settled keeps when it settled")
	})
}

// TestARecordAnEarlierVersionMadeGetsItsRowWhenItSettles: a record made
// without a row of the requests table (by 0.1.x, before the table) gets
// one from the transition that settles it, the only one a history reads;
// one that changes nothing the row holds writes none. A record taken back
// takes its row with it.
func TestARecordAnEarlierVersionMadeGetsItsRowWhenItSettles(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		approval := func(title string) *approvals.Approval {
			return &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: title, Requester: "key_1", RequestedBy: "agent",
				ExpiresAt: time.Now().Add(time.Hour).UTC()}, Risk: models.RiskLow, ApproverIDs: models.StringList{"mem_ada"}, RequiredApprovals: 1}
		}
		// As 0.1.x wrote them: the record alone.
		old := func(id string) string {
			a := approval(id)
			a.ID, a.Status, a.CreatedAt, a.UpdatedAt = id, states.Pending, models.Now(), models.Now()
			require.NoError(t, db.Create(a).Error)
			return id
		}
		quiet, settles := old("apr_01quiet"), old("apr_01settles")
		testenv.Transition(t, s, approvals.Records(s), org.ID, quiet, 1, func(*approvals.Approval) {})
		assert.NotContains(t, requestRows(t, db), quiet, "a transition that changes nothing the row holds writes none")
		testenv.Transition(t, s, approvals.Records(s), org.ID, settles, 1, func(a *approvals.Approval) { a.Status = states.Expired })
		row := requestRows(t, db)[settles]
		assert.Equal(t, states.Expired, row.Status, "the transition that settles it gives it its row")
		assert.NotNil(t, row.SettledAt)

		unstarted := approval("taken back")
		_, err := requests.Insert(ctx, s, approvals.Records(s), unstarted, nil)
		require.NoError(t, err)
		assert.Contains(t, requestRows(t, db), unstarted.ID)
		_, err = requests.TakeBack(ctx, s, approvals.Records(s), org.ID, unstarted.ID)
		require.NoError(t, err)
		assert.NotContains(t, requestRows(t, db), unstarted.ID, "taken back with its record")
	})
}

// TestAKindsListTakesOnlyItsOwnFilterAndAnUnknownKindHasNoPage: a filter
// of one kind listing another's records is refused, not read as SQL of the
// wrong table; a row of a kind this release does not know (written by a
// later one) has no page and is named as it is, rather than failing.
func TestAKindsListTakesOnlyItsOwnFilterAndAnUnknownKindHasNoPage(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		_, _, err := collections.Records(s).List(ctx, org.ID, "", approvals.Filter{WaitingOn: "mem_ada"}, models.Page{Limit: 10})
		require.Error(t, err)
		_, _, err = approvals.Records(s).List(ctx, org.ID, "", reviews.Filter{ReportID: "rpt_1"}, models.Page{Limit: 10})
		require.Error(t, err)
		_, _, err = reviews.Records(s).List(ctx, org.ID, "", reviews.Filter{ReportID: "rpt_1"}, models.Page{Limit: 10})
		require.NoError(t, err)
		_, _, err = collections.Records(s).List(ctx, org.ID, "", models.RequestFilter{Status: states.Open}, models.Page{Limit: 10})
		require.NoError(t, err, "what every kind has lists any kind")
	})
	assert.Equal(t, "/reviews/rev_1", models.RequestPage(events.RequestReview, "rev_1"))
	assert.Empty(t, models.RequestPage("poll", "pol_1"))
	assert.Equal(t, "request for information", requests.NounOf(events.RequestCollection))
	assert.Equal(t, "poll", requests.NounOf("poll"))
}

// TestTheApprovalAskedMigrationNamesThePeople: approvals made before an
// approval kept the people it asks are named after the migration as the
// directory had them then, and a renamed approver later keeps the name
// they were asked by; an approval a process of the previous release
// writes during a rolling upgrade, without them, is read with them.
func TestTheApprovalAskedMigrationNamesThePeople(t *testing.T) {
	t.Parallel()
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) {
			db := openBefore(t, kind, "202612130001_approval_asked")
			ctx := context.Background()
			s := models.NewStore(db, testenv.Keys())
			p := testenv.NewPeople(t, s, "agent")
			write := func(id string) {
				require.NoError(t, db.Omit("asked").Create(&approvals.Approval{RequestBase: models.RequestBase{ID: id, OrganizationID: p.ID,
					Status: states.Pending, Title: id, ExpiresAt: models.Now().Add(time.Hour), Requester: "key_1", RequestedBy: "agent", Seq: 1},
					Risk: models.RiskLow, RequiredApprovals: 1, ApproverIDs: models.StringList{p.Bob.ID(), p.Gus.ID(), "gst_gone"}}).Error)
			}
			write("apr_before")
			require.NoError(t, models.Migrate(db))
			write("apr_during") // by a process of the previous release

			testenv.ChangeMember(t, s, p.ID, p.Bob.ID(), func(m *models.Member) { m.Name = "Robert" })
			want := []models.PersonRef{
				{ID: p.Bob.ID(), Name: "Bob", Email: "bob@example.com", Kind: models.ApproverMember},
				{ID: p.Gus.ID(), Name: "Gus", Email: "gus@partner.example", Kind: models.ApproverGuest},
				{ID: "gst_gone", Kind: models.ApproverGuest},
			}
			before, err := approvals.Records(s).Get(ctx, p.ID, "apr_before")
			require.NoError(t, err)
			assert.Equal(t, want, before.ResolvedApprovers, "as the directory had them at the migration; one gone by id")
			during, err := approvals.Records(s).Get(ctx, p.ID, "apr_during")
			require.NoError(t, err)
			want[0].Name = "Robert"
			assert.Equal(t, want, during.ResolvedApprovers, "one written without them is named when read")
		})
	}
}

// TestAColumnAddedBreaksNoSessionsRead: a session of a release that reads
// approvals with SELECT * and sets no application_name (0.2.0) holds a
// statement PostgreSQL refuses (0A000, which that release answers with a
// 500) once a column is added; the migration adding approvals.asked ends
// that session instead, so its next read fails as a dropped connection
// does. This release's sessions name the columns they read: they are kept,
// and read on through that migration and through a column a later release
// adds.
func TestAColumnAddedBreaksNoSessionsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A database of its own: the migration ends sessions in all of it.
	url := testenv.PostgresDatabaseURL(t)
	db, err := models.Open(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = models.Close(db) })
	sqlDB, err := db.DB()
	require.NoError(t, err)
	sqlDB.SetMaxOpenConns(1) // one session, to see it kept
	require.NoError(t, models.MigrateBefore(db, "202612130001_approval_asked"))

	earlier, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = earlier.Close(ctx) })
	readAll := func() error {
		rows, err := earlier.Query(ctx, "SELECT * FROM approvals")
		if err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	}
	require.NoError(t, readAll())
	session := func() (pid int) {
		require.NoError(t, db.Raw("SELECT pg_backend_pid()").Scan(&pid).Error)
		return pid
	}
	before := session()

	require.NoError(t, models.Migrate(db))
	err = readAll()
	require.Error(t, err, "the earlier release's session was ended")
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		assert.NotEqual(t, "0A000", pgErr.Code, "%v", err)
	}
	assert.Equal(t, before, session(), "this release's session is kept")

	var recs []approvals.Approval
	require.NoError(t, db.Find(&recs).Error)
	require.NoError(t, db.Exec("ALTER TABLE approvals ADD COLUMN of_a_later_release text").Error)
	assert.NoError(t, db.Find(&recs).Error, "a read prepared before a column was added")
	assert.Equal(t, before, session())
}

// TestAFreshDatabaseEndsNoSessions: migrating a database made from nothing
// ends no one's sessions, not even those that set no application_name: no
// earlier release can have run on it.
func TestAFreshDatabaseEndsNoSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testenv.PostgresDatabaseURL(t)
	other, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close(ctx) })
	db, err := models.Open(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = models.Close(db) })
	require.NoError(t, models.Migrate(db))
	assert.NoError(t, other.Ping(ctx), "a session without an application_name, kept")
}
