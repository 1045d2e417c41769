// Package models holds the GORM records, their queries and the versioned
// migrations. It is the read model the API serves from.
package models

import (
	"time"
)

// Plans an organisation can be on.
const (
	PlanFree       = "free"
	PlanTeam       = "team"
	PlanEnterprise = "enterprise"
)

// Member roles.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// Team kinds: named sets of members.
const (
	TeamKindTeam      = "team"
	TeamKindGroup     = "group"
	TeamKindWorkspace = "workspace"
)

// Key kinds.
const (
	KeyAgent  = "agent"
	KeyAdmin  = "admin"
	KeyMember = "member"
)

// DefaultMaxApprovalExpiry is how long a request may wait when the caller
// sets no expiry and the organisation sets no other maximum.
const DefaultMaxApprovalExpiry = 30 * 24 * time.Hour

// DefaultDecisionTokenLifetime is how long a decision token holds after
// the decision when neither the approval (or its action) nor its
// organisation says otherwise.
const DefaultDecisionTokenLifetime = time.Hour

// Organization is a tenant; every other record belongs to one.
type Organization struct {
	ID                       string `gorm:"primaryKey;size:40"`
	Name                     string `gorm:"size:200;not null"`
	Plan                     string `gorm:"size:20;not null"`
	GuestsMayApprove         bool   `gorm:"not null"`
	MaxApprovalExpirySeconds int64  `gorm:"not null"`
	CreatedAt                time.Time
	UpdatedAt                time.Time
	// DecisionTokenTTLSeconds is how long an approval's decision token
	// holds after the decision, unless the approval says otherwise; zero
	// is DefaultDecisionTokenLifetime.
	DecisionTokenTTLSeconds int64 `gorm:"column:decision_token_ttl_seconds;not null;default:0"`
	// ReportOrigins are the other origins (https://host[:port]) the
	// organisation's reports may load from and connect to, beside their
	// own.
	ReportOrigins StringList `gorm:"type:text;not null;default:'[]'"`
	// MembersMayGrantMandates lets every member grant standing mandates
	// within their own authority, not only owners and administrators.
	MembersMayGrantMandates bool `gorm:"not null;default:false"`
	// SettingsVersion counts the writes to the organisation's rules, model
	// screen, delegations and members' standing (triggers keep it; GORM
	// only reads it): a process's copy of them is current while it matches.
	SettingsVersion int64 `gorm:"->;not null;default:0"`
}

// ReadershipAnalytics reports whether the organisation's plan includes
// readership analytics beyond a report's total views: team and
// enterprise.
func (o *Organization) ReadershipAnalytics() bool {
	return o.Plan == PlanTeam || o.Plan == PlanEnterprise
}

// MaxApprovalExpiry is the longest a request may wait undecided.
func (o *Organization) MaxApprovalExpiry() time.Duration {
	if o.MaxApprovalExpirySeconds <= 0 {
		return DefaultMaxApprovalExpiry
	}
	return time.Duration(o.MaxApprovalExpirySeconds) * time.Second
}

// DecisionTokenLifetime is how long the organisation's decision tokens
// hold after the decision, unless an approval or its action says
// otherwise (decisions.Lifetime).
func (o *Organization) DecisionTokenLifetime() time.Duration {
	if o.DecisionTokenTTLSeconds <= 0 {
		return DefaultDecisionTokenLifetime
	}
	return time.Duration(o.DecisionTokenTTLSeconds) * time.Second
}

// Member is a person in an organisation.
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

// Administers reports whether the member is an owner or administrator.
func (m *Member) Administers() bool { return m.Role == RoleOwner || m.Role == RoleAdmin }

// DisplayName is the name, or the email when no name is set.
func (m *Member) DisplayName() string {
	if m.Name != "" {
		return m.Name
	}
	return m.Email
}

