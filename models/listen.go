package models

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// changesChannel is the PostgreSQL channel a record's change is relayed on
// from the process that made it to the others (long-polls held by one
// `assent serve` on a request settled by the worker, or by another serve).
const changesChannel = "assent_changes"

// relayTimeout bounds a change's NOTIFY: a hint, not worth holding up the
// write it follows.
const relayTimeout = 2 * time.Second

// RelaysChanges reports whether the processes sharing the database tell
// each other of changes (PostgreSQL's NOTIFY); without it (SQLite) they
// learn of one another's only by reading.
func (c *core) RelaysChanges() bool { return c.db.Dialector.Name() == "postgres" }

// relayChanges makes the hub tell other processes of each change on
// PostgreSQL, after its commit; SQLite has no channel, so there they poll.
func (c *core) relayChanges() {
	if !c.RelaysChanges() {
		return
	}
	c.changes.Relay(func(id string) {
		ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
		defer cancel()
		// A lost hint costs only the poll's delay; the write has committed.
		_ = c.db.WithContext(ctx).Exec("SELECT pg_notify(?, ?)", changesChannel, id).Error
	})
}

// Listen passes the changes other processes relay to this process's hub,
// until ctx ends; on SQLite it returns at once. A dropped connection is
// reopened after a pause, the watchers' poll covering the gap.
func (s *Store) Listen(ctx context.Context, log *slog.Logger) {
	if !s.RelaysChanges() {
		return
	}
	for ctx.Err() == nil {
		err := s.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		log.Warn("listening for changes failed; long-polls rely on polling until it is back", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// listen holds one of the pool's connections LISTENing on changesChannel
// and passes what it hears to the hub.
func (s *Store) listen(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		sc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("listen: a %T is no pgx connection", driverConn)
		}
		// Closed when done, the connection leaves the pool instead of
		// going on listening there.
		defer sc.Close()
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+changesChannel); err != nil {
			return err
		}
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				return err
			}
			s.changes.Heard(n.Payload)
		}
	})
}
