package models

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// MigrateBefore applies the migrations before the one with id, for tests
// of what a migration does to rows written before it.
func MigrateBefore(db *gorm.DB, id string) error {
	for i, m := range migrations {
		if m.ID == id {
			return gormigrate.New(db, gormigrate.DefaultOptions, migrations[:i]).Migrate()
		}
	}
	return gorm.ErrRecordNotFound
}
