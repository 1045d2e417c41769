package models_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// TestBackgroundQueriesUseTheirIndexes: with a backlog of settled work and
// a few rows due, PostgreSQL plans the outbox dispatcher's query, the
// reconciler's and the gauges' oldest open request as index scans, never a
// scan of the whole table (issue 40; the plans are in docs/benchmarks.md).
func TestBackgroundQueriesUseTheirIndexes(t *testing.T) {
	t.Parallel()
	db := testenv.OpenDB(t, "postgres")
	ctx := context.Background()
	s := models.NewStore(db, testenv.Keys())
	org, err := s.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	// One approval and one event written as the service writes them, then
	// copied into a backlog of 10,000 settled ones, five left due.
	a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Status: "pending", Title: "Pay",
		Requester: "key_1", RequestedBy: "agent",
		ExpiresAt: models.Now().Add(time.Hour)}, Risk: models.RiskMedium,
		ApproverIDs: models.StringList{"mem_1"}, RequiredApprovals: 1,
	}
	_, err = requests.Insert(ctx, s, approvals.Records(s), a, nil)
	require.NoError(t, err)
	require.NoError(t, db.Exec(`INSERT INTO events (id, organization_id, kind, subject_type, subject_id, data, created_at, traceparent)
		VALUES ('evt_0', ?, 'approval.requested', 'approval', ?, '{}', now(), '')`, org.ID, a.ID).Error)
	copyRows(t, db, "approvals", "approvals", 10000, `'id', 'apr_b_' || lpad(g::text, 8, '0'),
		'seq', CASE WHEN g <= 5 THEN 0 ELSE 3 END, 'status', CASE WHEN g <= 5 THEN 'pending' ELSE 'approved' END`)
	copyRows(t, db, "events", "events", 10000, `'id', 'evt_b_' || lpad(g::text, 8, '0'),
		'dispatched_at', CASE WHEN g <= 5 THEN NULL ELSE now() END`)
	require.NoError(t, db.Exec("ANALYZE approvals").Error)
	require.NoError(t, db.Exec("ANALYZE events").Error)

	plans := map[string]string{}
	require.NoError(t, models.ExplainQueries(db, func(name, sql, plan string, err error) {
		require.NoError(t, err)
		if name == "metrics" {
			// Of the gauges' reading, the oldest open approval.
			if !strings.Contains(sql, `"approvals"`) || !strings.Contains(sql, "ORDER BY created_at") {
				return
			}
		}
		if plans[name] == "" {
			plans[name] = plan
		}
	}))
	require.NoError(t, s.Tx(models.ExplainAs(ctx, "dispatcher"), func(ctx context.Context) error {
		_, err := s.TakeUndispatchedEvents(ctx, 50)
		return err
	}))
	_, err = approvals.Records(s).Unowned(models.ExplainAs(ctx, "reconciler"), models.Now(), 50)
	require.NoError(t, err)
	_, err = s.Readings(models.ExplainAs(ctx, "metrics"))
	require.NoError(t, err)
	for _, name := range []string{"dispatcher", "reconciler", "metrics"} {
		plan := plans[name]
		require.NotEmpty(t, plan, name)
		t.Logf("%s:\n%s", name, plan)
		assert.Contains(t, plan, "Index", "%s uses an index", name)
		assert.NotContains(t, plan, "Seq Scan", "%s reads no whole table", name)
	}
}

