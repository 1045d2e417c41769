package testenv

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/models"
)

// TestCopiesAreMigratedAndApart: every test's database is migrated, and
// what one writes the next does not see.
func TestCopiesAreMigratedAndApart(t *testing.T) {
	for _, kind := range Databases {
		t.Run(kind, func(t *testing.T) {
			first, second := OpenDB(t, kind), OpenDB(t, kind)
			for _, db := range []*gorm.DB{first, second} {
				require.NoError(t, models.RequireMigrated(db))
			}
			require.NoError(t, first.Exec("INSERT INTO organizations (id, name, plan, guests_may_approve, max_approval_expiry_seconds) VALUES ('org_1', 'Acme', 'free', false, 0)").Error)
			var n int64
			require.NoError(t, second.Table("organizations").Count(&n).Error)
			assert.Zero(t, n)
		})
	}
}

// TestPostgresURLIsEmpty: PostgresURL is for tests that migrate
// themselves, or test a database that never was.
func TestPostgresURLIsEmpty(t *testing.T) {
	db, err := models.Open(PostgresURL(t))
	require.NoError(t, err)
	defer models.Close(db)
	assert.ErrorContains(t, models.RequireMigrated(db), "assent migrate")
	require.NoError(t, models.Migrate(db))
	require.NoError(t, models.RequireMigrated(db))
}

// BenchmarkFreshDB is what a test's database costs: migrated on its own,
// as before the templates, or copied from the template (cleanups, which
// drop them, run after the timing).
func BenchmarkFreshDB(b *testing.B) {
	for _, kind := range Databases {
		b.Run(kind+"/migrated", func(b *testing.B) {
			for b.Loop() {
				url := "sqlite:" + filepath.Join(b.TempDir(), "assent.db")
				if kind == "postgres" {
					url = PostgresURL(b)
				}
				db, err := models.Open(url)
				require.NoError(b, err)
				require.NoError(b, models.Migrate(db))
				require.NoError(b, models.Close(db))
			}
		})
		b.Run(kind+"/copied", func(b *testing.B) {
			OpenDB(b, kind) // the template, once per binary
			for b.Loop() {
				require.NoError(b, models.Close(OpenDB(b, kind)))
			}
		})
	}
}
