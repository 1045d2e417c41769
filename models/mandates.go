package models

import (
	"context"
	"errors"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
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

// MandateRecord is a mandate to write with its event's data.
type MandateRecord struct {
	Mandate *Mandate
	Actor   Actor
	// EventData builds the data of the mandate's events.
	EventData func(*Mandate) ([]byte, error)
}

// CreateMandate writes a mandate, its audit entry and mandate.granted in
// one transaction. An approval grants one mandate: a second for it writes
// nothing, and *r.Mandate becomes the first.
func (s *GateStore) CreateMandate(ctx context.Context, r MandateRecord) error {
	m := r.Mandate
	m.ID, m.CreatedAt = newID(ids.Mandate), Now()
	m.Usage = MandateUsage{At: m.CreatedAt}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(m).Error; err != nil {
			return err
		}
		return mandateStep(tx, r, events.MandateGranted, "granted", mandateDetail(m), m.CreatedAt)
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) && m.ApprovalID != nil {
		db := s.db.WithContext(ctx)
		var first Mandate // a fresh record: Take would look for m's own id
		if err = db.Where("organization_id = ? AND approval_id = ?", m.OrganizationID, *m.ApprovalID).Take(&first).Error; err == nil {
			err = usageOf(db, Now(), &first)
			*m = first
		}
		return err
	}
	if err == nil {
		s.changes.EventWritten()
	}
	return err
}

// RevokeMandate ends a mandate at once, under its row lock, writing its
// audit entry and mandate.revoked. A mandate already ended (revoked or
// expired) stays as it was: revoking it is invalid_state and writes
// nothing, so the trail never records the end of something already dead.
func (s *GateStore) RevokeMandate(ctx context.Context, orgID, id string, r MandateRecord) (*Mandate, error) {
	var m Mandate
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Clauses(lockForUpdate(tx)...).Where("organization_id = ? AND id = ?", orgID, id).Take(&m).Error; err != nil {
			return notFound(err, "mandate "+id)
		}
		now := Now()
		if err := usageOf(tx, now, &m); err != nil {
			return err
		}
		if m.Ended() {
			return endedMandate(&m)
		}
		m.RevokedAt, m.RevokedByID, m.RevokedBy = &now, &r.Actor.ID, &r.Actor.Name
		if err := tx.Model(&m).Updates(map[string]any{"revoked_at": now, "revoked_by_id": r.Actor.ID, "revoked_by": r.Actor.Name}).Error; err != nil {
			return err
		}
		r.Mandate = &m
		return mandateStep(tx, r, events.MandateRevoked, "revoked", "mandate "+m.ID+" for "+m.Action, now)
	})
	if err != nil {
		return nil, err
	}
	s.changes.EventWritten()
	return &m, nil
}

// endedMandate refuses to act on m, which has ended, saying when.
func endedMandate(m *Mandate) error {
	if m.RevokedAt != nil {
		return apperr.New(apperr.InvalidState, "mandate %s was revoked at %s", m.ID, m.RevokedAt.Format(time.RFC3339))
	}
	return apperr.New(apperr.InvalidState, "mandate %s expired at %s", m.ID, m.ExpiresAt.Format(time.RFC3339))
}

// mandateStep writes a mandate's audit entry, numbered after its last
// (its steps after the grant run under the mandate's row lock), and its
// event.
func mandateStep(tx *gorm.DB, r MandateRecord, kind, action, detail string, at time.Time) error {
	m := r.Mandate
	seq, err := nextSeq(tx, m.OrganizationID, m.ID)
	if err != nil {
		return err
	}
	entry := &AuditEntry{ID: newID(ids.Audit), OrganizationID: m.OrganizationID, SubjectType: "mandate", SubjectID: m.ID,
		Seq: seq, Action: action, ActorID: r.Actor.ID, ActorName: r.Actor.Name, Detail: detail, At: at}
	if err := writeAudit(tx, entry); err != nil {
		return err
	}
	data, err := r.EventData(m)
	if err != nil {
		return err
	}
	return tx.Create(&Event{ID: newID(ids.Event), OrganizationID: m.OrganizationID, Kind: kind,
		SubjectType: "mandate", SubjectID: m.ID, Data: data, CreatedAt: at}).Error
}

// mandateDetail is a grant's line in the audit trail.
func mandateDetail(m *Mandate) string {
	d := "mandate for " + m.Action
	if m.Condition != "" {
		d += " where " + m.Condition
	}
	d += " until " + m.ExpiresAt.Format(time.RFC3339)
	if m.ApprovalID != nil {
		d += ", granted with approval " + *m.ApprovalID
	}
	return d
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

// MandateSpend is a mandate a check may spend, with the amount it would.
type MandateSpend struct {
	MandateID string
	Amount    float64
}

// ErrMandatesSpent is RecordGateCheck's answer when none of the check's
// mandates has budget left: nothing was written.
var ErrMandatesSpent = errors.New("no mandate covering the check has budget left")

// spendMandate spends the first of spends whose mandate is still live and
// has the budget, under the mandate's row lock, so concurrent checks never
// overspend: it records the use of check c and names the mandate on it.
// When the use leaves no budget in the window, the mandate's exhaustion is
// audited and mandate.exhausted written. None with budget left is
// ErrMandatesSpent.
func spendMandate(tx *gorm.DB, c *GateCheck, spends []MandateSpend, actor Actor, data func(*Mandate) ([]byte, error)) (*Mandate, error) {
	for _, sp := range spends {
		var m Mandate
		if err := tx.Clauses(lockForUpdate(tx)...).Where("organization_id = ? AND id = ?", c.OrganizationID, sp.MandateID).Take(&m).Error; err != nil {
			return nil, err
		}
		if !m.LiveAt(c.CreatedAt) {
			continue
		}
		if err := usageOf(tx, c.CreatedAt, &m); err != nil {
			return nil, err
		}
		if !m.Covers(m.Usage, sp.Amount) {
			continue
		}
		use := &MandateUse{ID: newID(ids.MandateUse), OrganizationID: c.OrganizationID, MandateID: m.ID, GateCheckID: c.ID,
			FlowID: c.FlowID, Amount: sp.Amount, CreatedAt: c.CreatedAt}
		if err := tx.Create(use).Error; err != nil {
			return nil, err
		}
		m.Usage.Uses++
		m.Usage.WindowCount++
		m.Usage.WindowSum += sp.Amount
		c.MandateID = &m.ID
		if m.Status() == MandateExhausted {
			r := MandateRecord{Mandate: &m, Actor: actor, EventData: data}
			// The detail names no check: the entry is on the timeline of
			// every flow that used the mandate, and the check may be
			// another flow's.
			if err := mandateStep(tx, r, events.MandateExhausted, "exhausted",
				"mandate "+m.ID+" for "+m.Action+" has no budget left in its window", c.CreatedAt); err != nil {
				return nil, err
			}
		}
		return &m, nil
	}
	return nil, ErrMandatesSpent
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
