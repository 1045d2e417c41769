// Package testenv gives tests the real parts they run against: migrated
// SQLite and PostgreSQL databases, and the in-process Temporal server.
package testenv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/models"
)

// DefaultPostgresURL is the machine's local PostgreSQL.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Databases lists the database kinds storage tests run on.
var Databases = []string{"sqlite", "postgres"}

// EachDB runs fn as a subtest on a fresh, migrated SQLite database and on a
// fresh PostgreSQL schema.
func EachDB(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	for _, kind := range Databases {
		t.Run(kind, func(t *testing.T) { fn(t, OpenDB(t, kind)) })
	}
}

// OpenDB returns a fresh migrated database of the given kind, closed and
// removed when the test ends.
func OpenDB(t testing.TB, kind string) *gorm.DB {
	t.Helper()
	var db *gorm.DB
	var err error
	switch kind {
	case "sqlite":
		db, err = models.Open(filepath.Join(t.TempDir(), "assent.db"))
		require.NoError(t, err)
	case "postgres":
		db, err = models.Open(PostgresURL(t))
		require.NoError(t, err)
	default:
		t.Fatalf("unknown database kind %q", kind)
	}
	t.Cleanup(func() { _ = models.Close(db) })
	require.NoError(t, models.Migrate(db))
	return db
}

// PostgresURL creates an empty schema, dropped when the test ends, and
// returns a database URL whose search_path points at it, so tests never see
// each other's rows. It skips the test when PostgreSQL is unreachable,
// unless ASSENT_REQUIRE_POSTGRES=1.
func PostgresURL(t testing.TB) string {
	base := os.Getenv("ASSENT_TEST_DATABASE_URL")
	if base == "" {
		base = DefaultPostgresURL
	}
	admin, err := models.Open(base)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err = models.Ping(ctx, admin)
		cancel()
	}
	if err != nil {
		if os.Getenv("ASSENT_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("PostgreSQL is required (ASSENT_REQUIRE_POSTGRES=1) but unreachable at %s: %v", base, err)
		}
		t.Skipf("PostgreSQL unreachable at %s (set ASSENT_REQUIRE_POSTGRES=1 to fail instead): %v", base, err)
	}
	schema := fmt.Sprintf("t_%d_%d", time.Now().UnixNano(), rand.IntN(1e6))
	require.NoError(t, admin.Exec("CREATE SCHEMA "+schema).Error)
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		_ = models.Close(admin)
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// SecretKey is the secret key tests seal with; a fixed one, so a test that
// runs a second process (or reads a store back) opens what the first sealed.
const SecretKey = "dGVzdCBrZXkgZm9yIGFzc2VudCdzIHRlc3RzIG9ubHk="

// Keys is the test key ring.
func Keys() *secretkey.Ring {
	r, err := secretkey.Parse(SecretKey)
	if err != nil {
		panic(err)
	}
	return r
}
