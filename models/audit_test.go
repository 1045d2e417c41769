package models_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestAuditChainUnderConcurrentWriters: many transitions written at once
// in one organisation leave one chain, no fork and no gap, each hash what
// its entry and the one before give; another organisation's chain is its
// own; changing one past entry breaks the chain at that entry.
func TestAuditChainUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, err := s.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		other, err := s.CreateOrganization(ctx, "Other", "")
		require.NoError(t, err)
		by := models.Actor{ID: "key_1", Name: "agent"}
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := org
				if i%4 == 0 {
					o = other
				}
				f, err := createFlow(ctx, s, o.ID, fmt.Sprintf("job %d", i), by)
				if err == nil {
					err = completeFlow(ctx, s, o.ID, f.ID, by)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.NoError(t, s.VerifyAuditChain(ctx, org.ID))
		require.NoError(t, s.VerifyAuditChain(ctx, other.ID))

		var entries []models.AuditEntry
		require.NoError(t, db.Where("organization_id = ?", org.ID).Order("position").Find(&entries).Error)
		require.Len(t, entries, 48, "24 flows, created and completed")
		assert.EqualValues(t, 48, entries[47].Position)
		require.NoError(t, models.VerifyChain(entries, 1, ""))
		var head models.AuditHead
		require.NoError(t, db.Where("organization_id = ?", org.ID).Take(&head).Error)
		assert.Equal(t, models.AuditHead{OrganizationID: org.ID, Position: 48, Hash: entries[47].EntryHash}, head,
			"each entry inserted is the chain's head")

		// One byte of one past entry changed: the chain names it.
		require.NoError(t, db.Model(&models.AuditEntry{}).Where("id = ?", entries[10].ID).Update("detail", "x").Error)
		err = s.VerifyAuditChain(ctx, org.ID)
		require.Error(t, err)
		assert.Contains(t, err.Error(), entries[10].ID)
		// One removed: the position after it is missing.
		require.NoError(t, db.Where("id = ?", entries[20].ID).Delete(&models.AuditEntry{}).Error)
		entries = append(entries[:20], entries[21:]...)
		err = models.VerifyChain(entries[11:], 12, entries[10].EntryHash)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "position 22 where 21 was due")
	})
}

// TestAuditChainMigrationChainsEarlierEntries: entries written before the
// chain existed are chained by the migration in the order of their times,
// per organisation, and new entries follow on.
func TestAuditChainMigrationChainsEarlierEntries(t *testing.T) {
	t.Parallel()
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) {
			db := openBefore(t, kind, "202611260004_audit_chain")
			at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
			for i, row := range []struct{ org, id string }{{"org_a", "aud_2"}, {"org_b", "aud_3"}, {"org_a", "aud_1"}, {"org_a", "aud_4"}} {
				require.NoError(t, db.Table("audit_entries").Create(map[string]any{"id": row.id, "organization_id": row.org,
					"subject_type": "flow", "subject_id": "flw_" + row.id, "seq": 1, "action": "created", "actor_id": "key_1",
					"actor_name": "agent", "detail": "", "at": at.Add(time.Duration(i%3) * time.Minute)}).Error)
			}
			require.NoError(t, models.Migrate(db))
			s := models.NewStore(db, testenv.Keys())
			ctx := context.Background()
			require.NoError(t, s.VerifyAuditChain(ctx, "org_a"))
			require.NoError(t, s.VerifyAuditChain(ctx, "org_b"))
			var order []string
			require.NoError(t, db.Model(&models.AuditEntry{}).Where("organization_id = ?", "org_a").Order("position").Pluck("id", &order).Error)
			assert.Equal(t, []string{"aud_2", "aud_4", "aud_1"}, order, "by time, then id")

			_, err := createFlow(ctx, s, "org_a", "after", models.Actor{ID: "key_1", Name: "agent"})
			require.NoError(t, err)
			require.NoError(t, s.VerifyAuditChain(ctx, "org_a"), "a new entry follows the migrated ones")
		})
	}
}

// createFlow starts a flow and audits it in one transaction, as the flows
// service does.
func createFlow(ctx context.Context, s *models.Store, orgID, title string, by models.Actor) (*models.Flow, error) {
	f := models.NewFlow(orgID, title, nil, by)
	return f, s.Tx(ctx, func(ctx context.Context) error {
		if err := s.InsertFlow(ctx, f); err != nil {
			return err
		}
		return s.Audit(ctx, models.FlowAudit(f, 1, "created", by, f.CreatedAt))
	})
}

// completeFlow completes a flow under its row lock, audited, with
// flow.completed, as the flows service does.
func completeFlow(ctx context.Context, s *models.Store, orgID, id string, by models.Actor) error {
	return s.Tx(ctx, func(ctx context.Context) error {
		f, err := s.LockFlow(ctx, orgID, id)
		if err != nil {
			return err
		}
		now := models.Now()
		f.Finish(models.FlowCompleted, now)
		if err := s.SaveFlow(ctx, f); err != nil {
			return err
		}
		if err := s.Audit(ctx, models.FlowAudit(f, 2, models.FlowCompleted, by, now)); err != nil {
			return err
		}
		return s.Emit(ctx, &models.Event{OrganizationID: orgID, Kind: "flow.completed", SubjectType: "flow", SubjectID: id,
			Data: models.RawJSON(`{}`), CreatedAt: now})
	})
}

// openBefore opens a fresh database of kind migrated up to the migration
// with id, for a test of what that migration does to rows written before
// it.
func openBefore(t *testing.T, kind, id string) *gorm.DB {
	t.Helper()
	url := filepath.Join(t.TempDir(), "old.db")
	if kind == "postgres" {
		url = testenv.PostgresURL(t)
	}
	db, err := models.Open(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = models.Close(db) })
	require.NoError(t, models.MigrateBefore(db, id))
	return db
}
