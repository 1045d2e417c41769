package main

import (
	"context"
	"fmt"
	"github.com/assent-hq/assent/internal/config"
	"io"
)

// runMigrate applies pending database migrations.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, log, err := parse("migrate", args, stderr)
	if err != nil {
		return err
	}
	r, err := open(ctx, cfg, log, needs{keys: config.KeyOrDataDir, migrate: true})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	r.Close()
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}
