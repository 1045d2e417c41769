package models

import (
	"errors"
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// Migrate applies every pending migration. Each migration declares the
// tables as they were at that version, so later model changes never rewrite
// history.
func Migrate(db *gorm.DB) error {
	return gormigrate.New(db, gormigrate.DefaultOptions, migrations).Migrate()
}

var migrations = []*gormigrate.Migration{
	{
		ID: "202611220001_platform",
		Migrate: func(tx *gorm.DB) error {
			type Organization struct {
				ID                       string `gorm:"primaryKey;size:40"`
				Name                     string `gorm:"size:200;not null"`
				Plan                     string `gorm:"size:20;not null"`
				GuestsMayApprove         bool   `gorm:"not null"`
				MaxApprovalExpirySeconds int64  `gorm:"not null"`
				CreatedAt                time.Time
				UpdatedAt                time.Time
			}
			type Member struct {
				ID             string `gorm:"primaryKey;size:40"`
				OrganizationID string `gorm:"size:40;not null;uniqueIndex:idx_members_org_email,priority:1"`
				Email          string `gorm:"size:320;not null;uniqueIndex:idx_members_org_email,priority:2"`
				Name           string `gorm:"size:200;not null"`
				Role           string `gorm:"size:20;not null"`
				Active         bool   `gorm:"not null"`
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			type Team struct {
				ID             string `gorm:"primaryKey;size:40"`
				OrganizationID string `gorm:"size:40;not null;uniqueIndex:idx_teams_org_name,priority:1"`
				Name           string `gorm:"size:200;not null;uniqueIndex:idx_teams_org_name,priority:2"`
				Kind           string `gorm:"size:20;not null"`
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			type TeamMember struct {
				TeamID   string `gorm:"primaryKey;size:40"`
				MemberID string `gorm:"primaryKey;size:40;index"`
			}
			type Guest struct {
				ID             string `gorm:"primaryKey;size:40"`
				OrganizationID string `gorm:"size:40;not null;uniqueIndex:idx_guests_org_email,priority:1"`
				Email          string `gorm:"size:320;not null;uniqueIndex:idx_guests_org_email,priority:2"`
				Name           string `gorm:"size:200;not null"`
				CreatedAt      time.Time
			}
			type APIKey struct {
				ID             string  `gorm:"primaryKey;size:40"`
				OrganizationID string  `gorm:"size:40;not null;index"`
				Kind           string  `gorm:"size:20;not null"`
				Name           string  `gorm:"size:200;not null"`
				Scopes         string  `gorm:"type:text;not null"`
				Hash           string  `gorm:"size:64;not null;uniqueIndex"`
				Prefix         string  `gorm:"size:32;not null"`
				MemberID       *string `gorm:"size:40;index"`
				CreatedAt      time.Time
				RevokedAt      *time.Time
			}
			type IdempotencyKey struct {
				OrganizationID string `gorm:"primaryKey;size:40"`
				Key            string `gorm:"column:idempotency_key;primaryKey;size:255"`
				RequestHash    string `gorm:"size:64;not null"`
				Completed      bool   `gorm:"not null"`
				StatusCode     int    `gorm:"not null"`
				ContentType    string `gorm:"size:100;not null"`
				ResponseBody   []byte
				LockedUntil    time.Time `gorm:"not null"`
				ExpiresAt      time.Time `gorm:"not null;index"`
				CreatedAt      time.Time
			}
			if err := tx.Migrator().CreateTable(&Organization{}, &Member{}, &Team{}, &TeamMember{}, &Guest{}, &IdempotencyKey{}); err != nil {
				return err
			}
			return tx.Table("api_keys").Migrator().CreateTable(&APIKey{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("idempotency_keys", "api_keys", "guests", "team_members", "teams", "members", "organizations")
		},
	},
}

// RequireMigrated fails when the database lacks a migration this binary
// knows, so serve and worker never run against an old schema.
func RequireMigrated(db *gorm.DB) error {
	if !db.Migrator().HasTable(gormigrate.DefaultOptions.TableName) {
		return errNotMigrated
	}
	var n int64
	last := migrations[len(migrations)-1].ID
	if err := db.Table(gormigrate.DefaultOptions.TableName).Where("id = ?", last).Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		return errNotMigrated
	}
	return nil
}

var errNotMigrated = errors.New("the database schema is not current: run `assent migrate` first")
