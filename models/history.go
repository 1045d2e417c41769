package models

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
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
	// Kind is the request's kind (events.RequestApproval, …).
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

// SettledFor pages through the settled requests of every kind personID was
// asked to act on or made in the organisation, the most recently settled
// first: one query over the requests table.
func (s *RequestStore) SettledFor(ctx context.Context, orgID, personID string, f HistoryFilter, p Page) ([]Settled, string, error) {
	db := s.db.WithContext(ctx)
	q := db.Model(&Request{}).Where("organization_id = ? AND settled_at IS NOT NULL", orgID)
	asked := db.Model(&RequestPerson{}).Select("request_id").Where("person_id = ?", personID)
	switch f.Role {
	case RoleAsked:
		q = q.Where("id IN (?)", asked)
	case RoleMade:
		q = q.Where("requester = ?", personID)
	default:
		q = q.Where("(id IN (?) OR requester = ?)", asked, personID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if p.Cursor != "" {
		after, err := decodeHistoryCursor(p.Cursor)
		if err != nil {
			return nil, "", err
		}
		q = q.Where("(settled_at < ? OR (settled_at = ? AND id < ?))", after.at, after.at, after.id)
	}
	var rows []Request
	if err := q.Order("settled_at DESC, id DESC").Limit(p.Limit + 1).Find(&rows).Error; err != nil {
		return nil, "", err
	}
	all := make([]Settled, len(rows))
	for i, r := range rows {
		all[i] = Settled{Kind: r.Kind, ID: r.ID, Title: r.Title, Status: r.Status, RequestedBy: r.RequestedBy,
			Risk: r.Risk, DecidedBy: r.SettledBy, SettledAt: r.SettledAt.UTC()}
	}
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
	if !ok || err != nil || !slices.ContainsFunc(requestKinds, func(k *RequestKind) bool { return ids.Made(id, k.IDPrefix) }) {
		return historyCursor{}, bad
	}
	return historyCursor{t.UTC(), id}, nil
}