// Team is a named set of members: a team, a directory group or a workspace.
type Team struct {
	ID             string   `gorm:"primaryKey;size:40"`
	OrganizationID string   `gorm:"size:40;not null;uniqueIndex:idx_teams_org_name,priority:1"`
	Name           string   `gorm:"size:200;not null;uniqueIndex:idx_teams_org_name,priority:2"`
	Kind           string   `gorm:"size:20;not null"`
	Members        []Member `gorm:"many2many:team_members"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Guest is an admitted address outside the organisation's members.
type Guest struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;uniqueIndex:idx_guests_org_email,priority:1"`
	Email          string `gorm:"size:320;not null;uniqueIndex:idx_guests_org_email,priority:2"`
	Name           string `gorm:"size:200;not null"`
	CreatedAt      time.Time
}

// APIKey is a bearer credential. Only the SHA-256 of the secret is kept.
type APIKey struct {
	ID             string     `gorm:"primaryKey;size:40"`
	OrganizationID string     `gorm:"size:40;not null;index"`
	Kind           string     `gorm:"size:20;not null"`
	Name           string     `gorm:"size:200;not null"`
	Scopes         StringList `gorm:"type:text;not null"`
	Hash           string     `gorm:"size:64;not null;uniqueIndex"`
	Prefix         string     `gorm:"size:32;not null"`
	MemberID       *string    `gorm:"size:40;index"`
	CreatedAt      time.Time
	RevokedAt      *time.Time
	// Organization, and Member for a member token, are read with the key
	// when a call authenticates, in the same statement.
	Organization *Organization `gorm:"foreignKey:OrganizationID"`
	Member       *Member       `gorm:"foreignKey:MemberID"`
}

// TableName keeps the table name readable.
func (APIKey) TableName() string { return "api_keys" }

// IdempotencyKey records one Idempotency-Key's request and, once finished,
// its response, so replays across processes return the same bytes. A key
// belongs to the API key or member token that sent it.
type IdempotencyKey struct {
	OrganizationID string `gorm:"primaryKey;size:40"`
	PrincipalID    string `gorm:"primaryKey;size:40"`
	Key            string `gorm:"column:idempotency_key;primaryKey;size:255"`
	RequestHash    string `gorm:"size:64;not null"`
	// ResourceID is the record the request made, written in the same
	// transaction as the record, so a retry after a crash resumes it.
	ResourceID string `gorm:"size:40;not null;default:''"`
	// Completed is false while the first request runs.
	Completed    bool   `gorm:"not null"`
	StatusCode   int    `gorm:"not null"`
	ContentType  string `gorm:"size:100;not null"`
	ResponseBody []byte
	// Location is the first response's Location header, empty without.
	Location string `gorm:"size:2048;not null;default:''"`
	// LockedUntil is the lease of an unfinished attempt: renewed while it
	// runs, so it lapses only when its process died.
	LockedUntil time.Time `gorm:"not null"`
	ExpiresAt   time.Time `gorm:"not null;index"`
	CreatedAt   time.Time
}

// Rule is an organisation rule applied to new approvals: it raises the
// approvals needed, raises an ethics concern, or restricts fields.
type Rule struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;uniqueIndex:idx_rules_org_name,priority:1"`
	Name           string `gorm:"size:200;not null;uniqueIndex:idx_rules_org_name,priority:2"`
	Kind           string `gorm:"size:20;not null"`
	// Condition is a CEL expression over the request; empty matches all.
	Condition         string     `gorm:"type:text;not null"`
	RequiredApprovals int        `gorm:"not null"`
	Principle         string     `gorm:"size:200;not null"`
	Concern           string     `gorm:"type:text;not null"`
	Fields            StringList `gorm:"type:text;not null"`
	// EscalationAfter (seconds, 0 for none) and EscalationTo are an
	// approval rule's escalation.
	EscalationAfter int        `gorm:"not null;default:0"`
	EscalationTo    StringList `gorm:"type:text"`
	Enabled         bool       `gorm:"not null"`
	CreatedAt       time.Time
	UpdatedAt       time.Time
}
