package models

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"
)

// The asked index of each kind (approval_approvers,
// collection_respondents, review_reviewers) answers "what waits on this
// person, most urgent first" from one index: each row carries whether the
// request still waits on that person and the request's urgency, written
// with the record at creation and by every transition that changes them
// (Requests.Apply). The index is partial, over the rows still waiting, so
// a person's inbox reads only their open requests whatever the history.

// Asking is what a row of an asked index holds beside the request's id.
type Asking struct {
	OrganizationID string `gorm:"size:40;not null;default:''"`
	PersonID       string `gorm:"primaryKey;size:40;index"`
	// Waiting is set while the request is open and the person has not yet
	// done what it asks of them (a reply, a verdict).
	Waiting bool `gorm:"not null;default:false"`
	// DueAt is when the request wants its people to act by, in UTC, and
	// RiskRank orders those due at once, the most severe first (0).
	DueAt    time.Time
	RiskRank int `gorm:"not null;default:0"`
}

// InboxOrder is the order an inbox lists what waits.
type InboxOrder int

const (
	// MostUrgent lists the earliest due first, then the most severe risk.
	MostUrgent InboxOrder = iota
	// Newest lists the most recently created first.
	Newest
)

// riskLevels are the risks from the most severe: a risk's rank is its
// place here.
var riskLevels = []string{RiskCritical, RiskHigh, RiskMedium, RiskLow}

// riskRank is risk's place in riskLevels; an unknown risk ranks as low.
func riskRank(risk string) int {
	if i := slices.Index(riskLevels, risk); i >= 0 {
		return i
	}
	return len(riskLevels) - 1
}

// asking returns the index rows of rec: one per person it asks, in the
// order asked.
func (k *requestKind[T]) asking(h requestHead, rec *T) []Asking {
	due := k.dueAt(rec).UTC()
	rank := 0
	if k.risk != nil {
		rank = riskRank(k.risk(rec))
	}
	rows := make([]Asking, len(*h.asked))
	for i, p := range *h.asked {
		waiting := *h.status == k.open && (k.acted == nil || !k.acted(rec, p))
		rows[i] = Asking{OrganizationID: h.organizationID, PersonID: p, Waiting: waiting, DueAt: due, RiskRank: rank}
	}
	return rows
}

// insertAsking writes the index rows of request id.
func (k *requestKind[T]) insertAsking(tx *gorm.DB, id string, rows []Asking) error {
	if len(rows) == 0 {
		return nil
	}
	maps := make([]map[string]any, len(rows))
	for i, r := range rows {
		maps[i] = map[string]any{k.askedColumn: id, "person_id": r.PersonID, "organization_id": r.OrganizationID,
			"waiting": r.Waiting, "due_at": r.DueAt, "risk_rank": r.RiskRank}
	}
	return tx.Model(k.askedIndex).Create(maps).Error
}

// askingOf selects the index rows of the organisation's requests waiting
// on personID. The condition on waiting is literal so that PostgreSQL's
// plans for any parameters may use the partial index.
func (k *requestKind[T]) askingOf(tx *gorm.DB, orgID, personID string) *gorm.DB {
	return tx.Table(k.askedTable).Where("organization_id = ? AND person_id = ? AND waiting", orgID, personID)
}

// waiting lists the organisation's records waiting on personID in order,
// at most limit of them, read through the asked index.
func (k *requestKind[T]) waiting(tx *gorm.DB, orgID, personID string, order InboxOrder, limit int) ([]T, error) {
	a, id := k.askedTable, k.askedTable+"."+k.askedColumn
	q := tx.Model(new(T)).Joins("JOIN "+a+" ON "+id+" = "+k.table+".id").
		Where(a+".organization_id = ? AND "+a+".person_id = ? AND "+a+".waiting", orgID, personID).
		Where(k.table+".organization_id = ?", orgID)
	switch order {
	case Newest:
		q = q.Order(id + " DESC")
	default:
		q = q.Order(a + ".due_at").Order(a + ".risk_rank").Order(id)
	}
	var out []T
	if err := q.Limit(limit).Find(&out).Error; err != nil {
		return nil, err
	}
	recs := make([]*T, len(out))
	for i := range out {
		recs[i] = &out[i]
	}
	if k.load != nil {
		return out, k.load(tx, orgID, recs)
	}
	return out, nil
}

// waitingIDs lists the ids of the organisation's records waiting on
// personID, oldest first.
func (k *requestKind[T]) waitingIDs(tx *gorm.DB, orgID, personID string) ([]string, error) {
	var out []string
	err := k.askingOf(tx, orgID, personID).Order(k.askedColumn).Pluck(k.askedColumn, &out).Error
	return out, err
}

// Waiting lists the organisation's records waiting on personID (asked,
// open, and not yet acted on by them), in order, at most limit.
func (r Requests[T, P]) Waiting(ctx context.Context, orgID, personID string, order InboxOrder, limit int) ([]T, error) {
	return r.k.waiting(r.s.db.WithContext(ctx), orgID, personID, order, limit)
}
