package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/models"
)

// staleAfter is the age past which a test database, or a template no
// longer built, is taken for a killed run's or an old branch's.
const staleAfter = 24 * time.Hour

// templateName names the template after the migrations: their ids and,
// where the source is at hand, migrations.go's text, so that a migration
// edited in place on a branch gets a template of its own.
func templateName() string {
	h := sha256.New()
	for _, id := range models.MigrationIDs() {
		h.Write([]byte(id + "\n"))
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		if src, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "models", "migrations.go")); err == nil {
			h.Write(src)
		}
	}
	return "assent_tpl_" + hex.EncodeToString(h.Sum(nil))[:12]
}

// sqliteTemplate is a migrated SQLite database file's bytes, made once per
// test binary and held in memory, so no file outlives the process.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	sweepTempDirs()
	dir, err := os.MkdirTemp("", "assent-testdb-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "assent.db")
	db, err := models.Open(path)
	if err != nil {
		return nil, err
	}
	err = models.Migrate(db)
	if err == nil {
		// Fold the WAL into the file, which is all a copy takes.
		err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error
	}
	if cerr := models.Close(db); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// sweepTempDirs removes template directories left by killed runs.
func sweepTempDirs() {
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), "assent-testdb-*"))
	for _, dir := range old {
		if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > staleAfter {
			_ = os.RemoveAll(dir)
		}
	}
}

// sqliteCopy writes a copy of the migrated template into the test's
// temporary directory and returns its path.
func sqliteCopy(t testing.TB) string {
	t.Helper()
	raw, err := sqliteTemplate()
	require.NoError(t, err, "migrating the SQLite template")
	path := filepath.Join(t.TempDir(), "assent.db")
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	return path
}

// pgServer is the tests' PostgreSQL server: an admin pool on the database
// ASSENT_TEST_DATABASE_URL names, shared by the test binary's tests.
type pgServer struct {
	base     *url.URL
	admin    *gorm.DB
	template string
	ready    func() error
}

// errUnreachable marks a server the tests skip for.
var errUnreachable = errors.New("PostgreSQL unreachable")

var pgConnect = sync.OnceValues(func() (*pgServer, error) {
	raw := os.Getenv("ASSENT_TEST_DATABASE_URL")
	if raw == "" {
		raw = DefaultPostgresURL
	}
	base, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	admin, err := models.Open(raw)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err = models.Ping(ctx, admin)
		cancel()
	}
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", errUnreachable, raw, err)
	}
	s := &pgServer{base: base, admin: admin, template: templateName()}
	s.ready = sync.OnceValue(s.prepare)
	return s, nil
})

// pgServerFor returns the server, skipping the test when it is unreachable
// unless ASSENT_REQUIRE_POSTGRES=1.
func pgServerFor(t testing.TB) *pgServer {
	t.Helper()
	s, err := pgConnect()
	if errors.Is(err, errUnreachable) {
		if os.Getenv("ASSENT_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("PostgreSQL is required (ASSENT_REQUIRE_POSTGRES=1) but %v", err)
		}
		t.Skipf("%v (set ASSENT_REQUIRE_POSTGRES=1 to fail instead)", err)
	}
	require.NoError(t, err)
	return s
}

// urlFor is the base URL naming the database name, in whose public
// schema the migrations are.
func (s *pgServer) urlFor(name string) string {
	u := *s.base
	u.Path = "/" + name
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	return u.String()
}

// prepare runs once per test binary: it drops killed runs' test databases
// and makes sure the template exists.
func (s *pgServer) prepare() error {
	var names []string
	if err := s.admin.Raw(`SELECT datname FROM pg_database WHERE datname LIKE 'assent\_t\_%'`).Scan(&names).Error; err != nil {
		return err
	}
	for _, name := range names {
		nanos, err := strconv.ParseInt(strings.Split(name, "_")[2], 10, 64)
		if err == nil && time.Since(time.Unix(0, nanos)) > staleAfter {
			s.admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		}
	}
	return s.ensureTemplate()
}

