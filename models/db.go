package models

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/assent-hq/assent/internal/tracing"
)

// Now is the clock every record uses: UTC, at the precision both databases
// keep, so a record reads back exactly as it was written.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Open connects to the database named by url: postgres://… or
// postgresql://… for PostgreSQL, sqlite:<path> or a bare path for SQLite.
func Open(url string) (*gorm.DB, error) {
	conf := &gorm.Config{
		NowFunc:        Now,
		TranslateError: true,
		Logger:         logger.Discard,
		// Name the columns a query reads rather than SELECT *: PostgreSQL
		// refuses a statement prepared before a column was added whose
		// result would change, so the previous release's SELECT * fails
		// after a migration adds one (docs/releases.md, "The database").
		QueryFields: true,
	}
	var dialector gorm.Dialector
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		named, err := withApplicationName(url)
		if err != nil {
			return nil, err
		}
		dialector = postgres.Open(named)
	default:
		path := strings.TrimPrefix(url, "sqlite:")
		if path == "" {
			return nil, errors.New("database url is empty")
		}
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, err
			}
		}
		// WAL lets readers run beside the writer; IMMEDIATE transactions take
		// the write lock up front so two writers queue instead of deadlocking.
		dialector = sqlite.Open("file:" + path + "?_journal_mode=WAL&_busy_timeout=10000&_foreign_keys=on&_txlock=immediate")
	}
	db, err := gorm.Open(dialector, conf)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// Statements run inside a trace join it (internal/tracing).
	if err := db.Use(tracing.GORM()); err != nil {
		return nil, err
	}
	if err := registerBeforeEach(db, "assent:in_tx", refuseBesideTx); err != nil {
		return nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	if db.Dialector.Name() == "sqlite" {
		// One writer at a time is SQLite's nature; a small pool keeps
		// lock waits short.
		sqlDB.SetMaxOpenConns(4)
	} else {
		// Keep as many idle as may be open: Go's default of 2 idle made
		// PostgreSQL open a new session for most requests under load.
		sqlDB.SetMaxOpenConns(25)
		sqlDB.SetMaxIdleConns(25)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	}
	return db, nil
}

// registerBeforeEach runs fn before every statement: ahead of the
// transaction GORM opens around a write, and of every read.
func registerBeforeEach(db *gorm.DB, name string, fn func(*gorm.DB)) error {
	cb := db.Callback()
	for _, err := range []error{
		cb.Create().Before("gorm:begin_transaction").Register(name, fn),
		cb.Update().Before("gorm:begin_transaction").Register(name, fn),
		cb.Delete().Before("gorm:begin_transaction").Register(name, fn),
		cb.Query().Before("gorm:query").Register(name, fn),
		cb.Row().Before("gorm:row").Register(name, fn),
		cb.Raw().Before("gorm:raw").Register(name, fn),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// applicationName names Assent's sessions in pg_stat_activity, and tells
// them from those of releases that set none (endSessionsOfEarlierReleases).
const applicationName = "assent"

// withApplicationName is a PostgreSQL url with application_name set,
// unless it names one.
func withApplicationName(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("database url is not a valid postgres:// url")
	}
	q := u.Query()
	if q.Get("application_name") == "" {
		q.Set("application_name", applicationName)
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// Ping checks that the database answers.
func Ping(ctx context.Context, db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// Close releases the connection pool.
func Close(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}
