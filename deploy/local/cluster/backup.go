package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

// A backup as docs/operations.md takes one: a physical base backup of the
// whole PostgreSQL cluster (Assent's and Temporal's databases at one
// instant), taken while everything runs, and the report files copied
// after it. It holds no secret key: that is kept apart.
const (
	backupPostgres = "postgres"
	backupBlobs    = "blobs"
)

// Backup writes a backup of the cluster running from dir into dest, which
// must not exist: pg_basebackup with its WAL streamed (so the copy is
// consistent on its own), then the report files.
func Backup(ctx context.Context, dir, dest string) error {
	c := &Cluster{opts: Options{Dir: dir}}
	if err := c.loadState(); err != nil {
		return err
	}
	if c.state.Ports[Postgres] == 0 {
		return fmt.Errorf("backup: %s holds no cluster (no cluster.json with its ports)", dir)
	}
	if _, err := os.Stat(dest); err == nil {
		return fmt.Errorf("backup: %s already exists", dest)
	}
	bin, err := postgresBin()
	if err != nil {
		return err
	}
	if err := mkdirFor(dest); err != nil {
		return err
	}
	// The copy is the server's to start from.
	data := filepath.Join(dest, backupPostgres)
	cred, err := postgresDataDir(data)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "pg_basebackup"), "-h", "127.0.0.1", "-p", strconv.Itoa(c.port(Postgres)),
		"-U", "postgres", "-D", data, "-Fp", "-X", "stream", "--checkpoint=fast", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_basebackup: %w: %s", err, out)
	}
	// After the databases: every file a backed-up version names is
	// already stored (report files are written before their version).
	return copyTree(ctx, filepath.Join(c.opts.Dir, "blobs"), filepath.Join(dest, backupBlobs))
}

// Restore makes dir, which must not exist, a cluster resumed from a
// backup: its PostgreSQL data and report files are the backup's, and its
// secret key, first keys (init.json) and ports are those of the backed-up
// cluster, read from keys, that cluster's folder or a copy of its
// cluster.json and init.json kept apart from backups. Start on dir then
// brings it up where the backed-up one ran (stop that one first): at its
// public address, which decision tokens name as their issuer, and with
// Temporal's services where its restored membership table says they are.
func Restore(ctx context.Context, backup, dir, keys string) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("restore: %s already exists; restore into a new folder", dir)
	}
	old := &Cluster{opts: Options{Dir: keys}}
	if err := old.loadState(); err != nil {
		return err
	}
	if old.state.SecretKey == "" {
		return fmt.Errorf("restore: %s holds no secret key (cluster.json), which opens the secrets in the backup", keys)
	}
	init, err := os.ReadFile(old.InitPath())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, err := os.Stat(filepath.Join(backup, backupPostgres, "PG_VERSION")); err != nil {
		return fmt.Errorf("restore: %s holds no PostgreSQL base backup: %w", backup, err)
	}
	if err := mkdirFor(dir); err != nil {
		return err
	}
	// cp -a keeps the owner (the postgres user) and the data folder's mode.
	if err := copyTree(ctx, filepath.Join(backup, backupPostgres), filepath.Join(dir, "postgres")); err != nil {
		return err
	}
	if err := copyTree(ctx, filepath.Join(backup, backupBlobs), filepath.Join(dir, "blobs")); err != nil {
		return err
	}
	c := &Cluster{opts: Options{Dir: dir}, state: State{Ports: old.state.Ports, PIDs: map[string]int{}, SecretKey: old.state.SecretKey}}
	if init != nil {
		if err := os.WriteFile(c.InitPath(), init, 0o600); err != nil {
			return err
		}
	}
	return c.saveState()
}

// mkdirFor makes dir reachable by the postgres user when the harness is
// root (a private parent would stop its programs).
func mkdirFor(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755)
}

// copyTree copies the file or folder from to to, keeping modes and times.
func copyTree(ctx context.Context, from, to string) error {
	if out, err := exec.CommandContext(ctx, "cp", "-a", from, to).CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s to %s: %w: %s", from, to, err, out)
	}
	return nil
}