// TestInboxesReadThePersonsWaitingRows: with a backlog of 20,000 requests
// of each kind, a fifth asking one person and a third of them settled,
// PostgreSQL (the tables analysed and vacuumed, as autovacuum keeps them)
// reads a person's inbox (in either order, and its counts) from
// request_people's waiting rows, never a scan of the requests or of the
// whole table (issue 40).
func TestInboxesReadThePersonsWaitingRows(t *testing.T) {
	t.Parallel()
	db := testenv.OpenDB(t, "postgres")
	ctx := context.Background()
	s := models.NewStore(db, testenv.Keys())
	org, err := s.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
		Requester: "key_1", RequestedBy: "agent",
		ExpiresAt: models.Now().Add(time.Hour)}, Risk: models.RiskMedium,
		ApproverIDs: models.StringList{"mem_hot"}, RequiredApprovals: 1,
	}
	_, err = requests.Insert(ctx, s, approvals.Records(s), a, nil)
	require.NoError(t, err)
	c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Budget",
		Requester: "key_1", RequestedBy: "agent", ExpiresAt: models.Now().Add(time.Hour)}, RespondentIDs: models.StringList{"mem_hot"},
		RequiredResponses: 1}
	_, err = requests.Insert(ctx, s, collections.Records(s), c, nil)
	require.NoError(t, err)
	for _, k := range []struct{ table, kind, prefix, open, settled string }{
		{"approvals", "approval", "apr_b", "pending", "approved"},
		{"collections", "collection", "col_b", "open", "complete"},
	} {
		// g % 3 = 0 settled; g % 5 = 0 asks the hot person, the rest one
		// of 97 others.
		copyRows(t, db, k.table, k.table, 20000, `'id', '`+k.prefix+`_' || lpad(g::text, 8, '0'),
			'status', CASE WHEN g % 3 = 0 THEN '`+k.settled+`' ELSE '`+k.open+`' END`)
		copyRows(t, db, "request_people", "SELECT * FROM request_people WHERE kind = '"+k.kind+"'", 20000,
			`'request_id', '`+k.prefix+`_' || lpad(g::text, 8, '0'), 'waiting', g % 3 <> 0,
			'person_id', CASE WHEN g % 5 = 0 THEN 'mem_hot' ELSE 'mem_' || (g % 97) END,
			'due_at', now() + g * interval '1 minute', 'risk_rank', g % 4`)
		// The hot person's long history: rows of requests settled long
		// ago, which no query of what waits may read (their requests are
		// gone, so only the asked index holds them). It is what makes
		// the waiting rows' index the one to read, as in production.
		copyRows(t, db, "request_people", "SELECT * FROM request_people WHERE kind = '"+k.kind+"' LIMIT 1", 20000,
			`'request_id', '`+k.prefix+`_h' || lpad(g::text, 8, '0'), 'waiting', false, 'person_id', 'mem_hot'`)
		require.NoError(t, db.Exec("ANALYZE "+k.table).Error)
	}
	require.NoError(t, db.Exec("VACUUM ANALYZE request_people").Error)

	plans := map[string][]string{}
	require.NoError(t, models.ExplainQueries(db, func(name, sql, plan string, err error) {
		require.NoError(t, err)
		if strings.Contains(sql, "request_people") {
			plans[name] = append(plans[name], plan)
		}
	}))
	in, err := pendingFor(models.ExplainAs(ctx, "inbox page: the most urgent approvals and counts"), s, org.ID, "mem_hot", models.Now().Add(24*time.Hour), models.Attention, 50)
	require.NoError(t, err)
	assert.Equal(t, 2668, in.Total, "the hot person's open approvals")
	_, err = approvals.Records(s).Waiting(models.ExplainAs(ctx, "inbox of every kind: the newest approvals"), org.ID, "mem_hot", models.Newest, 50)
	require.NoError(t, err)
	newest, err := approvals.Records(s).WaitingKeys(models.ExplainAs(ctx, "inbox of every kind: the newest approvals' ids"), org.ID, "mem_hot", models.Newest, 50)
	require.NoError(t, err)
	assert.Len(t, newest, 50)
	_, err = collections.Records(s).Waiting(models.ExplainAs(ctx, "inbox: the most urgent collections"), org.ID, "mem_hot", models.Attention, 50)
	require.NoError(t, err)
	_, err = approvals.Records(s).WaitingKeys(models.ExplainAs(ctx, "inbox of every kind: where the approvals needing attention sort"), org.ID, "mem_hot", models.Attention, 50)
	require.NoError(t, err)
	_, err = s.WaitingOn(models.ExplainAs(ctx, "delegation: every request waiting"), org.ID, "mem_hot")
	require.NoError(t, err)
	_, _, err = approvals.Records(s).List(models.ExplainAs(ctx, "inbox: a page of approvals"), org.ID, "",
		approvals.Filter{RequestFilter: models.RequestFilter{Status: "pending"}, WaitingOn: "mem_hot"}, models.Page{Limit: 50})
	require.NoError(t, err)
	for _, name := range []string{"inbox page: the most urgent approvals and counts", "inbox of every kind: the newest approvals",
		"inbox of every kind: the newest approvals' ids",
		"inbox: the most urgent collections", "inbox of every kind: where the approvals needing attention sort", "delegation: every request waiting", "inbox: a page of approvals"} {
		require.NotEmpty(t, plans[name], name)
		for _, plan := range plans[name] {
			t.Logf("%s:\n%s", name, plan)
			assert.Contains(t, plan, "_waiting", "%s reads the waiting rows' index", name)
			assert.NotContains(t, plan, "Seq Scan", "%s reads no whole table", name)
		}
	}
}

