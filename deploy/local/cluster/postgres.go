package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
)

// The cluster's own PostgreSQL, so restarting it disturbs nothing else on
// the machine. It trusts local connections: it listens on loopback only.
func (c *Cluster) pgData() string { return filepath.Join(c.opts.Dir, "postgres") }

func (c *Cluster) databaseURL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port(Postgres), db)
}

// startPostgres makes the data folder on first start, starts the server
// and creates the three databases.
func (c *Cluster) startPostgres(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(c.pgData(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := c.initdb(); err != nil {
			return err
		}
	}
	if err := c.start(ctx, Postgres); err != nil {
		return err
	}
	db, err := sql.Open("pgx", c.databaseURL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	for _, name := range []string{"assent", "temporal", "temporal_visibility"} {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
				return fmt.Errorf("create database %s: %w", name, err)
			}
		}
	}
	return nil
}

func (c *Cluster) initdb() error {
	bin, err := postgresBin()
	if err != nil {
		return err
	}
	cred, err := postgresDataDir(c.pgData())
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", c.pgData(), "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s (when the harness runs as root, PostgreSQL runs as the postgres user, which must be able to reach %s)", err, out, c.opts.Dir)
	}
	return nil
}

func (c *Cluster) postgresSpec() (spec, error) {
	bin, err := postgresBin()
	if err != nil {
		return spec{}, err
	}
	return spec{
		argv: []string{filepath.Join(bin, "postgres"), "-D", c.pgData(), "-p", strconv.Itoa(c.port(Postgres)),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=300"},
		asPostgres: true,
		stop:       syscall.SIGINT,
		ready: func(ctx context.Context, _ *process) error {
			db, err := sql.Open("pgx", c.databaseURL("postgres"))
			if err != nil {
				return err
			}
			defer db.Close()
			return poll(ctx, func() error { return db.PingContext(ctx) })
		},
	}, nil
}

// postgresBin finds PostgreSQL's server programs: pg_config's bindir, or
// Debian's /usr/lib/postgresql/<version>/bin.
func postgresBin() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := string(out[:len(out)-1])
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		return "", errors.New("PostgreSQL's server programs (initdb, postgres) were not found: install PostgreSQL (Debian: apt-get install postgresql)")
	}
	return filepath.Dir(matches[len(matches)-1]), nil
}

// postgresDataDir makes dir for PostgreSQL's programs to write a data
// folder into: private, and the postgres user's when the harness is root.
// It returns the credential to run those programs with (nil: as the
// harness's user).
func postgresDataDir(dir string) (*syscall.Credential, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cred, err := postgresCredential()
	if err != nil || cred == nil {
		return nil, err
	}
	return cred, os.Chown(dir, int(cred.Uid), int(cred.Gid))
}

// postgresCredential is the postgres user's, when the harness is root;
// nil otherwise (PostgreSQL then runs as the harness's user).
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL needs the postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
