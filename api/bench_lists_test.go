package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// BenchmarkLists measures the pages people and administrators read most,
// 50 items each, with 1,000 pending approvals and 200 open requests for
// information asking Bob: his inbox (every kind, approvals alone and
// requests for information alone), the
// organisation's pending approvals, and the members an administrator
// pages through. Issue 40's goal is p99 ≤ 20 ms at 16 clients;
// BenchmarkGetApproval in the same run is the baseline of one read.
func BenchmarkLists(b *testing.B) {
	for _, kind := range testenv.Databases {
		b.Run(kind, func(b *testing.B) {
			s := newBenchStack(b, kind)
			var one string
			for range 1000 {
				body, err := s.call("POST", "/api/v1/approvals", benchBody, http.StatusCreated)
				require.NoError(b, err)
				one = createdID(b, body)
			}
			for range 200 {
				_, err := s.call("POST", "/api/v1/collections", benchCollectionBody, http.StatusCreated)
				require.NoError(b, err)
			}
			s.settle(b, &approvals.Approval{}, &collections.Collection{})
			// A database in service has statistics and a visibility map
			// (autovacuum), which index-only scans rely on; tables filled
			// a moment ago have neither, and the plans would show it.
			if kind == "postgres" {
				require.NoError(b, s.uncounted().Exec("VACUUM ANALYZE").Error)
			}
			ctx := context.Background()
			var org models.Organization
			require.NoError(b, s.uncounted().First(&org).Error)
			for i := range 200 {
				_, err := s.store.CreateMember(ctx, org.ID, fmt.Sprintf("m%03d@example.com", i), "", models.RoleMember)
				require.NoError(b, err)
			}
			_, admin, err := s.store.CreateKey(ctx, org.ID, "admin", models.KeyAdmin, nil)
			require.NoError(b, err)
			s.readLists(b, append(s.inboxReads(), benchRead{"get-approval", s.key, "/api/v1/approvals/" + one},
				benchRead{"admin-members", admin, "/api/v1/admin/members?limit=50"}))
		})
	}
}

// BenchmarkListsBacklog is BenchmarkLists' reads with issue 40's backlog:
// 100,000 open requests on PostgreSQL (70,000 approvals and 30,000
// requests for information), Bob asked in 10,000 of them and each of the
// rest asking one of 500 others. The backlog is copied in SQL from one
// request of each kind the API created, so it fills in seconds; its reads
// go through the API as any other. The goals: the inbox of a person asked
// in 10,000 pages in ≤ 50 ms p99, and GET of a request within 20 % of
// BenchmarkLists' (1,000 requests) in the same run.
func BenchmarkListsBacklog(b *testing.B) {
	s := newBenchStack(b, "postgres")
	body, err := s.call("POST", "/api/v1/approvals", benchBody, http.StatusCreated)
	require.NoError(b, err)
	one := createdID(b, body)
	_, err = s.call("POST", "/api/v1/collections", benchCollectionBody, http.StatusCreated)
	require.NoError(b, err)
	s.settle(b, &approvals.Approval{}, &collections.Collection{})
	db := s.uncounted()
	var bob string
	require.NoError(b, db.Raw("SELECT id FROM members WHERE email = 'bob@example.com'").Scan(&bob).Error)
	at := time.Now().UTC()
	for _, k := range []struct {
		table, kind string
		n           int
	}{{"approvals", "approval", 70000}, {"collections", "collection", 30000}} {
		// Ids keep the original's time part and end in the copy's number,
		// so they are well formed and page like the API's.
		id := `left(r.id, length(r.id) - 8) || lpad(g::text, 8, '0')`
		// Each copy's record is built in a LATERAL call: (f(…)).* would
		// call f once per column.
		require.NoError(b, db.Exec(`INSERT INTO `+k.table+` SELECT c.* FROM `+k.table+` r, generate_series(1, ?) g,
			LATERAL jsonb_populate_record(NULL::`+k.table+`, to_jsonb(r) ||
				jsonb_build_object('id', `+id+`, 'expires_at', ?::timestamptz + (g % 20000) * interval '1 minute')) c`, k.n, at).Error)
		require.NoError(b, db.Exec(`INSERT INTO request_people SELECT c.* FROM (SELECT * FROM request_people WHERE kind = ?) r,
			generate_series(1, ?) g, LATERAL jsonb_populate_record(NULL::request_people, to_jsonb(r) ||
				jsonb_build_object('request_id', left(r.request_id, length(r.request_id) - 8) || lpad(g::text, 8, '0'),
					'person_id', CASE WHEN g % 10 = 0 THEN ? ELSE 'mem_' || (g % 500) END,
					'due_at', ?::timestamptz + (g % 20000) * interval '1 minute')) c`, k.kind, k.n, bob, at).Error)
	}
	require.NoError(b, db.Exec("VACUUM ANALYZE").Error)
	var waiting int64
	require.NoError(b, db.Raw(`SELECT COUNT(*) FROM request_people WHERE person_id = ? AND waiting`, bob).Scan(&waiting).Error)
	require.EqualValues(b, 10002, waiting, "Bob is asked in 10,000 copies and the two originals")
	s.readLists(b, append(s.inboxReads(), benchRead{"get-approval", s.key, "/api/v1/approvals/" + one}))
}

// createdID is the id of the request a create answered with.
func createdID(b *testing.B, body []byte) string {
	var created struct{ ID string }
	require.NoError(b, json.Unmarshal(body, &created))
	require.NotEmpty(b, created.ID)
	return created.ID
}

// benchRead is one read a list benchmark measures: its name, the key it is
// read with and its path.
type benchRead struct{ name, key, path string }

// inboxReads are the reads both list benchmarks measure.
func (s *benchStack) inboxReads() []benchRead {
	return []benchRead{
		{"inbox", s.bobToken, "/api/v1/inbox?limit=50"},
		{"inbox-approvals", s.bobToken, "/api/v1/inbox?kind=approval&limit=50"},
		{"inbox-collections", s.bobToken, "/api/v1/inbox?kind=collection&limit=50"},
		{"approvals-pending", s.key, "/api/v1/approvals?status=pending&limit=50"},
	}
}

// readLists measures each read at each number of clients.
func (s *benchStack) readLists(b *testing.B, reads []benchRead) {
	for _, l := range reads {
		for _, clients := range benchClients {
			b.Run(fmt.Sprintf("%s/clients=%d", l.name, clients), func(b *testing.B) {
				before := s.counts.snapshot()
				measure(b, clients, func(int) error {
					_, err := s.callAs(l.key, "GET", l.path, "", http.StatusOK)
					return err
				}, func() {})
				s.counts.report(b, before, b.N)
			})
		}
	}
}
