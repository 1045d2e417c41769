package models

import (
	"context"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// SystemStore reads the figures an operator watches: requests waiting,
// and the outbox's lag. The admin System page reads them for one
// organisation and the metrics for the instance (AllOrganizations), so a
// page and a dashboard never disagree on what they count.
type SystemStore struct{ *core }

// AllOrganizations, as an organisation id, reads the figures of every
// organisation together: for the instance's metrics, never for a person.
const AllOrganizations = ""

// OpenCount is how many requests of one kind are waiting, how many of them
// are overdue (more than OverdueGrace past their expiry: their workflow
// should have ended them, so they are stuck), and when the oldest was
// created.
type OpenCount struct {
	Kind    string
	Open    int64
	Overdue int64
	Oldest  *time.Time
}

// OverdueGrace is how far past its expiry an open request may be before
// it counts as overdue: its workflow's timer should have expired it by
// then.
const OverdueGrace = time.Minute

// Overdue reports whether a request open now and expiring at expiresAt is
// overdue.
func Overdue(expiresAt, now time.Time) bool { return now.After(expiresAt.Add(OverdueGrace)) }

// OpenRequests counts the waiting requests of each kind, every kind
// listed, approvals first.
func (s *SystemStore) OpenRequests(ctx context.Context, orgID string) ([]OpenCount, error) {
	db, now := s.db.WithContext(ctx), Now()
	out := make([]OpenCount, 0, len(requestKinds))
	for _, k := range requestKinds {
		c, err := k.openCount(db, orgID, now)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// openCount counts one kind's waiting requests, and those overdue, in one
// query, and finds the oldest.
func (k *RequestKind) openCount(db *gorm.DB, orgID string, now time.Time) (OpenCount, error) {
	open := func() *gorm.DB { return k.waitingIn(db, orgID) }
	c := OpenCount{Kind: k.Subject}
	err := open().Select("COUNT(*), COALESCE(SUM(CASE WHEN expires_at < ? THEN 1 ELSE 0 END), 0)", now.Add(-OverdueGrace)).
		Row().Scan(&c.Open, &c.Overdue)
	if err != nil || c.Open == 0 {
		return c, err
	}
	var oldest []time.Time
	if err := open().Order("created_at").Limit(1).Pluck("created_at", &oldest).Error; err != nil {
		return c, err
	}
	if len(oldest) > 0 {
		c.Oldest = &oldest[0]
	}
	return c, nil
}

// OpenRequest is one waiting request, as the operator's view lists it.
type OpenRequest struct {
	Kind, ID, Title      string
	CreatedAt, ExpiresAt time.Time
}

// waitingIn selects one kind's waiting requests of organisation orgID, or
// of every organisation.
func (k *RequestKind) waitingIn(db *gorm.DB, orgID string) *gorm.DB {
	q := db.Table(k.Table).Where("status = ?", k.Open)
	if orgID != AllOrganizations {
		q = q.Where("organization_id = ?", orgID)
	}
	return q
}

// OldestOpen lists the n requests that have waited longest, of any kind.
func (s *SystemStore) OldestOpen(ctx context.Context, orgID string, n int) ([]OpenRequest, error) {
	db := s.db.WithContext(ctx)
	var all []OpenRequest
	for _, k := range requestKinds {
		rs, err := k.oldestOpen(db, orgID, n)
		if err != nil {
			return nil, err
		}
		all = append(all, rs...)
	}
	sortOldestFirst(all)
	if len(all) > n {
		all = all[:n]
	}
	return all, nil
}

// oldestOpen lists one kind's n longest-waiting requests.
func (k *RequestKind) oldestOpen(db *gorm.DB, orgID string, n int) ([]OpenRequest, error) {
	var rows []OpenRequest
	err := k.waitingIn(db, orgID).Select("id, title, created_at, expires_at").Order("created_at, id").Limit(n).Scan(&rows).Error
	for i := range rows {
		rows[i].Kind = k.Subject
	}
	return rows, err
}

func sortOldestFirst(rs []OpenRequest) {
	slices.SortFunc(rs, func(a, b OpenRequest) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// OutboxLag is how long the oldest event not yet dispatched has waited;
// zero when none waits. It is the instance's: the dispatcher serves every
// organisation at once.
func (s *SystemStore) OutboxLag(ctx context.Context) (time.Duration, error) {
	var oldest []time.Time
	err := s.db.WithContext(ctx).Model(&Event{}).Where("dispatched_at IS NULL").Order("created_at").Limit(1).
		Pluck("created_at", &oldest).Error
	if err != nil || len(oldest) == 0 {
		return 0, err
	}
	return max(Now().Sub(oldest[0]), 0), nil
}
