// Package wire holds the one serializer per resource: what a record looks
// like to the outside, used by the API, webhooks, callbacks and evidence.
package wire

import (
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// All serializes every row with ser.
func All[S, T any](rows []S, ser func(*S) T) []T {
	out := make([]T, len(rows))
	for i := range rows {
		out[i] = ser(&rows[i])
	}
	return out
}

// List is the envelope of every list: its rows and the cursor of the next
// page, null on the last.
type List[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

// NewList serializes rows with ser into the envelope; next is the next
// page's cursor, "" on the last.
func NewList[S, T any](rows []S, next string, ser func(*S) T) List[T] {
	out := List[T]{Data: All(rows, ser)}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}

// Organization is an organisation on the wire.
type Organization struct {
	ID                       string        `json:"id"`
	Name                     string        `json:"name"`
	Plan                     string        `json:"plan"`
	GuestsMayApprove         bool          `json:"guestsMayApprove"`
	MaxApprovalExpirySeconds int64         `json:"maxApprovalExpirySeconds"`
	DecisionTokenTTLSeconds  int64         `json:"decisionTokenTtlSeconds"`
	ReportOrigins            []string      `json:"reportOrigins"`
	MembersMayGrantMandates  bool          `json:"membersMayGrantMandates"`
	CreatedAt                wiretime.Time `json:"createdAt"`
	UpdatedAt                wiretime.Time `json:"updatedAt"`
}

// NewOrganization serializes o.
func NewOrganization(o *models.Organization) Organization {
	return Organization{ID: o.ID, Name: o.Name, Plan: o.Plan, GuestsMayApprove: o.GuestsMayApprove,
		MaxApprovalExpirySeconds: int64(o.MaxApprovalExpiry().Seconds()),
		DecisionTokenTTLSeconds:  int64(o.DecisionTokenLifetime().Seconds()),
		ReportOrigins:            NonNil(o.ReportOrigins), MembersMayGrantMandates: o.MembersMayGrantMandates,
		CreatedAt: wiretime.New(o.CreatedAt), UpdatedAt: wiretime.New(o.UpdatedAt)}
}

// Member is a member on the wire.
type Member struct {
	ID        string        `json:"id"`
	Email     string        `json:"email"`
	Name      string        `json:"name"`
	Role      string        `json:"role"`
	Active    bool          `json:"active"`
	CreatedAt wiretime.Time `json:"createdAt"`
	UpdatedAt wiretime.Time `json:"updatedAt"`
}

// NewMember serializes m.
func NewMember(m *models.Member) Member {
	return Member{ID: m.ID, Email: m.Email, Name: m.Name, Role: m.Role, Active: m.Active,
		CreatedAt: wiretime.New(m.CreatedAt), UpdatedAt: wiretime.New(m.UpdatedAt)}
}

// TeamMember is a team's member, briefly.
type TeamMember struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

// Team is a team, group or workspace on the wire.
type Team struct {
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	Kind      string        `json:"kind"`
	Members   []TeamMember  `json:"members"`
	CreatedAt wiretime.Time `json:"createdAt"`
}

// NewTeam serializes t with its members.
func NewTeam(t *models.Team) Team {
	out := Team{ID: t.ID, Name: t.Name, Kind: t.Kind, Members: make([]TeamMember, len(t.Members)), CreatedAt: wiretime.New(t.CreatedAt)}
	for i, m := range t.Members {
		out.Members[i] = TeamMember{ID: m.ID, Email: m.Email, Name: m.Name}
	}
	return out
}

// Guest is an admitted guest on the wire.
type Guest struct {
	ID        string        `json:"id"`
	Email     string        `json:"email"`
	Name      string        `json:"name"`
	CreatedAt wiretime.Time `json:"createdAt"`
}

// NewGuest serializes g.
func NewGuest(g *models.Guest) Guest {
	return Guest{ID: g.ID, Email: g.Email, Name: g.Name, CreatedAt: wiretime.New(g.CreatedAt)}
}

// Key describes a key without its secret.
type Key struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Kind      string         `json:"kind"`
	Scopes    []string       `json:"scopes"`
	Prefix    string         `json:"prefix"`
	MemberID  *string        `json:"memberId"`
	CreatedAt wiretime.Time  `json:"createdAt"`
	RevokedAt *wiretime.Time `json:"revokedAt"`
}

// NewKey serializes k.
func NewKey(k *models.APIKey) Key {
	sc := []string(k.Scopes)
	if sc == nil {
		sc = []string{}
	}
	return Key{ID: k.ID, Name: k.Name, Kind: k.Kind, Scopes: sc, Prefix: k.Prefix, MemberID: k.MemberID,
		CreatedAt: wiretime.New(k.CreatedAt), RevokedAt: wiretime.Ptr(k.RevokedAt)}
}

// Rule is an organisation rule on the wire.
type Rule struct {
	ID                string          `json:"id"`
	Name              string          `json:"name"`
	Kind              string          `json:"kind"`
	Condition         string          `json:"condition"`
	RequiredApprovals *int            `json:"requiredApprovals,omitempty"`
	Escalation        *RuleEscalation `json:"escalation,omitempty"`
	Principle         string          `json:"principle,omitempty"`
	Concern           string          `json:"concern,omitempty"`
	Fields            []string        `json:"fields,omitempty"`
	Enabled           bool            `json:"enabled"`
	CreatedAt         wiretime.Time   `json:"createdAt"`
	UpdatedAt         wiretime.Time   `json:"updatedAt"`
}

// RuleEscalation is an approval rule's escalation: after seconds.
type RuleEscalation struct {
	After int      `json:"after"`
	To    []string `json:"to"`
}

// NewRule serializes r.
func NewRule(r *models.Rule) Rule {
	out := Rule{ID: r.ID, Name: r.Name, Kind: r.Kind, Condition: r.Condition, Principle: r.Principle,
		Concern: r.Concern, Fields: r.Fields, Enabled: r.Enabled, CreatedAt: wiretime.New(r.CreatedAt), UpdatedAt: wiretime.New(r.UpdatedAt)}
	if r.RequiredApprovals > 0 {
		n := r.RequiredApprovals
		out.RequiredApprovals = &n
	}
	if r.EscalationAfter > 0 {
		out.Escalation = &RuleEscalation{After: r.EscalationAfter, To: NonNil(r.EscalationTo)}
	}
	return out
}

// NonNil makes an absent list an empty one on the wire.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
