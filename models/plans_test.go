package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestBackgroundQueriesUseTheirIndexes: with a backlog of settled work and
// a few rows due, PostgreSQL plans the outbox dispatcher's query and the
// reconciler's as index scans, never a scan of the whole table (issue 40;
// the plans are in docs/benchmarks.md).
func TestBackgroundQueriesUseTheirIndexes(t *testing.T) {
	db := testenv.OpenDB(t, "postgres")
	ctx := context.Background()
	s := models.NewStore(db, testenv.Keys())
	org, err := s.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	// One approval and one event written as the service writes them, then
	// copied into a backlog of 10,000 settled ones, five left due.
	a := &models.Approval{OrganizationID: org.ID, Status: "pending", Title: "Pay", Risk: models.RiskMedium,
		ApproverIDs: models.StringList{"mem_1"}, RequiredApprovals: 1, Requester: "key_1", RequestedBy: "agent",
		ExpiresAt: models.Now().Add(time.Hour)}
	_, err = s.Approvals().Create(ctx, a, nil)
	require.NoError(t, err)
	require.NoError(t, db.Exec(`INSERT INTO events (id, organization_id, kind, subject_type, subject_id, data, created_at, traceparent)
		VALUES ('evt_0', ?, 'approval.requested', 'approval', ?, '{}', now(), '')`, org.ID, a.ID).Error)
	copyRows := func(table, prefix, changed string) {
		require.NoError(t, db.Exec(`INSERT INTO `+table+` SELECT (jsonb_populate_record(NULL::`+table+`, to_jsonb(r) ||
			jsonb_build_object('id', '`+prefix+`_' || lpad(g::text, 8, '0'))`+changed+`)).* FROM `+table+` r, generate_series(1, 10000) g`).Error)
	}
	copyRows("approvals", "apr_b", `|| jsonb_build_object('seq', CASE WHEN g <= 5 THEN 0 ELSE 3 END, 'status', CASE WHEN g <= 5 THEN 'pending' ELSE 'approved' END)`)
	copyRows("events", "evt_b", `|| jsonb_build_object('dispatched_at', CASE WHEN g <= 5 THEN NULL ELSE now() END)`)
	require.NoError(t, db.Exec("ANALYZE approvals").Error)
	require.NoError(t, db.Exec("ANALYZE events").Error)

	plans := map[string]string{}
	require.NoError(t, models.ExplainQueries(db, func(name, _, plan string, err error) {
		require.NoError(t, err)
		if plans[name] == "" {
			plans[name] = plan
		}
	}))
	_, err = s.DispatchEvents(models.ExplainAs(ctx, "dispatcher"), 50)
	require.NoError(t, err)
	_, err = s.Approvals().Unowned(models.ExplainAs(ctx, "reconciler"), models.Now(), 50)
	require.NoError(t, err)
	for _, name := range []string{"dispatcher", "reconciler"} {
		plan := plans[name]
		require.NotEmpty(t, plan, name)
		t.Logf("%s:\n%s", name, plan)
		assert.Contains(t, plan, "Index", "%s uses an index", name)
		assert.NotContains(t, plan, "Seq Scan", "%s reads no whole table", name)
	}
}
