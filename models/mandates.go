package models

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
)

// Mandate is a member's standing approval of a registered action, bounded
// by a condition, the agent keys it applies to, a budget per window and
// its times. Package mandates builds and checks it; the gate spends it.
type Mandate struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index:idx_mandates_org_action,priority:1"`
	Action         string `gorm:"size:200;not null;index:idx_mandates_org_action,priority:2"`
	// Condition is CEL over input and caller, as an action's policy rules;
	// empty holds always.
	Condition string `gorm:"type:text;not null"`
	// Agents are the agent key ids it applies to; empty means every agent
	// key of the organisation.
	Agents StringList `gorm:"type:text;not null"`
	// BudgetCount and BudgetSum (of the input's numeric BudgetSumField)
	// bound the uses per BudgetWindow; at least one is set.
	BudgetCount    *int
	BudgetSumField *string `gorm:"size:200"`
	BudgetSum      *float64
	BudgetWindow   string `gorm:"size:20;not null"`
	StartsAt       time.Time
	ExpiresAt      time.Time `gorm:"index"`
	Note           string    `gorm:"type:text;not null"`
	GranterID      string    `gorm:"size:40;not null;index"`
	GranterName    string    `gorm:"size:320;not null"`
	// ApprovalID is the approval whose page granted it, if one did: one
	// mandate per approval, so a form sent twice grants once.
	ApprovalID  *string `gorm:"size:40;uniqueIndex"`
	RevokedAt   *time.Time
	RevokedByID *string `gorm:"size:60"`
	RevokedBy   *string `gorm:"size:320"`
	CreatedAt   time.Time
	// Usage is the mandate's uses, filled by the reads (not a column).
	Usage MandateUsage `gorm:"-"`
}

// MandateUse is one gate check a mandate allowed, with the amount it spent
// of a sum budget (0 without one).
type MandateUse struct {
	ID             string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null"`
	MandateID      string    `gorm:"size:40;not null;index:idx_mandate_uses_window,priority:1"`
	GateCheckID    string    `gorm:"size:40;not null;uniqueIndex"`
	FlowID         *string   `gorm:"size:40"`
	Amount         float64   `gorm:"not null"`
	CreatedAt      time.Time `gorm:"index:idx_mandate_uses_window,priority:2"`
}

// Mandate budget windows: a rolling hour, day or week, or the mandate's
// whole life.
const (
	WindowHour    = "hour"
	WindowDay     = "day"
	WindowWeek    = "week"
	WindowMandate = "mandate"
)

// MandateWindows lists the budget windows.
var MandateWindows = []string{WindowHour, WindowDay, WindowWeek, WindowMandate}

// Mandate statuses, as a read shows them.
const (
	MandateScheduled = "scheduled"
	MandateActive    = "active"
	MandateExhausted = "exhausted"
	MandateExpired   = "expired"
	MandateRevoked   = "revoked"
)

// MandateUsage is what a mandate has spent: in all, and within the window
// that holds at At.
type MandateUsage struct {
	Uses        int
	WindowCount int
	WindowSum   float64
	At          time.Time
}

// WindowStart is when the budget window holding at t began (the mandate's
// start for a whole-mandate budget).
func (m *Mandate) WindowStart(t time.Time) time.Time {
	switch m.BudgetWindow {
	case WindowHour:
		return t.Add(-time.Hour)
	case WindowDay:
		return t.Add(-24 * time.Hour)
	case WindowWeek:
		return t.Add(-7 * 24 * time.Hour)
	}
	return time.Time{}
}

// Remaining is the budget left in the window after usage: the count and
// the sum, each nil when the mandate sets no such bound.
func (m *Mandate) Remaining(u MandateUsage) (count *int, sum *float64) {
	if m.BudgetCount != nil {
		c := max(*m.BudgetCount-u.WindowCount, 0)
		count = &c
	}
	if m.BudgetSum != nil {
		s := max(*m.BudgetSum-u.WindowSum, 0)
		sum = &s
	}
	return count, sum
}

