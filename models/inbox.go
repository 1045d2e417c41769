package models

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
)

// The people every request asks (request_people, RequestPerson) answer
// "what waits on this person, most urgent first": each row carries whether
// the request still waits on that person and the request's urgency,
// written with the record at creation and brought in step by every
// transition (Requests.Apply). Two partial indexes over the rows still
// waiting, one per order, let a person's inbox read only their open
// requests whatever the history.

// RequestPerson is a person a request of any kind asks to act (an
// approver, a respondent, a reviewer): one row per request and person.
type RequestPerson struct {
	RequestID string `gorm:"primaryKey;size:40"`
	// Kind is the request's kind (its subject: "approval").
	Kind string `gorm:"size:20;not null"`
	Asking
}

// askedOf selects the ids of the requests of kind that asked personID,
// settled or not.
func askedOf(db *gorm.DB, kind, personID string) *gorm.DB {
	return db.Model(&RequestPerson{}).Select("request_id").Where("person_id = ? AND kind = ?", personID, kind)
}

// Asking is what a row of request_people holds beside the request.
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
	// Attention lists what needs attention first: the most severe risk,
	// then the earliest due.
	Attention InboxOrder = iota
	// Newest lists the most recently created first.
	Newest
)

// InboxOrders name the orders as the API and the pages take them.
var InboxOrders = map[string]InboxOrder{"attention": Attention, "newest": Newest}

// WaitingKey is where a request waiting on a person sorts in an inbox.
type WaitingKey struct {
	ID       string
	DueAt    time.Time
	RiskRank int
}

// Compare is -1 when a comes before b in order o, 1 when after, 0 for
// one request; ids sort by creation time whatever their kinds.
func (o InboxOrder) Compare(a, b WaitingKey) int {
	newer := func() int {
		switch {
		case a.ID == b.ID:
			return 0
		case ids.Newer(a.ID, b.ID):
			return -1
		}
		return 1
	}
	if o == Newest {
		return newer()
	}
	if c := cmp.Compare(a.RiskRank, b.RiskRank); c != 0 {
		return c
	}
	if c := a.DueAt.Compare(b.DueAt); c != 0 {
		return c
	}
	return -newer()
}

// orderBy is o in SQL over request_people, as Compare sorts within a
// kind.
func (o InboxOrder) orderBy() string {
	if o == Newest {
		return "request_people.request_id DESC"
	}
	return "request_people.risk_rank, request_people.due_at, request_people.request_id"
}

// riskLevels are the risks from the most severe: a risk's rank is its
// place here.
var riskLevels = []string{RiskCritical, RiskHigh, RiskMedium, RiskLow}

// unrisked is the rank of a kind without a risk (a request for
// information, a review): that of an approval that names none.
var unrisked = riskRank(RiskMedium)

// riskRank is risk's place in riskLevels; an unknown risk ranks as low.
func riskRank(risk string) int {
	if i := slices.Index(riskLevels, risk); i >= 0 {
		return i
	}
	return len(riskLevels) - 1
}

// Voice is the person whose act personID's is: whom they stand in for
// when the request asked them only as a delegate (via), else themselves.
// A person and whoever stands in for them act once between them, as the
// workflows count.
func Voice(via []Via, personID string) string {
	if v, ok := StandsInFor(via); ok {
		return v.ID
	}
	return personID
}

// ActedFor reports whether one of those who acted (by) acted for the
// person personID acts for; viaOf is how the request named each person.
func ActedFor(viaOf func(string) []Via, by []string, personID string) bool {
	mine := Voice(viaOf(personID), personID)
	return slices.ContainsFunc(by, func(b string) bool { return Voice(viaOf(b), b) == mine })
}

// IDsOf are the people who did each of acts (replies, verdicts), in order.
func IDsOf[A any](acts []A, who func(*A) string) []string {
	out := make([]string, len(acts))
	for i := range acts {
		out[i] = who(&acts[i])
	}
	return out
}

// PrepareAsked starts a new record's acts (replies, verdicts) and people
// asked as empty lists, never null.
func PrepareAsked[A any](acts *[]A, asked *[]PersonRef) {
	if *acts == nil {
		*acts = []A{}
	}
	if *asked == nil {
		*asked = []PersonRef{}
	}
}

// ActedAmong reports whether one of those who acted (by) acted for the
// person personID, among the people asked (refs) as a request that keeps
// them as refs has them.
func ActedAmong(refs []PersonRef, by []string, personID string) bool {
	return ActedFor(refsVia(refs), by, personID)
}

// refsVia is viaOf for a request that keeps its people as refs.
func refsVia(refs []PersonRef) func(string) []Via {
	return func(id string) []Via {
		for _, r := range refs {
			if r.ID == id {
				return r.Via
			}
		}
		return nil
	}
}

// asking returns the index rows of rec: one per person it asks, in the
// order asked.
func asking[T any, P RequestRecord[T]](rec *T) []Asking {
	h, k := P(rec).RequestHead(), P(rec).RequestKind()
	due := P(rec).RequestDue().UTC()
	rank := unrisked
	if risk, ok := riskOf(rec); ok {
		rank = riskRank(risk)
	}
	rows := make([]Asking, len(*h.asked))
	for i, p := range *h.asked {
		waiting := *h.status == k.Open && !P(rec).ActedBy(p)
		rows[i] = Asking{OrganizationID: h.organizationID, PersonID: p, Waiting: waiting, DueAt: due, RiskRank: rank}
	}
	return rows
}

