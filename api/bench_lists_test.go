package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

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
			for range 1000 {
				_, err := s.call("POST", "/api/v1/approvals", benchBody, http.StatusCreated)
				require.NoError(b, err)
			}
			for range 200 {
				_, err := s.call("POST", "/api/v1/collections", benchCollectionBody, http.StatusCreated)
				require.NoError(b, err)
			}
			s.settle(b, &models.Approval{}, &models.Collection{})
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
			lists := []struct{ name, key, path string }{
				{"inbox", s.bobToken, "/api/v1/inbox?limit=50"},
				{"inbox-approvals", s.bobToken, "/api/v1/inbox?kind=approval&limit=50"},
				{"inbox-collections", s.bobToken, "/api/v1/inbox?kind=collection&limit=50"},
				{"approvals-pending", s.key, "/api/v1/approvals?status=pending&limit=50"},
				{"admin-members", admin, "/api/v1/admin/members?limit=50"},
			}
			for _, l := range lists {
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
		})
	}
}