// exhausted reports whether usage leaves no count or no sum in the
// window. An exhausted mandate covers nothing, not even a use spending 0:
// a sum budget spent is a bound like a count spent.
func (m *Mandate) exhausted(u MandateUsage) bool {
	count, sum := m.Remaining(u)
	return (count != nil && *count == 0) || (sum != nil && *sum <= 0)
}

// Covers reports whether the budget left after usage allows one more use
// spending amount.
func (m *Mandate) Covers(u MandateUsage, amount float64) bool {
	_, sum := m.Remaining(u)
	return !m.exhausted(u) && (sum == nil || *sum >= amount)
}

// Status is the mandate's state at its usage's time: revoked, expired,
// scheduled, exhausted (no budget left in the window), or active.
func (m *Mandate) Status() string {
	at := m.Usage.At
	switch {
	case m.RevokedAt != nil:
		return MandateRevoked
	case !at.Before(m.ExpiresAt):
		return MandateExpired
	case at.Before(m.StartsAt):
		return MandateScheduled
	case m.exhausted(m.Usage):
		return MandateExhausted
	}
	return MandateActive
}

// Ended reports whether the mandate is over for good at its usage's time,
// revoked or expired: nothing can happen to it any more, a revocation
// included. (An exhausted one may have budget again as its window rolls.)
func (m *Mandate) Ended() bool {
	s := m.Status()
	return s == MandateRevoked || s == MandateExpired
}

// LiveAt reports whether the mandate may allow a check at t: granted, not
// revoked, started and not expired.
func (m *Mandate) LiveAt(t time.Time) bool {
	return m.RevokedAt == nil && !t.Before(m.StartsAt) && t.Before(m.ExpiresAt)
}

// InsertMandate writes m, in ctx's transaction. A second mandate for one
// approval is ErrDuplicate, which ends the transaction.
func (s *GateStore) InsertMandate(ctx context.Context, m *Mandate) error {
	return insertIn(ctx, m)
}

// MandateOfApproval is the mandate granted with the organisation's
// approval, with its usage.
func (s *GateStore) MandateOfApproval(ctx context.Context, orgID, approvalID string) (*Mandate, error) {
	db := s.conn(ctx)
	var m Mandate
	if err := db.Where("organization_id = ? AND approval_id = ?", orgID, approvalID).Take(&m).Error; err != nil {
		return nil, notFound(err, "mandate of approval "+approvalID)
	}
	return &m, usageOf(db, Now(), &m)
}

// LockMandate reads the organisation's mandate id under its row lock, for
// the rest of ctx's transaction, with its usage at t.
func (s *GateStore) LockMandate(ctx context.Context, orgID, id string, t time.Time) (*Mandate, error) {
	m, err := lockedIn[Mandate](ctx, orgID, id, "mandate "+id)
	if err != nil {
		return nil, err
	}
	st, _ := inTx(ctx)
	return m, usageOf(st.tx, t, m)
}

// SaveRevocation writes who revoked m and when, in ctx's transaction.
func (s *GateStore) SaveRevocation(ctx context.Context, m *Mandate) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	return st.tx.Model(m).Updates(map[string]any{"revoked_at": m.RevokedAt, "revoked_by_id": m.RevokedByID, "revoked_by": m.RevokedBy}).Error
}

// InsertMandateUse writes one spend of a mandate, in ctx's transaction.
func (s *GateStore) InsertMandateUse(ctx context.Context, u *MandateUse) error {
	if u.ID == "" {
		u.ID = newID(ids.MandateUse)
	}
	return insertIn(ctx, u)
}

// MandateAudit is an audit entry on m's trail.
func MandateAudit(m *Mandate, seq int, action, detail string, by Actor, at time.Time) *AuditEntry {
	return &AuditEntry{OrganizationID: m.OrganizationID, SubjectType: "mandate", SubjectID: m.ID, Seq: seq, Action: action,
		ActorID: by.ID, ActorName: by.Name, Detail: detail, At: at}
}

