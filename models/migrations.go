package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// Migrate applies every pending migration. Each migration declares the
// tables as they were at that version, so later model changes never rewrite
// history.
func Migrate(db *gorm.DB) error {
	ctx := db.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if !db.Migrator().HasTable(gormigrate.DefaultOptions.TableName) {
		// No release ran on it: none has sessions to end.
		ctx = context.WithValue(ctx, freshDatabase{}, true)
	}
	return gormigrate.New(db.WithContext(ctx), gormigrate.DefaultOptions, migrations).Migrate()
}

// freshDatabase marks, in a migration's context, a database Migrate found
// without a schema.
type freshDatabase struct{}

// MigrationIDs lists every migration's id in the order Migrate applies
// them; the tests name their migrated template database after it.
func MigrationIDs() []string {
	ids := make([]string, len(migrations))
	for i, m := range migrations {
		ids[i] = m.ID
	}
	return ids
}

// migrations only grow the schema (docs/releases.md, "The database"). One
// that adds a column to a table 0.2.0 reads calls
// endSessionsOfEarlierReleases in the transaction that adds it, while
// assentbin.Previous.SelectsStar says the release upgraded from reads
// with SELECT *.
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
	{
		ID: "202611220002_approvals_flows",
		Migrate: func(tx *gorm.DB) error {
			type Approval struct {
				ID                string    `gorm:"primaryKey;size:40"`
				OrganizationID    string    `gorm:"size:40;not null;index:idx_approvals_org_status,priority:1;index:idx_approvals_org_external,priority:1"`
				Status            string    `gorm:"size:20;not null;index:idx_approvals_org_status,priority:2"`
				Title             string    `gorm:"size:200;not null"`
				Description       string    `gorm:"type:text;not null"`
				Risk              string    `gorm:"size:20;not null"`
				Factors           string    `gorm:"type:text;not null"`
				Links             string    `gorm:"type:text;not null"`
				ReportID          *string   `gorm:"size:40"`
				Approvers         string    `gorm:"type:text;not null"`
				ApproverIDs       string    `gorm:"type:text;not null"`
				ExpiresAt         time.Time `gorm:"not null"`
				ExternalID        *string   `gorm:"size:255;index:idx_approvals_org_external,priority:2"`
				FlowID            *string   `gorm:"size:40;index"`
				Metadata          *string   `gorm:"type:text"`
				Input             *string   `gorm:"type:text"`
				EditableFields    string    `gorm:"type:text;not null"`
				CallbackURL       *string   `gorm:"size:2048"`
				CallbackSecret    *string   `gorm:"size:100"`
				Requester         string    `gorm:"size:60;not null"`
				RequestedBy       string    `gorm:"size:320;not null"`
				RequiredApprovals int       `gorm:"not null"`
				ApprovalsSoFar    int       `gorm:"not null"`
				ApprovedBy        string    `gorm:"type:text;not null"`
				Questions         string    `gorm:"type:text;not null"`
				DecidedBy         *string   `gorm:"size:320"`
				DecidedByID       *string   `gorm:"size:40"`
				DecidedAt         *time.Time
				Note              *string `gorm:"type:text"`
				Reason            *string `gorm:"type:text"`
				ApprovedInput     *string `gorm:"type:text"`
				Changes           *string `gorm:"type:text"`
				Concerns          string  `gorm:"type:text;not null"`
				RestrictedFields  string  `gorm:"type:text;not null"`
				Seq               int     `gorm:"not null;index"`
				CreatedAt         time.Time
				UpdatedAt         time.Time
			}
			type ApprovalApprover struct {
				ApprovalID string `gorm:"primaryKey;size:40"`
				PersonID   string `gorm:"primaryKey;size:40;index"`
			}
			type AuditEntry struct {
				ID             string    `gorm:"primaryKey;size:40"`
				OrganizationID string    `gorm:"size:40;not null;index"`
				FlowID         *string   `gorm:"size:40;index"`
				SubjectType    string    `gorm:"size:20;not null"`
				SubjectID      string    `gorm:"size:40;not null;uniqueIndex:idx_audit_subject_seq,priority:1"`
				Seq            int       `gorm:"not null;uniqueIndex:idx_audit_subject_seq,priority:2"`
				Action         string    `gorm:"size:40;not null"`
				ActorID        string    `gorm:"size:60;not null"`
				ActorName      string    `gorm:"size:320;not null"`
				Detail         string    `gorm:"type:text;not null"`
				At             time.Time `gorm:"not null"`
			}
			type Event struct {
				ID             string     `gorm:"primaryKey;size:40"`
				OrganizationID string     `gorm:"size:40;not null;index"`
				Kind           string     `gorm:"size:60;not null"`
				SubjectType    string     `gorm:"size:20;not null"`
				SubjectID      string     `gorm:"size:40;not null;index"`
				Data           string     `gorm:"type:text;not null"`
				CreatedAt      time.Time  `gorm:"not null"`
				DispatchedAt   *time.Time `gorm:"index"`
			}
			type Flow struct {
				ID             string  `gorm:"primaryKey;size:40"`
				OrganizationID string  `gorm:"size:40;not null;index"`
				Title          string  `gorm:"size:200;not null"`
				ExternalID     *string `gorm:"size:255;index"`
				Status         string  `gorm:"size:20;not null"`
				StartedBy      string  `gorm:"size:60;not null"`
				StartedByName  string  `gorm:"size:320;not null"`
				CompletedAt    *time.Time
				CancelledAt    *time.Time
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			return tx.Migrator().CreateTable(&Approval{}, &ApprovalApprover{}, &AuditEntry{}, &Event{}, &Flow{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("flows", "events", "audit_entries", "approval_approvers", "approvals")
		},
	},
	{
		ID: "202611220003_rules",
		Migrate: func(tx *gorm.DB) error {
			type Rule struct {
				ID                string `gorm:"primaryKey;size:40"`
				OrganizationID    string `gorm:"size:40;not null;uniqueIndex:idx_rules_org_name,priority:1"`
				Name              string `gorm:"size:200;not null;uniqueIndex:idx_rules_org_name,priority:2"`
				Kind              string `gorm:"size:20;not null"`
				Condition         string `gorm:"type:text;not null"`
				RequiredApprovals int    `gorm:"not null"`
				Principle         string `gorm:"size:200;not null"`
				Concern           string `gorm:"type:text;not null"`
				Fields            string `gorm:"type:text;not null"`
				Enabled           bool   `gorm:"not null"`
				CreatedAt         time.Time
				UpdatedAt         time.Time
			}
			return tx.Migrator().CreateTable(&Rule{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("rules") },
	},
	{
		ID: "202611220004_deliveries",
		Migrate: func(tx *gorm.DB) error {
			type WebhookEndpoint struct {
				ID                  string  `gorm:"primaryKey;size:40"`
				OrganizationID      string  `gorm:"size:40;not null;index"`
				URL                 string  `gorm:"type:text;not null"`
				Format              string  `gorm:"size:20;not null"`
				Events              string  `gorm:"type:text;not null"`
				Enabled             bool    `gorm:"not null"`
				Secret              string  `gorm:"size:100;not null"`
				PreviousSecret      *string `gorm:"size:100"`
				PreviousSecretUntil *time.Time
				ConsecutiveFailures int `gorm:"not null"`
				SwitchedOffAt       *time.Time
				LastError           string `gorm:"type:text;not null"`
				CreatedAt           time.Time
				UpdatedAt           time.Time
			}
			type Delivery struct {
				ID             string     `gorm:"primaryKey;size:40"`
				OrganizationID string     `gorm:"size:40;not null;index"`
				EventID        string     `gorm:"size:40;not null;uniqueIndex:idx_deliveries_event_target,priority:1"`
				Target         string     `gorm:"size:20;not null;uniqueIndex:idx_deliveries_event_target,priority:2"`
				EndpointID     *string    `gorm:"size:40;uniqueIndex:idx_deliveries_event_target,priority:3;index"`
				Status         string     `gorm:"size:20;not null;index"`
				Attempts       int        `gorm:"not null"`
				LastStatusCode int        `gorm:"not null"`
				LastError      string     `gorm:"type:text;not null"`
				StartedAt      *time.Time `gorm:"index"`
				DeliveredAt    *time.Time
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			type DeliveryAttempt struct {
				ID         uint      `gorm:"primaryKey"`
				DeliveryID string    `gorm:"size:40;not null;index"`
				Attempt    int       `gorm:"not null"`
				At         time.Time `gorm:"not null"`
				StatusCode int       `gorm:"not null"`
				LatencyMS  int64     `gorm:"not null"`
				Error      string    `gorm:"type:text;not null"`
			}
			return tx.Migrator().CreateTable(&WebhookEndpoint{}, &Delivery{}, &DeliveryAttempt{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("delivery_attempts", "deliveries", "webhook_endpoints")
		},
	},
	{
		// A delivery sent again by an administrator (resend or recover)
		// runs under a new workflow id; sends numbers those runs.
		ID: "202611220005_delivery_sends",
		Migrate: func(tx *gorm.DB) error {
			type Delivery struct {
				Sends int `gorm:"not null;default:0"`
			}
			return tx.Migrator().AddColumn(&Delivery{}, "Sends")
		},
		Rollback: func(tx *gorm.DB) error {
			type Delivery struct{ Sends int }
			return tx.Migrator().DropColumn(&Delivery{}, "Sends")
		},
	},
	{
		// Sign-in by emailed link and browser sessions. Only hashes of the
		// link and session tokens are kept. Sign-in looks people up by email
		// across organisations, hence the two email indexes.
		ID: "202611220006_sessions",
		Migrate: func(tx *gorm.DB) error {
			type SignInLink struct {
				TokenHash      string    `gorm:"primaryKey;size:64"`
				OrganizationID string    `gorm:"size:40;not null;index"`
				PersonID       string    `gorm:"size:40;not null;index"`
				ExpiresAt      time.Time `gorm:"not null;index"`
				UsedAt         *time.Time
				CreatedAt      time.Time `gorm:"not null"`
			}
			type Session struct {
				ID             string    `gorm:"primaryKey;size:40"`
				TokenHash      string    `gorm:"size:64;not null;uniqueIndex"`
				OrganizationID string    `gorm:"size:40;not null;index"`
				PersonID       string    `gorm:"size:40;not null;index"`
				CSRFSecret     string    `gorm:"size:64;not null"`
				CreatedAt      time.Time `gorm:"not null"`
				LastSeenAt     time.Time `gorm:"not null"`
				ExpiresAt      time.Time `gorm:"not null;index"`
			}
			if err := tx.Migrator().CreateTable(&SignInLink{}, &Session{}); err != nil {
				return err
			}
			if err := tx.Exec("CREATE INDEX idx_members_email ON members (email)").Error; err != nil {
				return err
			}
			return tx.Exec("CREATE INDEX idx_guests_email ON guests (email)").Error
		},
		Rollback: func(tx *gorm.DB) error {
			for _, idx := range []string{"idx_members_email", "idx_guests_email"} {
				if err := tx.Exec("DROP INDEX " + idx).Error; err != nil {
					return err
				}
			}
			return tx.Migrator().DropTable("sessions", "sign_in_links")
		},
	},
	{
		ID: "202611220007_decision_links",
		Migrate: func(tx *gorm.DB) error {
			type DecisionLink struct {
				TokenHash      string    `gorm:"primaryKey;size:64"`
				OrganizationID string    `gorm:"size:40;not null;index"`
				ApprovalID     string    `gorm:"size:40;not null;index"`
				PersonID       string    `gorm:"size:40;not null"`
				ExpiresAt      time.Time `gorm:"not null;index"`
				UsedAt         *time.Time
				CreatedAt      time.Time `gorm:"not null"`
			}
			type Notice struct {
				ID             string    `gorm:"primaryKey;size:200"`
				OrganizationID string    `gorm:"size:40;not null;index"`
				SentAt         time.Time `gorm:"not null"`
			}
			return tx.Migrator().CreateTable(&DecisionLink{}, &Notice{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("notices", "decision_links") },
	},
	{
		// Keys are bound to the caller that sent them and to the record
		// their request made. The table only holds keys for 24 hours, so
		// it is remade rather than altered (SQLite cannot change a primary
		// key): keys sent just before the upgrade are forgotten.
		ID: "202611230001_idempotency_claims",
		Migrate: func(tx *gorm.DB) error {
			type IdempotencyKey struct {
				OrganizationID string `gorm:"primaryKey;size:40"`
				PrincipalID    string `gorm:"primaryKey;size:40"`
				Key            string `gorm:"column:idempotency_key;primaryKey;size:255"`
				RequestHash    string `gorm:"size:64;not null"`
				ResourceID     string `gorm:"size:40;not null;default:''"`
				Completed      bool   `gorm:"not null"`
				StatusCode     int    `gorm:"not null"`
				ContentType    string `gorm:"size:100;not null"`
				ResponseBody   []byte
				LockedUntil    time.Time `gorm:"not null"`
				ExpiresAt      time.Time `gorm:"not null;index"`
				CreatedAt      time.Time
			}
			if err := tx.Migrator().DropTable("idempotency_keys"); err != nil {
				return err
			}
			return tx.Migrator().CreateTable(&IdempotencyKey{})
		},
	},
	{
		// Secrets are kept sealed, longer than the 100 characters the
		// clear values needed. SQLite does not enforce lengths; the values
		// themselves are sealed after migrating (Store.ResealSecrets).
		ID: "202611230002_sealed_secrets",
		Migrate: func(tx *gorm.DB) error {
			if tx.Dialector.Name() != "postgres" {
				return nil
			}
			return tx.Exec(`ALTER TABLE webhook_endpoints ALTER COLUMN secret TYPE text, ALTER COLUMN previous_secret TYPE text;
				ALTER TABLE approvals ALTER COLUMN callback_secret TYPE text`).Error
		},
	},
	{
		ID: "202611230003_collections",
		Migrate: func(tx *gorm.DB) error {
			type Collection struct {
				ID                string `gorm:"primaryKey;size:40"`
				OrganizationID    string `gorm:"size:40;not null;index:idx_collections_org_status,priority:1;index:idx_collections_org_external,priority:1"`
				Status            string `gorm:"size:20;not null;index:idx_collections_org_status,priority:2"`
				Title             string `gorm:"size:200;not null"`
				Description       string `gorm:"type:text;not null"`
				Questions         string `gorm:"type:text;not null"`
				Respondents       string `gorm:"type:text;not null"`
				RespondentIDs     string `gorm:"type:text;not null"`
				Asked             string `gorm:"type:text;not null"`
				RequiredResponses int    `gorm:"not null"`
				ResponsesSoFar    int    `gorm:"not null"`
				Replies           string `gorm:"type:text;not null"`
				DueAt             *time.Time
				ExpiresAt         time.Time `gorm:"not null"`
				ExternalID        *string   `gorm:"size:255;index:idx_collections_org_external,priority:2"`
				FlowID            *string   `gorm:"size:40;index"`
				Metadata          []byte    `gorm:"type:text"`
				CallbackURL       *string   `gorm:"size:2048"`
				CallbackSecret    *string   `gorm:"type:text"`
				Requester         string    `gorm:"size:60;not null"`
				RequestedBy       string    `gorm:"size:320;not null"`
				SettledAt         *time.Time
				RemindedAt        *time.Time
				Seq               int `gorm:"not null;index"`
				CreatedAt         time.Time
				UpdatedAt         time.Time
			}
			type CollectionRespondent struct {
				CollectionID string `gorm:"primaryKey;size:40"`
				PersonID     string `gorm:"primaryKey;size:40;index"`
			}
			type CollectionDraft struct {
				CollectionID string `gorm:"primaryKey;size:40"`
				PersonID     string `gorm:"primaryKey;size:40"`
				Answers      []byte `gorm:"type:text;not null"`
				UpdatedAt    time.Time
			}
			return tx.Migrator().CreateTable(&Collection{}, &CollectionRespondent{}, &CollectionDraft{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("collection_drafts", "collection_respondents", "collections")
		},
	},
	{
		// Each attempt records which send it belongs to, so the delivery
		// log shows a resend apart from the sends before it.
		ID: "202611230004_delivery_attempt_send",
		Migrate: func(tx *gorm.DB) error {
			type DeliveryAttempt struct {
				Send int `gorm:"not null;default:0"`
			}
			return tx.Migrator().AddColumn(&DeliveryAttempt{}, "Send")
		},
		Rollback: func(tx *gorm.DB) error {
			type DeliveryAttempt struct{ Send int }
			return tx.Migrator().DropColumn(&DeliveryAttempt{}, "Send")
		},
	},
	{
		// An approval's escalation, asked for by the request or an
		// approval rule.
		ID: "202611230005_approval_escalation",
		Migrate: func(tx *gorm.DB) error {
			type Approval struct {
				EscalationAfter *int
				EscalationTo    StringList `gorm:"type:text"`
				EscalationIDs   StringList `gorm:"type:text"`
				EscalatedAt     *time.Time
			}
			type Rule struct {
				EscalationAfter int        `gorm:"not null;default:0"`
				EscalationTo    StringList `gorm:"type:text"`
			}
			for _, c := range []string{"EscalationAfter", "EscalationTo", "EscalationIDs", "EscalatedAt"} {
				if err := tx.Migrator().AddColumn(&Approval{}, c); err != nil {
					return err
				}
			}
			for _, c := range []string{"EscalationAfter", "EscalationTo"} {
				if err := tx.Migrator().AddColumn(&Rule{}, c); err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			type Approval struct{}
			type Rule struct{}
			for _, c := range []string{"escalation_after", "escalation_to", "escalation_ids", "escalated_at"} {
				if err := tx.Migrator().DropColumn(&Approval{}, c); err != nil {
					return err
				}
			}
			for _, c := range []string{"escalation_after", "escalation_to"} {
				if err := tx.Migrator().DropColumn(&Rule{}, c); err != nil {
					return err
				}
			}
			return nil
		},
	},
	{
		// Report publishing: reports, their versions and upload tickets.
		ID: "202611240001_reports",
		Migrate: func(tx *gorm.DB) error {
			type Report struct {
				ID             string     `gorm:"primaryKey;size:40"`
				OrganizationID string     `gorm:"size:40;not null;uniqueIndex:idx_reports_org_slug,priority:1"`
				Slug           string     `gorm:"size:200;not null;uniqueIndex:idx_reports_org_slug,priority:2"`
				Key            string     `gorm:"size:40;not null;uniqueIndex"`
				Title          string     `gorm:"size:200;not null"`
				Living         bool       `gorm:"not null"`
				Classification string     `gorm:"size:20;not null"`
				Audience       StringList `gorm:"type:text;not null"`
				Archived       bool       `gorm:"not null"`
				OwnerID        string     `gorm:"size:60;not null"`
				OwnerName      string     `gorm:"size:320;not null"`
				OwnerPerson    bool       `gorm:"not null"`
				FlowID         *string    `gorm:"size:40;index"`
				LatestVersion  int        `gorm:"not null"`
				LiveVersion    *int
				AuditSeq       int `gorm:"not null"`
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			type ReportVersion struct {
				ID              string `gorm:"primaryKey;size:40"`
				OrganizationID  string `gorm:"size:40;not null;index:idx_report_versions_org_state,priority:1"`
				ReportID        string `gorm:"size:40;not null;uniqueIndex:idx_report_versions_number,priority:1"`
				Version         int    `gorm:"not null;uniqueIndex:idx_report_versions_number,priority:2"`
				State           string `gorm:"size:20;not null;index:idx_report_versions_org_state,priority:2"`
				ChangeSummary   string `gorm:"type:text;not null"`
				PublishedBy     string `gorm:"size:60;not null"`
				PublishedByName string `gorm:"size:320;not null"`
				Files           string `gorm:"type:text;not null"`
				Bytes           int64  `gorm:"not null"`
				Findings        string `gorm:"type:text;not null"`
				HoldStarted     bool   `gorm:"not null"`
				DecidedBy       *string
				DecidedByName   *string
				DecidedAt       *time.Time
				CreatedAt       time.Time
			}
			type Upload struct {
				ID             string `gorm:"primaryKey;size:40"`
				OrganizationID string `gorm:"size:40;not null;index"`
				TicketHash     string `gorm:"size:64;not null;uniqueIndex"`
				CreatedBy      string `gorm:"size:60;not null"`
				ContentType    string `gorm:"size:40;not null"`
				Size           int64  `gorm:"not null"`
				Blob           string `gorm:"size:80;not null"`
				UploadedAt     *time.Time
				ConsumedAt     *time.Time
				ExpiresAt      time.Time `gorm:"not null"`
				CreatedAt      time.Time
			}
			return tx.Migrator().CreateTable(&Report{}, &ReportVersion{}, &Upload{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("uploads", "report_versions", "reports")
		},
	},
	{
		// Schedules of living reports, each beside its Temporal Schedule.
		ID: "202611240002_schedules",
		Migrate: func(tx *gorm.DB) error {
			type Schedule struct {
				ID             string  `gorm:"primaryKey;size:40"`
				OrganizationID string  `gorm:"size:40;not null;index"`
				ReportID       string  `gorm:"size:40;not null;index"`
				Cron           *string `gorm:"size:200"`
				EverySeconds   *int64
				Timezone       string `gorm:"size:64;not null"`
				Note           string `gorm:"type:text;not null"`
				Paused         bool   `gorm:"not null"`
				CreatedBy      string `gorm:"size:60;not null"`
				CreatedByName  string `gorm:"size:320;not null"`
				Registered     bool   `gorm:"not null"`
				LastDueAt      *time.Time
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			return tx.Migrator().CreateTable(&Schedule{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("schedules") },
	},
	{
		// The datasets reports read at _data/<name>.
		ID: "202611240003_datasets",
		Migrate: func(tx *gorm.DB) error {
			type Dataset struct {
				ReportID       string `gorm:"primaryKey;size:40"`
				Name           string `gorm:"primaryKey;size:64"`
				OrganizationID string `gorm:"size:40;not null;index"`
				Data           []byte `gorm:"not null"`
				Bytes          int    `gorm:"not null"`
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			return tx.Migrator().CreateTable(&Dataset{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("datasets") },
	},
	{
		// Who may read a report. Audiences were kept as sent and granted
		// nothing; a report's audience now lists its grants.
		ID: "202611250001_report_grants",
		Migrate: func(tx *gorm.DB) error {
			type ReportGrant struct {
				ID             string `gorm:"primaryKey;size:40"`
				OrganizationID string `gorm:"size:40;not null;index"`
				ReportID       string `gorm:"size:40;not null;uniqueIndex:idx_report_grants_subject,priority:1"`
				Kind           string `gorm:"size:20;not null;uniqueIndex:idx_report_grants_subject,priority:2"`
				SubjectID      string `gorm:"size:40;not null;uniqueIndex:idx_report_grants_subject,priority:3;index"`
				Name           string `gorm:"size:320;not null"`
				GrantedBy      string `gorm:"size:60;not null"`
				GrantedByName  string `gorm:"size:320;not null"`
				CreatedAt      time.Time
			}
			if err := tx.Migrator().CreateTable(&ReportGrant{}); err != nil {
				return err
			}
			return tx.Exec("UPDATE reports SET audience = '[]'").Error
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("report_grants") },
	},
	{
		// Reading reports on their own origins: tickets, reader sessions,
		// views and access requests.
		ID: "202611250002_report_reading",
		Migrate: func(tx *gorm.DB) error {
			type ReaderTicket struct {
				TicketHash string    `gorm:"primaryKey;size:64"`
				ReportID   string    `gorm:"size:40;not null"`
				SessionID  string    `gorm:"size:40;not null"`
				ExpiresAt  time.Time `gorm:"not null;index"`
				UsedAt     *time.Time
			}
			type ReaderSession struct {
				TokenHash string    `gorm:"primaryKey;size:64"`
				ReportID  string    `gorm:"size:40;not null"`
				SessionID string    `gorm:"size:40;not null;index"`
				CreatedAt time.Time `gorm:"not null"`
			}
			type ReportView struct {
				ID             string    `gorm:"primaryKey;size:40"`
				OrganizationID string    `gorm:"size:40;not null;index"`
				ReportID       string    `gorm:"size:40;not null;index:idx_report_views_viewer,priority:1"`
				ViewerID       string    `gorm:"size:40;not null;index:idx_report_views_viewer,priority:2"`
				Version        int       `gorm:"not null"`
				Notified       bool      `gorm:"not null"`
				At             time.Time `gorm:"not null;index:idx_report_views_viewer,priority:3"`
			}
			type AccessRequest struct {
				ReportID    string    `gorm:"primaryKey;size:40"`
				PersonID    string    `gorm:"primaryKey;size:40"`
				RequestedAt time.Time `gorm:"not null"`
			}
			return tx.Migrator().CreateTable(&ReaderTicket{}, &ReaderSession{}, &ReportView{}, &AccessRequest{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("reader_tickets", "reader_sessions", "report_views", "access_requests")
		},
	},
	{
		// Reports sent by email to addresses, guests admitted on the way.
		ID: "202611250003_report_sends",
		Migrate: func(tx *gorm.DB) error {
			type ReportSend struct {
				ID             string `gorm:"primaryKey;size:40"`
				OrganizationID string `gorm:"size:40;not null;index"`
				ReportID       string `gorm:"size:40;not null;index"`
				SentBy         string `gorm:"size:60;not null"`
				SentByName     string `gorm:"size:320;not null"`
				Note           string `gorm:"type:text;not null"`
				Recipients     string `gorm:"type:text;not null"`
				Started        bool   `gorm:"not null"`
				CreatedAt      time.Time
			}
			return tx.Migrator().CreateTable(&ReportSend{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("report_sends") },
	},
	{
		// When report.viewed last fired per viewer and report, so views
		// need not lock the report.
		ID: "202611250004_view_notices",
		Migrate: func(tx *gorm.DB) error {
			type ViewNotice struct {
				ReportID   string    `gorm:"primaryKey;size:40"`
				ViewerID   string    `gorm:"primaryKey;size:40"`
				NotifiedAt time.Time `gorm:"not null"`
			}
			return tx.Migrator().CreateTable(&ViewNotice{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("view_notices") },
	},
	{
		// Reviews of a report's version, and who is asked.
		ID: "202611260001_reviews",
		Migrate: func(tx *gorm.DB) error {
			type Review struct {
				ID                   string    `gorm:"primaryKey;size:40"`
				OrganizationID       string    `gorm:"size:40;not null;index:idx_reviews_org_status,priority:1;index:idx_reviews_org_external,priority:1"`
				Status               string    `gorm:"size:20;not null;index:idx_reviews_org_status,priority:2"`
				Title                string    `gorm:"size:200;not null"`
				Instructions         string    `gorm:"type:text;not null"`
				ReportID             string    `gorm:"size:40;not null;index"`
				VersionID            string    `gorm:"size:40;not null"`
				Version              int       `gorm:"not null"`
				Reviewers            string    `gorm:"type:text;not null"`
				ReviewerIDs          string    `gorm:"type:text;not null"`
				Asked                string    `gorm:"type:text;not null"`
				RequiredApprovals    int       `gorm:"not null"`
				ApprovalsSoFar       int       `gorm:"not null"`
				Verdicts             string    `gorm:"type:text;not null"`
				ThreadCount          int       `gorm:"not null"`
				ExpiresAt            time.Time `gorm:"not null"`
				ExternalID           *string   `gorm:"size:255;index:idx_reviews_org_external,priority:2"`
				FlowID               *string   `gorm:"size:40;index"`
				Metadata             *string   `gorm:"type:text"`
				CallbackURL          *string   `gorm:"size:2048"`
				SealedCallbackSecret *string   `gorm:"column:callback_secret;type:text"`
				Requester            string    `gorm:"size:60;not null"`
				RequestedBy          string    `gorm:"size:320;not null"`
				SettledAt            *time.Time
				Seq                  int `gorm:"not null;index"`
				CreatedAt            time.Time
				UpdatedAt            time.Time
			}
			type ReviewReviewer struct {
				ReviewID string `gorm:"primaryKey;size:40"`
				PersonID string `gorm:"primaryKey;size:40;index"`
			}
			return tx.Migrator().CreateTable(&Review{}, &ReviewReviewer{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("reviews", "review_reviewers") },
	},
	{
		// Comment threads on reports, their comments and images.
		ID: "202611260002_comments",
		Migrate: func(tx *gorm.DB) error {
			type CommentThread struct {
				ID             string  `gorm:"primaryKey;size:40"`
				OrganizationID string  `gorm:"size:40;not null;index:idx_comment_threads_org_status,priority:1"`
				ReportID       string  `gorm:"size:40;not null;index"`
				ReviewID       *string `gorm:"size:40;index"`
				Status         string  `gorm:"size:20;not null;index:idx_comment_threads_org_status,priority:2"`
				Quote          *string `gorm:"type:text"`
				Context        string  `gorm:"type:text;not null"`
				Path           string  `gorm:"size:1024;not null"`
				MadeOnVersion  int     `gorm:"not null"`
				AnchorState    string  `gorm:"size:20;not null"`
				AnchorVersion  int     `gorm:"not null"`
				CheckedVersion int     `gorm:"not null"`
				OpenedBy       string  `gorm:"size:60;not null"`
				OpenedByName   string  `gorm:"size:320;not null"`
				ByReviewer     bool    `gorm:"not null"`
				ResolvedBy     *string
				ResolvedByName *string
				ResolutionNote *string `gorm:"type:text"`
				ResolvedAt     *time.Time
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			type Comment struct {
				ID             string    `gorm:"primaryKey;size:40"`
				OrganizationID string    `gorm:"size:40;not null"`
				ThreadID       string    `gorm:"size:40;not null;index"`
				ReportID       string    `gorm:"size:40;not null"`
				AuthorID       string    `gorm:"size:60;not null"`
				AuthorName     string    `gorm:"size:320;not null"`
				AuthorKind     string    `gorm:"size:20;not null"`
				Body           string    `gorm:"type:text;not null"`
				CreatedAt      time.Time `gorm:"not null"`
			}
			type CommentImage struct {
				CommentID   string `gorm:"primaryKey;size:40"`
				Position    int    `gorm:"primaryKey"`
				ReportID    string `gorm:"size:40;not null;index:idx_comment_images_report,priority:1"`
				SHA256      string `gorm:"size:64;not null;index:idx_comment_images_report,priority:2"`
				ContentType string `gorm:"size:40;not null"`
				Size        int64  `gorm:"not null"`
			}
			return tx.Migrator().CreateTable(&CommentThread{}, &Comment{}, &CommentImage{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("comment_threads", "comments", "comment_images")
		},
	},
	{
		// Whether a report's readership analytics name its readers.
		ID: "202611260003_report_show_viewers",
		Migrate: func(tx *gorm.DB) error {
			type Report struct {
				ShowViewers bool `gorm:"not null;default:false"`
			}
			return tx.Migrator().AddColumn(&Report{}, "ShowViewers")
		},
		Rollback: func(tx *gorm.DB) error {
			type Report struct{ ShowViewers bool }
			return tx.Migrator().DropColumn(&Report{}, "ShowViewers")
		},
	},
	{
		// The tamper-evident audit trail: each entry's place in its
		// organisation's chain and its hash, the chain's end per
		// organisation, and the entries written before, chained in the
		// order of their times.
		ID: "202611260004_audit_chain",
		Migrate: func(tx *gorm.DB) error {
			type AuditEntry struct {
				ID             string  `gorm:"primaryKey;size:40"`
				OrganizationID string  `gorm:"size:40;not null;index;uniqueIndex:idx_audit_org_position,priority:1"`
				FlowID         *string `gorm:"size:40;index"`
				SubjectType    string  `gorm:"size:20;not null"`
				SubjectID      string  `gorm:"size:40;not null"`
				Seq            int     `gorm:"not null"`
				Action         string  `gorm:"size:40;not null"`
				ActorID        string  `gorm:"size:60;not null"`
				ActorName      string  `gorm:"size:320;not null"`
				Detail         string  `gorm:"type:text;not null"`
				At             time.Time
				Position       int64  `gorm:"not null;default:0;uniqueIndex:idx_audit_org_position,priority:2"`
				EntryHash      string `gorm:"size:64;not null;default:''"`
			}
			type AuditHead struct {
				OrganizationID string `gorm:"primaryKey;size:40"`
				Position       int64  `gorm:"not null"`
				Hash           string `gorm:"size:64;not null"`
			}
			for _, col := range []string{"Position", "EntryHash"} {
				if err := tx.Migrator().AddColumn(&AuditEntry{}, col); err != nil {
					return err
				}
			}
			if err := tx.Migrator().CreateTable(&AuditHead{}); err != nil {
				return err
			}
			var orgs []string
			if err := tx.Model(&AuditEntry{}).Distinct("organization_id").Order("organization_id").Pluck("organization_id", &orgs).Error; err != nil {
				return err
			}
			for _, org := range orgs {
				var entries []AuditEntry
				if err := tx.Where("organization_id = ?", org).Order("at, id").Find(&entries).Error; err != nil {
					return err
				}
				prev := ""
				for i, e := range entries {
					chained := chainedEntry(e.ID, e.OrganizationID, e.FlowID, e.SubjectType, e.SubjectID, e.Seq, e.Action,
						e.ActorID, e.ActorName, e.Detail, e.At, int64(i+1))
					prev = ChainHash(prev, chained)
					if err := tx.Model(&AuditEntry{}).Where("id = ?", e.ID).Updates(map[string]any{"position": i + 1, "entry_hash": prev}).Error; err != nil {
						return err
					}
				}
				if err := tx.Create(&AuditHead{OrganizationID: org, Position: int64(len(entries)), Hash: prev}).Error; err != nil {
					return err
				}
			}
			return tx.Migrator().CreateIndex(&AuditEntry{}, "idx_audit_org_position")
		},
		Rollback: func(tx *gorm.DB) error {
			type AuditEntry struct {
				Position  int64
				EntryHash string
			}
			if err := tx.Migrator().DropIndex(&AuditEntry{}, "idx_audit_org_position"); err != nil {
				return err
			}
			for _, col := range []string{"Position", "EntryHash"} {
				if err := tx.Migrator().DropColumn(&AuditEntry{}, col); err != nil {
					return err
				}
			}
			return tx.Migrator().DropTable("audit_heads")
		},
	},
	{
		// The instance's Ed25519 keys for signing evidence exports.
		ID: "202611260005_evidence_keys",
		Migrate: func(tx *gorm.DB) error {
			type EvidenceKey struct {
				ID            string `gorm:"primaryKey;size:40"`
				PublicKey     []byte `gorm:"not null"`
				SealedPrivate string `gorm:"column:private_key;type:text;not null"`
				Active        *bool  `gorm:"uniqueIndex"`
				CreatedAt     time.Time
				RetiredAt     *time.Time
			}
			return tx.Migrator().CreateTable(&EvidenceKey{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("evidence_keys") },
	},
	{
		// The instance's Ed25519 keys for signing decision tokens: a key
		// family of their own, apart from the evidence keys.
		ID: "202611260006_decision_keys",
		Migrate: func(tx *gorm.DB) error {
			type DecisionKey struct {
				ID            string `gorm:"primaryKey;size:40"`
				PublicKey     []byte `gorm:"not null"`
				SealedPrivate string `gorm:"column:private_key;type:text;not null"`
				Active        *bool  `gorm:"uniqueIndex"`
				CreatedAt     time.Time
				RetiredAt     *time.Time
			}
			return tx.Migrator().CreateTable(&DecisionKey{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("decision_keys") },
	},
	{
		// An approved approval's decision token; how long tokens hold, per
		// approval (set by the gate from its action) and per organisation
		// (zero: an hour).
		ID: "202611260007_approval_decision_tokens",
		Migrate: func(tx *gorm.DB) error {
			type Approval struct {
				DecisionToken           *string `gorm:"type:text"`
				DecisionTokenTTLSeconds *int    `gorm:"column:decision_token_ttl_seconds"`
			}
			type Organization struct {
				DecisionTokenTTLSeconds int64 `gorm:"column:decision_token_ttl_seconds;not null;default:0"`
			}
			for _, c := range []string{"DecisionToken", "DecisionTokenTTLSeconds"} {
				if err := tx.Migrator().AddColumn(&Approval{}, c); err != nil {
					return err
				}
			}
			return tx.Migrator().AddColumn(&Organization{}, "DecisionTokenTTLSeconds")
		},
		Rollback: func(tx *gorm.DB) error {
			type Approval struct {
				DecisionToken           *string
				DecisionTokenTTLSeconds *int `gorm:"column:decision_token_ttl_seconds"`
			}
			type Organization struct {
				DecisionTokenTTLSeconds int64 `gorm:"column:decision_token_ttl_seconds"`
			}
			for _, c := range []string{"DecisionToken", "DecisionTokenTTLSeconds"} {
				if err := tx.Migrator().DropColumn(&Approval{}, c); err != nil {
					return err
				}
			}
			return tx.Migrator().DropColumn(&Organization{}, "DecisionTokenTTLSeconds")
		},
	},
	{
		// The action gate: registered actions, the checks put to it, and
		// the action an approval was raised for.
		ID: "202611260010_action_gate",
		Migrate: func(tx *gorm.DB) error {
			type Action struct {
				ID                      string  `gorm:"primaryKey;size:40"`
				OrganizationID          string  `gorm:"size:40;not null;uniqueIndex:idx_actions_org_name,priority:1"`
				Name                    string  `gorm:"size:200;not null;uniqueIndex:idx_actions_org_name,priority:2"`
				Description             string  `gorm:"type:text;not null"`
				InputSchema             RawJSON `gorm:"type:text;not null"`
				EditableFields          string  `gorm:"type:text;not null"`
				Policy                  string  `gorm:"type:text;not null"`
				DecisionTokenTTLSeconds *int
				CreatedAt               time.Time
				UpdatedAt               time.Time
			}
			type GateCheck struct {
				ID             string  `gorm:"primaryKey;size:40"`
				OrganizationID string  `gorm:"size:40;not null;index"`
				ActionID       string  `gorm:"size:40;not null;index"`
				Action         string  `gorm:"size:200;not null"`
				Input          RawJSON `gorm:"type:text;not null"`
				Decision       string  `gorm:"size:20;not null"`
				Rule           string  `gorm:"size:200;not null"`
				Reason         string  `gorm:"type:text;not null"`
				ApprovalID     *string `gorm:"size:40;uniqueIndex"`
				DecisionToken  *string `gorm:"type:text"`
				FlowID         *string `gorm:"size:40;index"`
				ExternalID     *string `gorm:"size:255"`
				CallerKind     string  `gorm:"size:20;not null"`
				CallerID       string  `gorm:"size:60;not null"`
				CallerName     string  `gorm:"size:320;not null"`
				CreatedAt      time.Time
			}
			type Approval struct {
				Action      *string `gorm:"size:200"`
				InputSchema RawJSON `gorm:"type:text"`
			}
			if err := tx.Migrator().CreateTable(&Action{}, &GateCheck{}); err != nil {
				return err
			}
			for _, col := range []string{"Action", "InputSchema"} {
				if err := tx.Migrator().AddColumn(&Approval{}, col); err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			type Approval struct {
				Action      *string
				InputSchema RawJSON
			}
			for _, col := range []string{"Action", "InputSchema"} {
				if err := tx.Migrator().DropColumn(&Approval{}, col); err != nil {
					return err
				}
			}
			return tx.Migrator().DropTable("gate_checks", "actions")
		},
	},
	{
		// Web Push: the instance's VAPID key pair, its private half sealed,
		// and each person's browsers' subscriptions, unique by endpoint.
		ID: "202611270001_push_subscriptions",
		Migrate: func(tx *gorm.DB) error {
			type PushKey struct {
				ID            string `gorm:"primaryKey;size:40"`
				PublicKey     string `gorm:"size:100;not null"`
				SealedPrivate string `gorm:"column:private_key;type:text;not null"`
				CreatedAt     time.Time
			}
			type PushSubscription struct {
				ID             string `gorm:"primaryKey;size:40"`
				OrganizationID string `gorm:"size:40;not null;index"`
				PersonID       string `gorm:"size:40;not null;index"`
				Endpoint       string `gorm:"type:text;not null"`
				EndpointHash   string `gorm:"size:64;not null;uniqueIndex"`
				P256dh         string `gorm:"size:100;not null"`
				Auth           string `gorm:"size:40;not null"`
				CreatedAt      time.Time
			}
			return tx.Migrator().CreateTable(&PushKey{}, &PushSubscription{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("push_subscriptions", "push_keys") },
	}, {
		// How an approval named each person it may ask.
		ID: "202611260011_approver_via",
		Migrate: func(tx *gorm.DB) error {
			type Approval struct {
				ApproverVia string `gorm:"type:text"`
			}
			return tx.Migrator().AddColumn(&Approval{}, "ApproverVia")
		},
		Rollback: func(tx *gorm.DB) error {
			type Approval struct{ ApproverVia string }
			return tx.Migrator().DropColumn(&Approval{}, "ApproverVia")
		},
	},
	{
		// An organisation's own Slack app: its signing secret and bot
		// token, both sealed, and the channel approval requests go to.
		ID: "202611280001_slack_integrations",
		Migrate: func(tx *gorm.DB) error {
			type SlackIntegration struct {
				OrganizationID string `gorm:"primaryKey;size:40"`
				SigningSecret  string `gorm:"type:text;not null"`
				BotToken       string `gorm:"type:text;not null"`
				Channel        string `gorm:"size:80;not null"`
				UpdatedBy      string `gorm:"size:40;not null"`
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			return tx.Migrator().CreateTable(&SlackIntegration{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("slack_integrations") },
	}, {
		// The sign-in a push subscription was made in, which ends it.
		ID: "202611280002_push_subscription_sessions",
		Migrate: func(tx *gorm.DB) error {
			type PushSubscription struct {
				SessionID string `gorm:"size:40;index"`
			}
			if err := tx.Migrator().AddColumn(&PushSubscription{}, "SessionID"); err != nil {
				return err
			}
			return tx.Migrator().CreateIndex(&PushSubscription{}, "SessionID")
		},
		Rollback: func(tx *gorm.DB) error {
			type PushSubscription struct{ SessionID string }
			return tx.Migrator().DropColumn(&PushSubscription{}, "SessionID")
		},
	}, {
		// The report a copy was made from: its classification floors the
		// copy's.
		ID: "202611290001_report_copied_from",
		Migrate: func(tx *gorm.DB) error {
			type Report struct {
				CopiedFromID *string `gorm:"size:40"`
			}
			return tx.Migrator().AddColumn(&Report{}, "CopiedFromID")
		},
		Rollback: func(tx *gorm.DB) error {
			type Report struct{ CopiedFromID *string }
			return tx.Migrator().DropColumn(&Report{}, "CopiedFromID")
		},
	}, {
		// The claim of the PUT sending an upload's bytes, taken before
		// its body is read.
		ID: "202611290101_upload_claims",
		Migrate: func(tx *gorm.DB) error {
			type Upload struct{ ReceivingUntil *time.Time }
			return tx.Migrator().AddColumn(&Upload{}, "ReceivingUntil")
		},
		Rollback: func(tx *gorm.DB) error {
			type Upload struct{ ReceivingUntil *time.Time }
			return tx.Migrator().DropColumn(&Upload{}, "ReceivingUntil")
		},
	}, {
		// The other origins an organisation's reports may reach.
		ID: "202611290201_organization_report_origins",
		Migrate: func(tx *gorm.DB) error {
			type Organization struct {
				ReportOrigins StringList `gorm:"type:text;not null;default:'[]'"`
			}
			return tx.Migrator().AddColumn(&Organization{}, "ReportOrigins")
		},
		Rollback: func(tx *gorm.DB) error {
			type Organization struct{ ReportOrigins StringList }
			return tx.Migrator().DropColumn(&Organization{}, "ReportOrigins")
		},
	}, {
		// The organisation rules that could not be evaluated on an
		// approval, applied as if they held.
		ID: "202611290301_approval_unevaluated_rules",
		Migrate: func(tx *gorm.DB) error {
			type Approval struct {
				UnevaluatedRules string `gorm:"type:text"`
			}
			return tx.Migrator().AddColumn(&Approval{}, "UnevaluatedRules")
		},
		Rollback: func(tx *gorm.DB) error {
			type Approval struct{ UnevaluatedRules string }
			return tx.Migrator().DropColumn(&Approval{}, "UnevaluatedRules")
		},
	}, {
		// An organisation's model screen: the chat-completions endpoint,
		// the model, and its API key, sealed.
		ID: "202611300001_model_screens",
		Migrate: func(tx *gorm.DB) error {
			type ModelScreen struct {
				OrganizationID string `gorm:"primaryKey;size:40"`
				URL            string `gorm:"size:2048;not null"`
				Model          string `gorm:"size:200;not null"`
				APIKey         string `gorm:"type:text;not null"`
				UpdatedBy      string `gorm:"size:40;not null"`
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			return tx.Migrator().CreateTable(&ModelScreen{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("model_screens") },
	}, {
		// The trace an outbox event was written in, which its deliveries
		// continue (internal/tracing).
		ID: "202612010001_event_traceparent",
		Migrate: func(tx *gorm.DB) error {
			type Event struct {
				Traceparent string `gorm:"size:55;not null;default:''"`
			}
			return tx.Migrator().AddColumn(&Event{}, "Traceparent")
		},
		Rollback: func(tx *gorm.DB) error {
			type Event struct{ Traceparent string }
			return tx.Migrator().DropColumn(&Event{}, "Traceparent")
		},
	}, {
		// Execution receipts: what ran of what a decision token decided,
		// one per token (its jti).
		ID: "202612020001_receipts",
		Migrate: func(tx *gorm.DB) error {
			type Receipt struct {
				ID             string  `gorm:"primaryKey;size:40"`
				OrganizationID string  `gorm:"size:40;not null;index"`
				TokenID        string  `gorm:"size:60;not null;uniqueIndex"`
				ApprovalID     *string `gorm:"size:40;index"`
				GateCheckID    *string `gorm:"size:40;index"`
				FlowID         *string `gorm:"size:40;index"`
				Action         *string `gorm:"size:200"`
				Outcome        string  `gorm:"size:20;not null"`
				Result         string  `gorm:"type:text"`
				Input          string  `gorm:"type:text"`
				InputSHA256    string  `gorm:"size:64;not null"`
				ApprovedSHA256 string  `gorm:"size:64;not null"`
				Mismatch       bool    `gorm:"not null"`
				StartedAt      time.Time
				FinishedAt     time.Time
				ReportedByID   string `gorm:"size:60;not null"`
				ReportedBy     string `gorm:"size:320;not null"`
				CreatedAt      time.Time
			}
			return tx.Migrator().CreateTable(&Receipt{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("receipts") },
	}, {
		// Members' delegations while away, and on whose behalf an
		// approval was decided.
		ID: "202612030001_delegations",
		Migrate: func(tx *gorm.DB) error {
			type Delegation struct {
				DelegatorID    string    `gorm:"primaryKey;size:40"`
				OrganizationID string    `gorm:"size:40;not null;index"`
				DelegateID     string    `gorm:"size:40;not null;index"`
				From           time.Time `gorm:"column:starts_at;not null"`
				Until          time.Time `gorm:"column:ends_at;not null"`
				Note           string    `gorm:"type:text;not null"`
				StartedAt      *time.Time
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			if err := tx.Migrator().CreateTable(&Delegation{}); err != nil {
				return err
			}
			type Approval struct {
				DecidedOnBehalfOfID *string `gorm:"size:40"`
				DecidedOnBehalfOf   *string `gorm:"size:320"`
			}
			for _, col := range []string{"DecidedOnBehalfOfID", "DecidedOnBehalfOf"} {
				if err := tx.Migrator().AddColumn(&Approval{}, col); err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			type Approval struct {
				DecidedOnBehalfOfID *string
				DecidedOnBehalfOf   *string
			}
			for _, col := range []string{"DecidedOnBehalfOfID", "DecidedOnBehalfOf"} {
				if err := tx.Migrator().DropColumn(&Approval{}, col); err != nil {
					return err
				}
			}
			return tx.Migrator().DropTable("delegations")
		},
	}, {
		// Standing mandates, their uses, the check each allowed, and the
		// organisation's setting letting members grant them.
		ID: "202612040001_mandates",
		Migrate: func(tx *gorm.DB) error {
			type Mandate struct {
				ID             string `gorm:"primaryKey;size:40"`
				OrganizationID string `gorm:"size:40;not null;index:idx_mandates_org_action,priority:1"`
				Action         string `gorm:"size:200;not null;index:idx_mandates_org_action,priority:2"`
				Condition      string `gorm:"type:text;not null"`
				Agents         string `gorm:"type:text;not null"`
				BudgetCount    *int
				BudgetSumField *string `gorm:"size:200"`
				BudgetSum      *float64
				BudgetWindow   string `gorm:"size:20;not null"`
				StartsAt       time.Time
				ExpiresAt      time.Time `gorm:"index"`
				Note           string    `gorm:"type:text;not null"`
				GranterID      string    `gorm:"size:40;not null;index"`
				GranterName    string    `gorm:"size:320;not null"`
				ApprovalID     *string   `gorm:"size:40;uniqueIndex"`
				RevokedAt      *time.Time
				RevokedByID    *string `gorm:"size:60"`
				RevokedBy      *string `gorm:"size:320"`
				CreatedAt      time.Time
			}
			type MandateUse struct {
				ID             string    `gorm:"primaryKey;size:40"`
				OrganizationID string    `gorm:"size:40;not null"`
				MandateID      string    `gorm:"size:40;not null;index:idx_mandate_uses_window,priority:1"`
				GateCheckID    string    `gorm:"size:40;not null;uniqueIndex"`
				FlowID         *string   `gorm:"size:40"`
				Amount         float64   `gorm:"not null"`
				CreatedAt      time.Time `gorm:"index:idx_mandate_uses_window,priority:2"`
			}
			if err := tx.Migrator().CreateTable(&Mandate{}, &MandateUse{}); err != nil {
				return err
			}
			type GateCheck struct {
				MandateID *string `gorm:"size:40;index"`
			}
			if err := tx.Migrator().AddColumn(&GateCheck{}, "MandateID"); err != nil {
				return err
			}
			if err := tx.Migrator().CreateIndex(&GateCheck{}, "MandateID"); err != nil {
				return err
			}
			type Organization struct {
				MembersMayGrantMandates bool `gorm:"not null;default:false"`
			}
			return tx.Migrator().AddColumn(&Organization{}, "MembersMayGrantMandates")
		},
		Rollback: func(tx *gorm.DB) error {
			type Organization struct{ MembersMayGrantMandates bool }
			if err := tx.Migrator().DropColumn(&Organization{}, "MembersMayGrantMandates"); err != nil {
				return err
			}
			type GateCheck struct{ MandateID *string }
			if err := tx.Migrator().DropColumn(&GateCheck{}, "MandateID"); err != nil {
				return err
			}
			return tx.Migrator().DropTable("mandate_uses", "mandates")
		},
	}, {
		// The asked indexes carry what orders an inbox (models.Asking): the
		// organisation, whether the request still waits on the person,
		// when it is due and its risk's rank, under partial indexes of the
		// rows still waiting.
		ID: "202612050001_inbox_order",
		Migrate: func(tx *gorm.DB) error {
			// Each step may be taken again: the migration runs outside a
			// transaction, and a second run completes a first that failed.
			for _, t := range inboxOrderTables {
				m := tx.Table(t.asked).Migrator()
				for _, col := range inboxOrderFields {
					if m.HasColumn(&inboxOrderColumns{}, col) {
						continue
					}
					if err := m.AddColumn(&inboxOrderColumns{}, col); err != nil {
						return err
					}
				}
				if err := tx.Exec("UPDATE " + t.asked + " SET organization_id = r.organization_id, waiting = (r.status = '" + t.open + "'), " +
					"due_at = " + t.due + ", risk_rank = " + t.rank + " FROM " + t.table + " r WHERE r.id = " + t.asked + "." + t.column).Error; err != nil {
					return err
				}
				if err := actedBackfill(tx, t); err != nil {
					return err
				}
				for name, cols := range t.indexes() {
					if err := tx.Exec("CREATE INDEX IF NOT EXISTS " + name + " ON " + t.asked +
						" (organization_id, person_id, " + cols + ") WHERE waiting").Error; err != nil {
						return err
					}
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			for _, t := range inboxOrderTables {
				for name := range t.indexes() {
					if err := tx.Exec("DROP INDEX " + name).Error; err != nil {
						return err
					}
				}
				for _, col := range inboxOrderFields {
					if err := tx.Table(t.asked).Migrator().DropColumn(&inboxOrderColumns{}, col); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}, {
		// The open requests by age: the gauges read the oldest open
		// request of each kind for the whole instance, which without it
		// sorted every open row.
		ID: "202612060001_open_by_age",
		Migrate: func(tx *gorm.DB) error {
			for _, t := range requestTables {
				if err := tx.Exec("CREATE INDEX IF NOT EXISTS idx_" + t + "_status_created ON " + t + " (status, created_at)").Error; err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			for _, t := range requestTables {
				if err := tx.Exec("DROP INDEX idx_" + t + "_status_created").Error; err != nil {
					return err
				}
			}
			return nil
		},
	}, {
		// The keys an action names as its executors: besides the key or
		// person a token was issued to, the only ones whose receipts of
		// its tokens are taken.
		ID: "202612070002_action_executors",
		Migrate: func(tx *gorm.DB) error {
			type Action struct {
				Executors string `gorm:"type:text;not null;default:'[]'"`
			}
			return tx.Migrator().AddColumn(&Action{}, "Executors")
		},
		Rollback: func(tx *gorm.DB) error {
			type Action struct{ Executors string }
			return tx.Migrator().DropColumn(&Action{}, "Executors")
		},
	}, {
		// An inbox lists what needs attention first (models.Attention):
		// the most severe risk, then the earliest due. The waiting rows'
		// index by that order takes the place of the one by due time, and
		// the kinds without a risk rank as medium (2), not critical.
		ID: "202612080001_inbox_attention",
		Migrate: func(tx *gorm.DB) error {
			for _, t := range inboxOrderTables {
				if t.rank == "0" {
					if err := tx.Exec("UPDATE " + t.asked + " SET risk_rank = 2").Error; err != nil {
						return err
					}
				}
				if err := tx.Exec("CREATE INDEX IF NOT EXISTS idx_" + t.asked + "_waiting_attention ON " + t.asked +
					" (organization_id, person_id, risk_rank, due_at, " + t.column + ") WHERE waiting").Error; err != nil {
					return err
				}
				if err := tx.Exec("DROP INDEX IF EXISTS idx_" + t.asked + "_waiting").Error; err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			for _, t := range inboxOrderTables {
				if err := tx.Exec("CREATE INDEX IF NOT EXISTS idx_" + t.asked + "_waiting ON " + t.asked +
					" (organization_id, person_id, due_at, risk_rank, " + t.column + ") WHERE waiting").Error; err != nil {
					return err
				}
				if err := tx.Exec("DROP INDEX idx_" + t.asked + "_waiting_attention").Error; err != nil {
					return err
				}
			}
			return nil
		},
	}, {
		// A replay answers with the first response's Location, kept with
		// it (keys stored before replay without one).
		ID: "202612080002_idempotent_location",
		Migrate: func(tx *gorm.DB) error {
			type IdempotencyKey struct {
				Location string `gorm:"size:2048;not null;default:''"`
			}
			return tx.Migrator().AddColumn(&IdempotencyKey{}, "Location")
		},
		Rollback: func(tx *gorm.DB) error {
			type IdempotencyKey struct{ Location string }
			return tx.Migrator().DropColumn(&IdempotencyKey{}, "Location")
		},
	}, {
		// One table of the people every kind asks (models.RequestPerson),
		// filled from the three per kind. Those stay for a release, so that
		// processes of the previous one run during a rolling upgrade;
		// MendAsking gives the requests they made meanwhile their rows.
		ID: "202612090001_request_people",
		Migrate: func(tx *gorm.DB) error {
			type RequestPerson struct {
				RequestID      string `gorm:"primaryKey;size:40"`
				PersonID       string `gorm:"primaryKey;size:40"`
				Kind           string `gorm:"size:20;not null"`
				OrganizationID string `gorm:"size:40;not null;default:''"`
				Waiting        bool   `gorm:"not null;default:false"`
				DueAt          *time.Time
				RiskRank       int `gorm:"not null;default:0"`
			}
			// Each step may be taken again, as in 202612050001.
			if !tx.Migrator().HasTable(&RequestPerson{}) {
				if err := tx.Migrator().CreateTable(&RequestPerson{}); err != nil {
					return err
				}
			}
			for _, k := range requestPeopleSources {
				if err := tx.Exec("INSERT INTO request_people (request_id, person_id, kind, organization_id, waiting, due_at, risk_rank) " +
					"SELECT a." + k.column + ", a.person_id, '" + k.kind + "', a.organization_id, a.waiting, a.due_at, a.risk_rank FROM " + k.asked + " a " +
					"WHERE NOT EXISTS (SELECT 1 FROM request_people p WHERE p.request_id = a." + k.column + " AND p.person_id = a.person_id)").Error; err != nil {
					return err
				}
			}
			for name, cols := range map[string]string{
				"idx_request_people_person":            "person_id, kind, request_id",
				"idx_request_people_waiting_attention": "organization_id, person_id, kind, risk_rank, due_at, request_id",
				"idx_request_people_waiting_id":        "organization_id, person_id, kind, request_id",
			} {
				where := ""
				if name != "idx_request_people_person" {
					where = " WHERE waiting"
				}
				if err := tx.Exec("CREATE INDEX IF NOT EXISTS " + name + " ON request_people (" + cols + ")" + where).Error; err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("request_people") },
	}, {
		// One table of requests of every kind (models.Request), filled from
		// the three kinds' tables, which keep their columns for a release so
		// that processes of the previous one run during a rolling upgrade;
		// MendRequests gives what they write meanwhile its rows.
		ID: "202612100001_requests",
		Migrate: func(tx *gorm.DB) error {
			type Request struct {
				ID             string    `gorm:"primaryKey;size:40"`
				Kind           string    `gorm:"size:20;not null"`
				OrganizationID string    `gorm:"size:40;not null"`
				Status         string    `gorm:"size:20;not null"`
				Title          string    `gorm:"size:200;not null"`
				ExpiresAt      time.Time `gorm:"not null"`
				ExternalID     *string   `gorm:"size:255"`
				FlowID         *string   `gorm:"size:40"`
				Requester      string    `gorm:"size:60;not null"`
				RequestedBy    string    `gorm:"size:320;not null"`
				Seq            int       `gorm:"not null"`
				Risk           string    `gorm:"size:20;not null;default:''"`
				SettledAt      *time.Time
				SettledBy      *string `gorm:"size:320"`
				CreatedAt      time.Time
				UpdatedAt      time.Time
			}
			// Each step may be taken again, as in 202612050001.
			if !tx.Migrator().HasTable(&Request{}) {
				if err := tx.Migrator().CreateTable(&Request{}); err != nil {
					return err
				}
			}
			for _, k := range requestsSources {
				if err := tx.Exec("INSERT INTO requests (id, kind, organization_id, status, title, expires_at, external_id, flow_id, " +
					"requester, requested_by, seq, risk, settled_at, settled_by, created_at, updated_at) " +
					"SELECT r.id, '" + k.kind + "', r.organization_id, r.status, r.title, r.expires_at, r.external_id, r.flow_id, " +
					"r.requester, r.requested_by, r.seq, " + k.risk + ", " +
					"CASE WHEN r.status <> '" + k.open + "' THEN COALESCE(" + k.settledAt + ", r.updated_at) END, " +
					"CASE WHEN r.status <> '" + k.open + "' THEN " + k.settledBy + " END, r.created_at, r.updated_at FROM " + k.table + " r " +
					"WHERE NOT EXISTS (SELECT 1 FROM requests q WHERE q.id = r.id)").Error; err != nil {
					return err
				}
			}
			for name, cols := range map[string]string{
				// A person's history: settled requests, the most recent first.
				"idx_requests_settled":   "organization_id, settled_at, id",
				"idx_requests_requester": "organization_id, requester, settled_at",
			} {
				if err := tx.Exec("CREATE INDEX IF NOT EXISTS " + name + " ON requests (" + cols + ")").Error; err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("requests") },
	}, {
		// A flow's requests of every kind are read from requests.
		ID: "202612110001_requests_flow",
		Migrate: func(tx *gorm.DB) error {
			return tx.Exec("CREATE INDEX IF NOT EXISTS idx_requests_flow ON requests (organization_id, flow_id) WHERE flow_id IS NOT NULL").Error
		},
		Rollback: func(tx *gorm.DB) error { return tx.Exec("DROP INDEX IF EXISTS idx_requests_flow").Error },
	}, {
		// An audit entry moves its organisation's chain head in the
		// statement that inserts it: every transition writes an entry, and
		// a separate update of the head cost each a round trip.
		ID: "202612120001_audit_head_follows_entries",
		Migrate: func(tx *gorm.DB) error {
			return execAll(tx, auditHeadTrigger[tx.Dialector.Name()])
		},
		Rollback: func(tx *gorm.DB) error {
			if tx.Dialector.Name() == "postgres" {
				return execAll(tx, []string{"DROP TRIGGER IF EXISTS audit_head_follows ON audit_entries",
					"DROP FUNCTION IF EXISTS audit_head_follows()"})
			}
			return tx.Exec("DROP TRIGGER IF EXISTS audit_head_follows").Error
		},
	}, {
		// An approval keeps the people it asks as they were asked, as the
		// other kinds do, so that reading one reads no directory.
		ID: "202612130001_approval_asked",
		Migrate: func(tx *gorm.DB) error {
			type Approval struct {
				Asked string `gorm:"type:text"`
			}
			if !tx.Migrator().HasColumn(&Approval{}, "Asked") {
				err := tx.Transaction(func(tx *gorm.DB) error {
					if err := tx.Migrator().AddColumn(&Approval{}, "Asked"); err != nil {
						return err
					}
					return endSessionsOfEarlierReleases(tx)
				})
				if err != nil {
					return err
				}
			}
			return approvalsAskedBackfill(tx)
		},
		Rollback: func(tx *gorm.DB) error {
			type Approval struct{ Asked string }
			return tx.Migrator().DropColumn(&Approval{}, "Asked")
		},
	}, {
		// A create names people by display name in any case
		// (DirectoryStore.LookUp): without these, a large organisation's
		// every member and guest is read to find them.
		ID: "202612140001_people_by_name",
		Migrate: func(tx *gorm.DB) error {
			return execAll(tx, []string{
				"CREATE INDEX IF NOT EXISTS idx_members_org_name ON members (organization_id, LOWER(name))",
				"CREATE INDEX IF NOT EXISTS idx_guests_org_name ON guests (organization_id, LOWER(name))",
			})
		},
		Rollback: func(tx *gorm.DB) error {
			return execAll(tx, []string{"DROP INDEX IF EXISTS idx_members_org_name", "DROP INDEX IF EXISTS idx_guests_org_name"})
		},
	}, {
		// An organisation's settings_version counts the writes to what a
		// create reads of its settings, so a process can keep them
		// (settingsCache) and know from the organisation's row, which the
		// API key's read brings, when its copy is out of date.
		ID: "202612150001_settings_version",
		Migrate: func(tx *gorm.DB) error {
			type Organization struct {
				SettingsVersion int64 `gorm:"not null;default:0"`
			}
			return tx.Transaction(func(tx *gorm.DB) error {
				if !tx.Migrator().HasColumn(&Organization{}, "SettingsVersion") {
					if err := tx.Migrator().AddColumn(&Organization{}, "SettingsVersion"); err != nil {
						return err
					}
					if err := endSessionsOfEarlierReleases(tx); err != nil {
						return err
					}
				}
				return execAll(tx, settingsVersionTriggers(tx.Dialector.Name()))
			})
		},
		Rollback: func(tx *gorm.DB) error {
			var drop []string
			for _, t := range settingsTables {
				for op := range t.ops {
					if tx.Dialector.Name() == "postgres" {
						drop = append(drop, fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", settingsTrigger(t.table, op), t.table))
					} else {
						drop = append(drop, "DROP TRIGGER IF EXISTS "+settingsTrigger(t.table, op))
					}
				}
			}
			if tx.Dialector.Name() == "postgres" {
				drop = append(drop, "DROP FUNCTION IF EXISTS settings_changed()")
			}
			type Organization struct{ SettingsVersion int64 }
			if err := execAll(tx, drop); err != nil {
				return err
			}
			return tx.Migrator().DropColumn(&Organization{}, "SettingsVersion")
		},
	},
}

// settingsTables are the tables whose writes change what a create reads of
// its organisation's settings, and which writes: a member's matter only as
// a delegation's delegator or delegate (active or not, named, gone).
var settingsTables = []struct {
	table string
	ops   map[string]string // trigger's name suffix: its event
}{
	{"rules", map[string]string{"insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}},
	{"model_screens", map[string]string{"insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}},
	{"delegations", map[string]string{"insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}},
	{"members", map[string]string{"update": "UPDATE OF active, name, email", "delete": "DELETE"}},
}

// settingsTrigger names the trigger of table's writes of kind op (a key of
// settingsTables' ops).
func settingsTrigger(table, op string) string { return table + "_settings_" + op }

// settingsVersionTriggers bump organizations.settings_version on each
// write settingsTables names.
func settingsVersionTriggers(dialect string) []string {
	var out []string
	if dialect == "postgres" {
		out = append(out, `CREATE OR REPLACE FUNCTION settings_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' THEN
		UPDATE organizations SET settings_version = settings_version + 1 WHERE id = OLD.organization_id;
	ELSE
		UPDATE organizations SET settings_version = settings_version + 1 WHERE id = NEW.organization_id;
	END IF;
	RETURN NULL;
END $$`)
	}
	for _, t := range settingsTables {
		for _, suffix := range slices.Sorted(maps.Keys(t.ops)) {
			name, event := settingsTrigger(t.table, suffix), t.ops[suffix]
			if dialect == "postgres" {
				out = append(out, fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", name, t.table),
					fmt.Sprintf("CREATE TRIGGER %s AFTER %s ON %s FOR EACH ROW EXECUTE FUNCTION settings_changed()", name, event, t.table))
				continue
			}
			row := "NEW"
			if suffix == "delete" {
				row = "OLD"
			}
			out = append(out, fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %s AFTER %s ON %s
BEGIN
	UPDATE organizations SET settings_version = settings_version + 1 WHERE id = %s.organization_id;
END`, name, event, t.table, row))
		}
	}
	return out
}

// approvalsAskedBackfill names the people each approval asks, as the
// directory has them, on approvals without them, a batch at a time: one
// read of the batch's people per organisation, one write per approval.
func approvalsAskedBackfill(tx *gorm.DB) error {
	type approval struct {
		ID             string
		OrganizationID string
		ApproverIDs    StringList
	}
	// Each batch starts after the last one's id, along the primary key,
	// rather than scanning the table again for what is still unnamed.
	for after := ""; ; {
		var batch []approval
		if err := tx.Table("approvals").Select("id, organization_id, approver_ids").Where("id > ? AND asked IS NULL", after).
			Order("id").Limit(500).Find(&batch).Error; err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		after = batch[len(batch)-1].ID
		people := map[string][]string{}
		for _, a := range batch {
			people[a.OrganizationID] = append(people[a.OrganizationID], a.ApproverIDs...)
		}
		named := map[string]map[string]PersonRef{}
		for orgID, ids := range people {
			refs, err := RefsOf(tx, orgID, ids)
			if err != nil {
				return err
			}
			named[orgID] = refs
		}
		for _, a := range batch {
			asked := JSON[[]PersonRef]{V: make([]PersonRef, len(a.ApproverIDs))}
			for i, id := range a.ApproverIDs {
				asked.V[i] = named[a.OrganizationID][id].Shown()
			}
			// One a process of this release wrote meanwhile stays as it is.
			if err := tx.Table("approvals").Where("id = ? AND asked IS NULL", a.ID).Update("asked", asked).Error; err != nil {
				return err
			}
		}
	}
}

// auditHeadTrigger makes each audit entry inserted the end of its
// organisation's chain (AuditHead), by dialect. writeAudit has locked the
// head and computed the entry's hash from it in the same transaction.
var auditHeadTrigger = map[string][]string{
	"sqlite": {`CREATE TRIGGER IF NOT EXISTS audit_head_follows AFTER INSERT ON audit_entries
BEGIN
	UPDATE audit_heads SET position = NEW.position, hash = NEW.entry_hash WHERE organization_id = NEW.organization_id;
END`},
	"postgres": {`CREATE OR REPLACE FUNCTION audit_head_follows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE audit_heads SET position = NEW.position, hash = NEW.entry_hash WHERE organization_id = NEW.organization_id;
	RETURN NULL;
END $$`,
		"DROP TRIGGER IF EXISTS audit_head_follows ON audit_entries",
		"CREATE TRIGGER audit_head_follows AFTER INSERT ON audit_entries FOR EACH ROW EXECUTE FUNCTION audit_head_follows()"},
}

// endSessionsOfEarlierReleases ends, on PostgreSQL, the sessions on this
// database of releases 0.2.0 and earlier, told apart by the
// application_name they do not set (Open sets it). They read tables with
// SELECT *, so a statement they prepared before a column was added is
// refused (0A000) and they answer 500; ended, they connect again and
// prepare anew, and a request caught mid-statement answers 503. Run in the
// transaction that adds the column: its lock holds their reads of that
// table until it commits. A database being made from nothing has none.
func endSessionsOfEarlierReleases(tx *gorm.DB) error {
	if fresh, _ := tx.Statement.Context.Value(freshDatabase{}).(bool); fresh || tx.Dialector.Name() != "postgres" {
		return nil
	}
	return tx.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND usename = current_user AND pid <> pg_backend_pid()
		AND backend_type = 'client backend' AND application_name = ''`).Error
}

// execAll runs statements in order, stopping at the first that fails.
func execAll(tx *gorm.DB, statements []string) error {
	for _, q := range statements {
		if err := tx.Exec(q).Error; err != nil {
			return err
		}
	}
	return nil
}

// requestsSources are the kinds' tables that migration
// 202612100001_requests copies into requests: each kind, its open status,
// and its risk, settled time and settler in SQL over its row (r).
var requestsSources = []struct{ table, kind, open, risk, settledAt, settledBy string }{
	{"approvals", "approval", "pending", "r.risk", "r.decided_at", "r.decided_by"},
	{"collections", "collection", "open", "''", "r.settled_at", "NULL"},
	{"reviews", "review", "open", "''", "r.settled_at", "NULL"},
}

// requestPeopleSources are the per-kind tables of the people asked that
// migration 202612090001_request_people copies: the table, the column naming
// the request, and the kind.
var requestPeopleSources = []struct{ asked, column, kind string }{
	{"approval_approvers", "approval_id", "approval"},
	{"collection_respondents", "collection_id", "collection"},
	{"review_reviewers", "review_id", "review"},
}

// requestTables are the tables of the request kinds, as migration
// 202612060001_open_by_age indexes them.
var requestTables = []string{"approvals", "collections", "reviews"}

// inboxOrderTable is a kind's asked index as migration
// 202612050001_inbox_order fills it: the kind's table, its open status, its
// due time and risk rank in SQL over its row (r), and in its JSON column
// acted the people who have done what it asks, under the field
// personField.
type inboxOrderTable struct {
	table, asked, column, open, due, rank string
	acted, personField                    string
}

// inboxOrderColumns are the columns migration 202612050001_inbox_order
// adds to each asked index, inboxOrderFields their fields.
type inboxOrderColumns struct {
	OrganizationID string `gorm:"size:40;not null;default:''"`
	Waiting        bool   `gorm:"not null;default:false"`
	DueAt          *time.Time
	RiskRank       int `gorm:"not null;default:0"`
}

var inboxOrderFields = []string{"OrganizationID", "Waiting", "DueAt", "RiskRank"}

// indexes are the partial indexes over t's waiting rows, by name, each's
// columns after the organisation and the person: one per order an inbox
// reads, the most urgent and the newest (also every id waiting, for a
// delegation).
func (t inboxOrderTable) indexes() map[string]string {
	return map[string]string{"idx_" + t.asked + "_waiting": "due_at, risk_rank, " + t.column, "idx_" + t.asked + "_waiting_id": t.column}
}

var inboxOrderTables = []inboxOrderTable{
	{"approvals", "approval_approvers", "approval_id", "pending", "r.expires_at",
		"CASE r.risk WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END", "", ""},
	{"collections", "collection_respondents", "collection_id", "open", "COALESCE(r.due_at, r.expires_at)", "0",
		"replies", "respondentId"},
	{"reviews", "review_reviewers", "review_id", "open", "r.expires_at", "0", "verdicts", "reviewerId"},
}

// actedBackfill takes the people who have acted on an open request (in its
// JSON column t.acted) off its waiting rows, a page of requests at a time.
func actedBackfill(tx *gorm.DB, t inboxOrderTable) error {
	if t.acted == "" {
		return nil
	}
	after := ""
	for {
		var rows []struct {
			ID    string
			Acted string
		}
		if err := tx.Table(t.table).Select("id, "+t.acted+" AS acted").Where("status = ? AND id > ?", t.open, after).
			Order("id").Limit(500).Scan(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			var acted []map[string]any
			if json.Unmarshal([]byte(r.Acted), &acted) != nil {
				continue // unreadable: its next transition sets its rows (Requests.Apply)
			}
			for _, a := range acted {
				person, _ := a[t.personField].(string)
				if err := tx.Table(t.asked).Where(t.column+" = ? AND person_id = ?", r.ID, person).
					Update("waiting", false).Error; err != nil {
					return err
				}
			}
		}
		if len(rows) < 500 {
			return nil
		}
		after = rows[len(rows)-1].ID
	}
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
