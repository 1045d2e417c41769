package models

import (
	"cmp"
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/states"
)

// History roles: a person was asked to act on a request (decide an
// approval, reply to a request for information), or made it.
const (
	RoleAsked = "asked"
	RoleMade  = "made"
)

// HistoryFilter narrows a person's history; empty fields match all.
type HistoryFilter struct {
	Status string // a settled status
	Role   string // RoleAsked or RoleMade
}

// Settled is one settled request of any kind in a person's history.
type Settled struct {
	// Kind is events.RequestApproval or events.RequestCollection.
	Kind        string
	ID          string
	Title       string
	Status      string
	RequestedBy string
	// Risk is an approval's; empty for other kinds.
	Risk string
	// DecidedBy names who approved or rejected an approval; nil otherwise.
	DecidedBy *string
	// SettledAt is when it was decided, completed, expired or cancelled.
	SettledAt time.Time
}

// historyKind is one kind of request as the history reads it.
type historyKind struct {
	kind  string
	model any
	// open is the kind's one unsettled status; statuses all of them.
	open     string
	statuses []string
	// settledAt is the SQL for when a record settled, columns the ones
	// read.
	settledAt string
	columns   string
}

// historyKinds are the kinds a history lists.
var historyKinds = []historyKind{
	{
		kind: events.RequestApproval, model: &Approval{},
		open: states.Pending, statuses: states.Approval,
		// Expiry and cancellation leave decided_at empty; their transition
		// is the record's last write.
		settledAt: "COALESCE(decided_at, updated_at)",
		columns:   "id, title, status, requested_by, risk, decided_by, decided_at AS settled_at, updated_at",
	},
	{
		kind: events.RequestCollection, model: &Collection{},
		open: states.Open, statuses: states.Collection,
		settledAt: "COALESCE(settled_at, updated_at)",
		columns:   "id, title, status, requested_by, settled_at, updated_at",
	},
	{
		kind: events.RequestReview, model: &Review{},
		open: states.Open, statuses: states.Review,
		settledAt: "COALESCE(settled_at, updated_at)",
		columns:   "id, title, status, requested_by, settled_at, updated_at",
	},
}

// historyRow is what historyKind.columns read. The settled time is read
// as its columns, not the COALESCE, which SQLite returns as text.
type historyRow struct {
	ID, Title, Status, RequestedBy string
	Risk                           string
	DecidedBy                      *string
	SettledAt                      *time.Time
	UpdatedAt                      time.Time
}

// SettledFor pages through the settled requests of every kind personID was
// asked to act on or made in the organisation, the most recently settled
// first.
func (s *RequestStore) SettledFor(ctx context.Context, orgID, personID string, f HistoryFilter, p Page) ([]Settled, string, error) {
	var after *historyCursor
	if p.Cursor != "" {
		c, err := decodeHistoryCursor(p.Cursor)
		if err != nil {
			return nil, "", err
		}
		after = &c
	}
	db := s.db.WithContext(ctx)
	var all []Settled
	for _, k := range historyKinds {
		if f.Status != "" && !slices.Contains(k.statuses, f.Status) {
			continue
		}
		q := db.Model(k.model).Select(k.columns).Where("organization_id = ? AND status <> ?", orgID, k.open)
		switch f.Role {
		case RoleAsked:
			q = q.Where("id IN (?)", askedOf(db, k.kind, personID))
		case RoleMade:
			q = q.Where("requester = ?", personID)
		default:
			q = q.Where("(id IN (?) OR requester = ?)", askedOf(db, k.kind, personID), personID)
		}
		if f.Status != "" {
			q = q.Where("status = ?", f.Status)
		}
		if after != nil {
			q = q.Where("("+k.settledAt+" < ? OR ("+k.settledAt+" = ? AND id < ?))", after.at, after.at, after.id)
		}
		var rows []historyRow
		if err := q.Order(k.settledAt + " DESC").Order("id DESC").Limit(p.Limit + 1).Scan(&rows).Error; err != nil {
			return nil, "", err
		}
		for _, r := range rows {
			at := r.UpdatedAt
			if r.SettledAt != nil {
				at = *r.SettledAt
			}
			all = append(all, Settled{Kind: k.kind, ID: r.ID, Title: r.Title, Status: r.Status, RequestedBy: r.RequestedBy,
				Risk: r.Risk, DecidedBy: r.DecidedBy, SettledAt: at.UTC()})
		}
	}
	// Each kind's page is in order; together they make one.
	slices.SortFunc(all, func(a, b Settled) int {
		return cmp.Or(b.SettledAt.Compare(a.SettledAt), strings.Compare(b.ID, a.ID))
	})
	next := ""
	if len(all) > p.Limit {
		all = all[:p.Limit]
		last := all[len(all)-1]
		next = historyCursor{last.SettledAt, last.ID}.encode()
	}
	return all, next, nil
}

// historyCursor is where a page of history ended: the last request's
// settled time and id.
type historyCursor struct {
	at time.Time
	id string
}

func (c historyCursor) encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.at.Format(time.RFC3339Nano) + " " + c.id))
}

func decodeHistoryCursor(s string) (historyCursor, error) {
	bad := apperr.Field(apperr.InvalidRequest, "cursor", "cursor is not one this list issued: send the nextCursor of its last page")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return historyCursor{}, bad
	}
	at, id, ok := strings.Cut(string(b), " ")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil || !slices.ContainsFunc([]string{ids.Approval, ids.Collection, ids.Review}, func(prefix string) bool { return ids.Made(id, prefix) }) {
		return historyCursor{}, bad
	}
	return historyCursor{t.UTC(), id}, nil
}