func (s *pgServer) exists(name string) (bool, error) {
	var n int64
	err := s.admin.Raw("SELECT count(*) FROM pg_database WHERE datname = ?", name).Scan(&n).Error
	return n > 0, err
}

// templateLock is the advisory lock under which a template is built, as
// several test binaries start at once.
const templateLock = 0x61737365 // "asse"

// ensureTemplate builds the template unless it exists. It is built under
// another name and renamed once migrated and sealed, so a run killed
// halfway leaves only a _building database, which the next build drops.
func (s *pgServer) ensureTemplate() error {
	if ok, err := s.exists(s.template); ok || err != nil {
		return err
	}
	ctx := context.Background()
	sqlDB, err := s.admin.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", templateLock); err != nil {
		return err
	}
	defer conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", templateLock) //nolint:errcheck
	if ok, err := s.exists(s.template); ok || err != nil {
		return err
	}
	exec := func(sql string) error { _, err := conn.ExecContext(ctx, sql); return err }

	// Only the lock's holder builds, so every _building is a dead run's;
	// other templates over a day old are likely old branches' (one still
	// in use is built again).
	var old []string
	if err := s.admin.Raw(`SELECT datname FROM pg_database WHERE datname LIKE 'assent\_tpl\_%' AND (datname LIKE '%\_building'
		OR NOT datistemplate OR COALESCE(shobj_description(oid, 'pg_database'), '') < ?)`,
		strconv.FormatInt(time.Now().Add(-staleAfter).Unix(), 10)).Scan(&old).Error; err != nil {
		return err
	}
	for _, name := range old {
		if err := exec("ALTER DATABASE " + name + " IS_TEMPLATE false"); err != nil {
			return err
		}
		if err := exec("DROP DATABASE " + name + " WITH (FORCE)"); err != nil {
			return err
		}
	}

	building := s.template + "_building"
	if err := exec("CREATE DATABASE " + building); err != nil {
		return err
	}
	db, err := models.Open(s.urlFor(building))
	if err != nil {
		return err
	}
	err = models.Migrate(db)
	if cerr := models.Close(db); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("migrate the template: %w", err)
	}
	// No connections: a template is copied only while no one is on it.
	if err := exec("ALTER DATABASE " + building + " WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return err
	}
	if err := exec(fmt.Sprintf("COMMENT ON DATABASE %s IS '%d'", building, time.Now().Unix())); err != nil {
		return err
	}
	// The migration's sessions may take a moment to end after Close.
	return retryInUse(func() error { return exec("ALTER DATABASE " + building + " RENAME TO " + s.template) })
}

// retryInUse retries fn for a few seconds while PostgreSQL says the
// database is being accessed by other users.
func retryInUse(fn func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := fn()
		if pgCode(err) != "55006" || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pgCode(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code
	}
	return ""
}

// clone creates a database from the template, dropped when the test ends,
// and returns its URL.
func (s *pgServer) clone(t testing.TB) string {
	t.Helper()
	require.NoError(t, s.ready(), "preparing the PostgreSQL template")
	name := newDatabaseName()
	// The server's default strategy: on PostgreSQL 15 WAL_LOG, 2–4 times
	// as fast here as FILE_COPY, whose two forced checkpoints wait on every
	// other test's writes (docs/benchmarks.md).
	create := func() error {
		return s.admin.Exec("CREATE DATABASE " + name + " TEMPLATE " + s.template).Error
	}
	err := retryInUse(create)
	if pgCode(err) == "3D000" {
		// Dropped as stale by another binary since this one checked.
		if err = s.ensureTemplate(); err == nil {
			err = retryInUse(create)
		}
	}
	require.NoError(t, err)
	s.dropWhenDone(t, name)
	return s.urlFor(name)
}

// newDatabaseName names a test's database with the time it was made,
// which prepare reads to drop those of killed runs.
func newDatabaseName() string {
	return fmt.Sprintf("assent_t_%d_%d", time.Now().UnixNano(), rand.IntN(1e6))
}

// dropWhenDone drops the test's database name when t ends.
func (s *pgServer) dropWhenDone(t testing.TB, name string) {
	t.Cleanup(func() { s.admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
}