// rewriteAsking replaces request id's index rows, was, by want, unless
// they are the same. A transition passes the rows of the record as it was
// rather than reading them: this release and the one before keep them in
// step with every record they write, so those are the rows stored.
func (k *RequestKind) rewriteAsking(tx *gorm.DB, id string, was, want []Asking) error {
	byPerson := func(a, b Asking) int { return strings.Compare(a.PersonID, b.PersonID) }
	slices.SortFunc(want, byPerson)
	slices.SortFunc(was, byPerson)
	if slices.Equal(want, was) {
		return nil
	}
	if err := tx.Where("request_id = ?", id).Delete(&RequestPerson{}).Error; err != nil {
		return err
	}
	return k.insertAsking(tx, id, want)
}

// insertAsking writes the rows of request id.
func (k *RequestKind) insertAsking(tx *gorm.DB, id string, rows []Asking) error {
	if len(rows) == 0 {
		return nil
	}
	out := make([]RequestPerson, len(rows))
	for i, r := range rows {
		out[i] = RequestPerson{RequestID: id, Kind: k.Subject, Asking: r}
	}
	return tx.Create(&out).Error
}

// AskingOf selects the rows of the organisation's requests of the kind
// waiting on personID.
func (k *RequestKind) AskingOf(tx *gorm.DB, orgID, personID string) *gorm.DB {
	return tx.Model(&RequestPerson{}).Where(waitingOn, orgID, personID, k.Subject)
}

// personWaiting is the condition on the rows waiting on a person of an
// organisation (its two parameters), named by table so that it holds in a
// join too. The condition on waiting is literal so that PostgreSQL's plans
// for any parameters may use the partial indexes. waitingOn narrows it to
// a kind (a third parameter).
const (
	personWaiting = "request_people.organization_id = ? AND request_people.person_id = ? AND request_people.waiting"
	waitingOn     = personWaiting + " AND request_people.kind = ?"
)

// waiting lists the organisation's records waiting on personID in order,
// at most limit of them, read through request_people.
func waiting[T any, P RequestRecord[T]](tx *gorm.DB, orgID, personID string, order InboxOrder, limit int) ([]T, error) {
	k := P(nil).RequestKind()
	q := tx.Model(new(T)).Joins("JOIN request_people ON request_people.request_id = "+k.Table+".id").
		Where(waitingOn, orgID, personID, k.Subject).Where(k.Table+".organization_id = ?", orgID)
	var out []T
	if err := q.Order(order.orderBy()).Limit(max(limit, 1)).Find(&out).Error; err != nil {
		return nil, err
	}
	recs := make([]*T, len(out))
	for i := range out {
		recs[i] = &out[i]
	}
	return out, loadAll[T, P](tx, orgID, recs)
}

// Counts are how many requests wait on a person: in all, by risk (for a
// kind with one) and due before a time.
type Counts struct {
	Total     int
	ByRisk    map[string]int
	DueBefore int
}

// counts counts the organisation's records waiting on personID from the
// asked index alone.
func counts[T any, P RequestRecord[T]](tx *gorm.DB, orgID, personID string, dueBefore time.Time) (Counts, error) {
	k := P(nil).RequestKind()
	_, risky := any(P(nil)).(rated)
	var rows []struct {
		RiskRank int
		Count    int
		DueSoon  int
	}
	out := Counts{ByRisk: map[string]int{}}
	if err := k.AskingOf(tx, orgID, personID).
		Select("risk_rank, COUNT(*) AS count, SUM(CASE WHEN due_at < ? THEN 1 ELSE 0 END) AS due_soon", dueBefore.UTC()).
		Group("risk_rank").Find(&rows).Error; err != nil {
		return out, err
	}
	for _, r := range rows {
		if risky {
			out.ByRisk[riskLevels[min(r.RiskRank, len(riskLevels)-1)]] += r.Count
		}
		out.Total += r.Count
		out.DueBefore += r.DueSoon
	}
	return out, nil
}

// Counts counts the organisation's records waiting on personID, and those
// due before dueBefore.
func (r Requests[T, P]) Counts(ctx context.Context, orgID, personID string, dueBefore time.Time) (Counts, error) {
	return counts[T, P](r.s.db.WithContext(ctx), orgID, personID, dueBefore)
}

// WaitingKeys lists where the organisation's records waiting on personID
// sort, in order, at most limit: from the asked index alone, so the inbox
// of every kind loads only the records it shows.
func (r Requests[T, P]) WaitingKeys(ctx context.Context, orgID, personID string, order InboxOrder, limit int) ([]WaitingKey, error) {
	var out []WaitingKey
	err := r.k.AskingOf(r.s.db.WithContext(ctx), orgID, personID).
		Select("request_id AS id, due_at, risk_rank").Order(order.orderBy()).
		Limit(max(limit, 1)).Find(&out).Error
	return out, err
}

// Waiting lists the organisation's records waiting on personID (asked,
// open, and not yet acted on by them), in order, at most limit.
func (r Requests[T, P]) Waiting(ctx context.Context, orgID, personID string, order InboxOrder, limit int) ([]T, error) {
	return waiting[T, P](r.s.db.WithContext(ctx), orgID, personID, order, limit)
}
