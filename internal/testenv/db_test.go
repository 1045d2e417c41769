package testenv

import (
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
