package main

import (
	"context"
	"fmt"
	"io"

	"github.com/assent-hq/assent/models"
)

// runMigrate applies pending database migrations.
func runMigrate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, log, err := parse("migrate", args, stderr)
	if err != nil {
		return err
	}
	db, err := openDB(cfg, log)
	if err != nil {
		return err
	}
	defer models.Close(db)
	if err := models.Migrate(db); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}
