package models

import (
	"context"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
)

// SystemStore reads the figures an operator watches: requests waiting,
// and the outbox's lag. The admin System page reads them for one
// organisation and the metrics for the instance (AllOrganizations), so a
// page and a dashboard never disagree on what they count.
type SystemStore struct{ *core }

// AllOrganizations, as an organisation id, reads the figures of every
// organisation together: for the instance's metrics, never for a person.
const AllOrganizations = ""

// openKinds are the request tables and the status of a record still
// waiting in each.
var openKinds = []struct{ kind, table, open string }{
	{events.RequestApproval, "approvals", states.Pending},
	{events.RequestCollection, "collections", states.Open},
	{events.RequestReview, "reviews", states.Open},
}

// OpenCount is how many requests of one kind are waiting, how many of them
// past their expiry (their workflow should have ended them: stuck), and
// when the oldest was created.
type OpenCount struct {
	Kind       string
	Open       int64
	PastExpiry int64
	Oldest     *time.Time
}

// OpenRequests counts the waiting requests of each kind, every kind
// listed.
func (s *SystemStore) OpenRequests(ctx context.Context, orgID string) ([]OpenCount, error) {
	now := Now()
	out := make([]OpenCount, 0, len(openKinds))
	for _, k := range openKinds {
		open := func() *gorm.DB {
			q := s.db.WithContext(ctx).Table(k.table).Where("status = ?", k.open)
			if orgID != AllOrganizations {
				q = q.Where("organization_id = ?", orgID)
			}
			return q
		}
		c := OpenCount{Kind: k.kind}
		if err := open().Count(&c.Open).Error; err != nil {
			return nil, err
		}
		if c.Open == 0 {
			out = append(out, c)
			continue
		}
		if err := open().Where("expires_at < ?", now).Count(&c.PastExpiry).Error; err != nil {
			return nil, err
		}
		var oldest []time.Time
		if err := open().Order("created_at").Limit(1).Pluck("created_at", &oldest).Error; err != nil {
			return nil, err
		}
		if len(oldest) > 0 {
			c.Oldest = &oldest[0]
		}
		out = append(out, c)
	}
	return out, nil
}

// OpenRequest is one waiting request, as the operator's view lists it.
type OpenRequest struct {
	Kind, ID, Title      string
	CreatedAt, ExpiresAt time.Time
}

// OldestOpen lists the n requests that have waited longest, of any kind.
func (s *SystemStore) OldestOpen(ctx context.Context, orgID string, n int) ([]OpenRequest, error) {
	var all []OpenRequest
	for _, k := range openKinds {
		var rows []struct {
			ID, Title            string
			CreatedAt, ExpiresAt time.Time
		}
		q := s.db.WithContext(ctx).Table(k.table).Where("status = ?", k.open)
		if orgID != AllOrganizations {
			q = q.Where("organization_id = ?", orgID)
		}
		if err := q.Select("id, title, created_at, expires_at").Order("created_at, id").Limit(n).Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			all = append(all, OpenRequest{Kind: k.kind, ID: r.ID, Title: r.Title, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt})
		}
	}
	sortOldestFirst(all)
	if len(all) > n {
		all = all[:n]
	}
	return all, nil
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