// copyRows inserts n copies of each row from (a table, or a query over
// table) into table, each with changes (jsonb_build_object's arguments,
// which read g, the copy's number) laid over it. The record is built in a
// LATERAL call: (f(…)).* would call f once per column.
func copyRows(t *testing.T, db *gorm.DB, table, from string, n int, changes string) {
	t.Helper()
	if !strings.HasPrefix(from, "SELECT") {
		from = "SELECT * FROM " + from
	}
	require.NoError(t, db.Exec(fmt.Sprintf(`INSERT INTO %[1]s SELECT c.* FROM (%[2]s) r, generate_series(1, %[3]d) g,
		LATERAL jsonb_populate_record(NULL::%[1]s, to_jsonb(r) || jsonb_build_object(%[4]s)) c`, table, from, n, changes)).Error)
}

// TestNamingPeopleReadsTheirIndexes: in an organisation of 5,000 members
// and 2,000 guests, resolving who a create names (by id, email or display
// name, in any case) reads each table's indexes, never the organisation's
// every row.
func TestNamingPeopleReadsTheirIndexes(t *testing.T) {
	t.Parallel()
	db := testenv.OpenDB(t, "postgres")
	ctx := context.Background()
	s := models.NewStore(db, testenv.Keys())
	org := testenv.NewOrg(t, s)
	require.NoError(t, db.Exec(`INSERT INTO members (id, organization_id, email, name, role, active, created_at, updated_at)
		SELECT 'mem_b' || g, ?, 'm' || g || '@example.com', 'Member ' || g, 'member', TRUE, now(), now() FROM generate_series(1, 5000) g`, org.ID).Error)
	require.NoError(t, db.Exec(`INSERT INTO guests (id, organization_id, email, name, created_at)
		SELECT 'gst_b' || g, ?, 'g' || g || '@example.com', 'Guest ' || g, now() FROM generate_series(1, 2000) g`, org.ID).Error)
	require.NoError(t, db.Exec("VACUUM ANALYZE members").Error)
	require.NoError(t, db.Exec("VACUUM ANALYZE guests").Error)

	var plans []string
	require.NoError(t, models.ExplainQueries(db, func(name, sql, plan string, err error) {
		require.NoError(t, err)
		plans = append(plans, plan)
	}))
	d, err := s.LookUp(models.ExplainAs(ctx, "naming"), org.ID, []string{"mem_b17", "m18@example.com", "member 19", "GUEST 20"})
	require.NoError(t, err)
	require.Len(t, d.Members("member 19"), 1)
	require.Len(t, d.Members("mem_b17"), 1)
	require.NotEmpty(t, plans)
	for _, plan := range plans {
		t.Logf("naming:\n%s", plan)
		assert.NotContains(t, plan, "Seq Scan", "naming people reads no whole table")
	}
}