// GetMandate returns one of the organisation's mandates with its usage.
func (s *GateStore) GetMandate(ctx context.Context, orgID, id string) (*Mandate, error) {
	db := s.db.WithContext(ctx)
	m, err := take[Mandate](db, orgID, id, "mandate "+id)
	if err != nil {
		return nil, err
	}
	return m, usageOf(db, Now(), m)
}

// MandateFilter narrows a list of mandates: those one member granted
// ("" for all), and those live now only.
type MandateFilter struct {
	GranterID string
	Live      bool
}

// ListMandates pages through the organisation's mandates, newest first,
// with their usage.
func (s *GateStore) ListMandates(ctx context.Context, orgID string, f MandateFilter, p Page) ([]Mandate, string, error) {
	db := s.db.WithContext(ctx)
	q := db.Where("organization_id = ?", orgID)
	if f.GranterID != "" {
		q = q.Where("granter_id = ?", f.GranterID)
	}
	now := Now()
	if f.Live {
		q = q.Where("revoked_at IS NULL AND expires_at > ?", now)
	}
	rows, next, err := list(q, p, ids.Mandate, func(m *Mandate) string { return m.ID })
	if err != nil {
		return nil, "", err
	}
	return rows, next, usagesOf(db, now, rows)
}

// LiveMandates are the organisation's mandates for action that may allow
// a check now, soonest to expire first, with their usage.
func (s *GateStore) LiveMandates(ctx context.Context, orgID, action string) ([]Mandate, error) {
	db := s.db.WithContext(ctx)
	now := Now()
	var rows []Mandate
	err := db.Where("organization_id = ? AND action = ? AND revoked_at IS NULL AND starts_at <= ? AND expires_at > ?", orgID, action, now, now).
		Order("expires_at, id").Find(&rows).Error
	if err != nil {
		return nil, err
	}
	return rows, usagesOf(db, now, rows)
}

// usageOf fills m's usage at t, in one statement: every check is one.
func usageOf(db *gorm.DB, t time.Time, m *Mandate) error {
	ms := []Mandate{*m}
	err := usagesOf(db, t, ms)
	m.Usage = ms[0].Usage
	return err
}

// usagesOf fills the usage at t of each of ms in one statement, whatever
// their number: each use is counted and summed in each window the
// mandates have, and each mandate keeps its own window's figures.
func usagesOf(db *gorm.DB, t time.Time, ms []Mandate) error {
	ids, index := make([]string, len(ms)), make(map[string]int, len(ms))
	var windows []string
	for i := range ms {
		ids[i], index[ms[i].ID], ms[i].Usage = ms[i].ID, i, MandateUsage{At: t}
		if !slices.Contains(windows, ms[i].BudgetWindow) {
			windows = append(windows, ms[i].BudgetWindow)
		}
	}
	if len(ms) == 0 {
		return nil
	}
	sel, args := "mandate_id, COUNT(*)", []any{}
	for _, w := range windows {
		since := (&Mandate{BudgetWindow: w}).WindowStart(t)
		sel += ", COUNT(CASE WHEN created_at > ? THEN 1 END), COALESCE(SUM(CASE WHEN created_at > ? THEN amount END), 0)"
		args = append(args, since, since)
	}
	rows, err := db.Model(&MandateUse{}).Select(sel, args...).Where("mandate_id IN ?", ids).Group("mandate_id").Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	counts, sums := make([]int, len(windows)), make([]float64, len(windows))
	var id string
	var uses int
	dest := []any{&id, &uses}
	for w := range windows {
		dest = append(dest, &counts[w], &sums[w])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		m := &ms[index[id]]
		w := slices.Index(windows, m.BudgetWindow)
		m.Usage.Uses, m.Usage.WindowCount, m.Usage.WindowSum = uses, counts[w], sums[w]
	}
	return rows.Err()
}

// mandatesOf reads the organisation's mandates named.
func mandatesOf(db *gorm.DB, orgID string, ids []string) ([]Mandate, error) {
	var out []Mandate
	if len(ids) == 0 {
		return out, nil
	}
	if err := db.Where("organization_id = ? AND id IN ?", orgID, ids).Order("id").Find(&out).Error; err != nil {
		return nil, err
	}
	return out, usagesOf(db, Now(), out)
}
