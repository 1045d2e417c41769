// Package testenv gives tests the real parts they run against: migrated
// SQLite and PostgreSQL databases, and the in-process Temporal server.
package testenv

import (
	"fmt"
	"math/rand/v2"
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
// fresh, migrated PostgreSQL database, the two at once: they share nothing,
// and most of a storage test's time is waiting on its database or the
// workflow engine. fn must not call t.Setenv.
func EachDB(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	for _, kind := range Databases {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			fn(t, OpenDB(t, kind))
		})
	}
}

// OpenDB returns a fresh migrated database of the given kind, closed and
// removed when the test ends.
func OpenDB(t testing.TB, kind string) *gorm.DB {
	t.Helper()
	db, err := models.Open(MigratedURL(t, kind))
	require.NoError(t, err)
	t.Cleanup(func() { _ = models.Close(db) })
	return db
}

// MigratedURL returns the URL of a fresh migrated database of the given
// kind, removed when the test ends: a copy of a template migrated once per
// test binary, which saves each test the migrations (seconds on PostgreSQL).
func MigratedURL(t testing.TB, kind string) string {
	t.Helper()
	switch kind {
	case "sqlite":
		return "sqlite:" + sqliteCopy(t)
	case "postgres":
		return pgServerFor(t).clone(t)
	}
	t.Fatalf("unknown database kind %q", kind)
	return ""
}

// PostgresURL creates an empty schema, dropped when the test ends, and
// returns a database URL whose search_path points at it, so tests never see
// each other's rows; for tests that migrate (or not) themselves. It skips
// the test when PostgreSQL is unreachable, unless ASSENT_REQUIRE_POSTGRES=1.
func PostgresURL(t testing.TB) string {
	t.Helper()
	s := pgServerFor(t)
	schema := fmt.Sprintf("t_%d_%d", time.Now().UnixNano(), rand.IntN(1e6))
	require.NoError(t, s.admin.Exec("CREATE SCHEMA "+schema).Error)
	t.Cleanup(func() { s.admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	u := *s.base
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// PostgresDatabaseURL creates an empty database of its own, dropped when
// the test ends, and returns its URL: for a test that runs a release which
// a migration ends the sessions of (models' endSessionsOfEarlierReleases
// ends those in its own database, which every PostgresURL schema shares).
func PostgresDatabaseURL(t testing.TB) string {
	t.Helper()
	s := pgServerFor(t)
	name := newDatabaseName()
	require.NoError(t, s.admin.Exec("CREATE DATABASE "+name).Error)
	s.dropWhenDone(t, name)
	return s.urlFor(name)
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
