package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
)

// RequestBase is the record every kind of request (Approval, Collection,
// Review) starts with: its columns in each kind's table, under the same
// names and with indexes named after the table.
type RequestBase struct {
	ID             string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null;index:,composite:org_status,priority:1;index:,composite:org_external,priority:1"`
	Status         string    `gorm:"size:20;not null;index:,composite:org_status,priority:2;index:,composite:status_created,priority:1"`
	Title          string    `gorm:"size:200;not null"`
	ExpiresAt      time.Time `gorm:"not null"`
	ExternalID     *string   `gorm:"size:255;index:,composite:org_external,priority:2"`
	FlowID         *string   `gorm:"size:40;index"`
	Metadata       RawJSON   `gorm:"type:text"`
	CallbackURL    *string   `gorm:"size:2048"`
	// CallbackSecret is set only on the record a create returns, to be
	// shown once; the database keeps it sealed.
	CallbackSecret       *string `gorm:"-"`
	SealedCallbackSecret *string `gorm:"column:callback_secret;type:text"`
	// Requester is who created it: a member id for a member token, else
	// the key id. Only the requester answers an approval's questions.
	Requester   string `gorm:"size:60;not null"`
	RequestedBy string `gorm:"size:320;not null"`
	// Seq is the last workflow transition applied; zero until the workflow
	// has run its first step, which is how the reconciler finds records no
	// workflow owns.
	Seq       int       `gorm:"not null;index"`
	CreatedAt time.Time `gorm:"index:,composite:status_created,priority:2"`
	UpdatedAt time.Time
}

// head is what the shared paths read of the record, whom it asks among
// the kind's own columns.
func (b *RequestBase) HeadAsking(asked *StringList) RequestHead {
	return RequestHead{&b.ID, b.OrganizationID, b.FlowID, &b.Status, &b.Seq, &b.CreatedAt, &b.UpdatedAt,
		&b.CallbackSecret, &b.SealedCallbackSecret, asked, b}
}

// RequestHead is what every kind of request's record holds for the shared
// paths, through pointers into the record.
type RequestHead struct {
	id                                   *string
	organizationID                       string
	flowID                               *string
	status                               *string
	seq                                  *int
	createdAt, updatedAt                 *time.Time
	callbackSecret, sealedCallbackSecret **string
	// asked are the people the request asks to act (approvers,
	// respondents, reviewers), whom its index table lists.
	asked *StringList
	base  *RequestBase
}

// RequestRecord is the record of a kind of request (T), through its
// pointer. What the shared paths ask of a kind are its record's methods;
// what only some kinds have are the hooks below, which a record implements
// when it needs them.
type RequestRecord[T any] interface {
	*T
	// RequestHead points into the record at what every kind holds.
	RequestHead() RequestHead
	// RequestKind is the kind's names and table, the same for every record of it
	// (called on a nil record too).
	RequestKind() *RequestKind
	// RequestDue is when the record wants its people to act by, the inbox's
	// order.
	RequestDue() time.Time
	// ActedBy reports whether personID has done what the record asks of
	// them (a reply, a verdict), which takes it out of their inbox before
	// it settles.
	ActedBy(personID string) bool
	// SettledWhen is when a settled record settled, when it keeps that time
	// (nil: at its last write), and who settled it by their act, if one
	// did.
	SettledWhen() (at *time.Time, by *string)
}

// The hooks of the kinds that need them.
type (
	// rated is a kind with a risk level, for the metrics and the inbox's
	// order.
	rated interface{ RiskLevel() string }
	// prepared fills in what a new record starts with.
	prepared interface{ PrepareNew() }
	// namesAsked is a kind whose read shows the people asked (AskedPeople):
	// those a workflow added later (a delegate) are completed from the
	// directory when who is asked changes.
	namesAsked interface{ AskedPeople() *JSON[[]PersonRef] }
	// appliedBeside writes what a transition changes beside the record and
	// its index (before is the record as it was).
	appliedBeside[T any] interface {
		ApplyBeside(tx *gorm.DB, before *T) error
	}
	// loadedWith completes records read (called on a nil record: it is
	// the kind's, for many records at once).
	loadedWith[T any] interface {
		LoadWith(db *gorm.DB, orgID string, recs []*T) error
	}
)

// RequestKind names one kind of request and its table; each kind's
// record registers its own once (RegisterKind).
type RequestKind struct {
	// Subject names the kind in audit entries and events: "approval";
	// Noun where people read it: "request for information".
	Subject, IDPrefix, Noun string
	// Open is the status of a record still waiting.
	Open string
	// Page is the path of the page where people act on a record.
	Page func(id string) string
	// Table is the kind's table; who it asks is in request_people
	// (RequestPerson), under the kind's subject.
	Table string
	// AboutReports: its records may be about a report (report_id).
	AboutReports bool
}

// requestKinds are every kind of request: each kind's record registers
// itself here once. What spans the kinds (callbacks' routing, sealed
// columns, the operator's counts) reads this list, so a process knows
// the kinds whose packages it links (every assent process links all).
var requestKinds []*RequestKind

// RegisterKind adds a kind of request, from its record's package, once:
// a second kind of the same subject is a program error.
func RegisterKind(k *RequestKind) *RequestKind {
	if kindOf(k.Subject) != nil {
		panic("models: the request kind " + k.Subject + " is registered twice")
	}
	requestKinds = append(requestKinds, k)
	return k
}

// kindOf is the kind named subject, or nil.
func kindOf(subject string) *RequestKind {
	for _, k := range requestKinds {
		if k.Subject == subject {
			return k
		}
	}
	return nil
}

// KindNames are how a kind of request is named where people read it.
type KindNames struct {
	// Noun names it in messages: "request for information"; Open is the
	// status of one still waiting.
	Noun, Open string
	// Page is the path of the page where people act on request id.
	Page func(id string) string
}

// KindNamed are the names of the kind called kind (its subject), and
// whether a record registered it.
func KindNamed(kind string) (KindNames, bool) {
	k := kindOf(kind)
	if k == nil {
		return KindNames{}, false
	}
	return KindNames{Noun: k.Noun, Open: k.Open, Page: k.Page}, true
}

// RequestPage is the path of the page where people act on request id of
// kind, one of every kind's rows (settled, waiting, a flow's member): none
// for a kind this release does not know (a row written by a later one).
func RequestPage(kind, id string) string {
	if k, ok := KindNamed(kind); ok {
		return k.Page(id)
	}
	return ""
}

// callback is the sealed column of the kind's callback secrets.
func (k *RequestKind) callback() sealedColumn {
	return sealedColumn{k.Table, []string{"id"}, "callback_secret", sealCallbackSecret, false}
}

// riskOf is rec's risk, and whether its kind has one.
func riskOf(rec any) (string, bool) {
	r, ok := rec.(rated)
	if !ok {
		return "", false
	}
	return r.RiskLevel(), true
}

// Requests are one kind's records on the paths every kind shares: the
// create bound to its claim, the read, the transition write, the
// long-poll's statuses, and the reconciler's and the failed start's
// queries. Each kind's own queries (lists, inboxes) sit beside its record.
type Requests[T any, P RequestRecord[T]] struct {
	s *core
	k *RequestKind
}

// RequestsHost is a store that keeps requests: *Store and *RequestStore.
type RequestsHost interface{ requestsCore() *core }

func (s *RequestStore) requestsCore() *core { return s.core }

// RecordsOf are the records in s of the kind whose record is T (each
// kind's Records).
func RecordsOf[T any, P RequestRecord[T]](s RequestsHost) Requests[T, P] {
	return Requests[T, P]{s.requestsCore(), P(nil).RequestKind()}
}

// Base is the record's columns every kind shares.
func (r Requests[T, P]) Base(rec *T) *RequestBase { return P(rec).RequestHead().base }

// Name gives a new record its id, its open status and its times, and
// seals its callback secret under that id, before a create binds its claim
// to it and writes it (requests.Insert).
func (r Requests[T, P]) Name(rec *T) {
	h := P(rec).RequestHead()
	*h.id = newID(r.k.IDPrefix)
	*h.status = r.k.Open
	*h.createdAt = Now()
	*h.updatedAt = *h.createdAt
	if p, ok := any(rec).(prepared); ok {
		p.PrepareNew()
	}
	*h.sealedCallbackSecret = r.s.sealCallbackSecret(r.k.callback(), *h.id, *h.callbackSecret)
}

// Insert writes a record Name named, and the index of who it asks, in
// ctx's transaction.
func (r Requests[T, P]) Insert(ctx context.Context, rec *T) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	h := P(rec).RequestHead()
	if err := st.tx.Create(rec).Error; err != nil {
		return err
	}
	row := requestRow[T, P](rec)
	if err := st.tx.Create(&row).Error; err != nil {
		return err
	}
	return r.k.insertAsking(st.tx, *h.id, asking[T, P](rec))
}

// RequestFilter narrows a list of one kind's requests by what every kind
// has; a kind's own filter embeds it (approvals.Filter, reviews.Filter).
type RequestFilter struct {
	Status string
	// ExternalID finds the caller's own requests made with it
	// (byReference).
	ExternalID string
	FlowID     string
}

// A Filter narrows a list of one kind's requests: by what every kind has,
// and then by what its kind adds.
type Filter interface {
	Common() RequestFilter
	// Narrow adds the kind's own conditions to q, a query of kind k's
	// records; a filter of another kind is a program error (KindOnly).
	Narrow(db, q *gorm.DB, orgID string, k *RequestKind) (*gorm.DB, error)
}

// Common is f itself: a filter of what every kind has.
func (f RequestFilter) Common() RequestFilter { return f }

// Narrow adds nothing: every kind has what it filters on.
func (RequestFilter) Narrow(_, q *gorm.DB, _ string, _ *RequestKind) (*gorm.DB, error) { return q, nil }

// KindOnly refuses f, a filter of kind want, for a list of kind k.
func KindOnly(f Filter, want, k *RequestKind) error {
	if want != k {
		return fmt.Errorf("models: a %T cannot list %s records", f, k.Subject)
	}
	return nil
}

// List pages through the organisation's records, newest first, narrowed
// by f; an externalId finds only requester's own.
func (r Requests[T, P]) List(ctx context.Context, orgID, requester string, f Filter, p Page) ([]T, string, error) {
	db := r.s.db.WithContext(ctx)
	c := f.Common()
	q := byReference(matching(db.Where("organization_id = ?", orgID), [2]string{"status", c.Status}, [2]string{"flow_id", c.FlowID}),
		c.ExternalID, requester)
	q, err := f.Narrow(r.s.db, q, orgID, r.k)
	if err != nil {
		return nil, "", err
	}
	rows, next, err := list(q, p, r.k.IDPrefix, func(rec *T) string { return *P(rec).RequestHead().id })
	if err != nil {
		return nil, "", err
	}
	recs := make([]*T, len(rows))
	for i := range rows {
		recs[i] = &rows[i]
	}
	return rows, next, r.loaded(db, orgID, recs...)
}

// InFlow are the organisation's records of the kind in flow flowID,
// oldest first, as an evidence export holds them.
func (r Requests[T, P]) InFlow(ctx context.Context, orgID, flowID string) ([]T, error) {
	return r.attached(ctx, orgID, "flow_id", flowID)
}

// AboutReport are the organisation's records of the kind about report
// reportID, oldest first; a kind never about a report has none.
func (r Requests[T, P]) AboutReport(ctx context.Context, orgID, reportID string) ([]T, error) {
	if !r.k.AboutReports {
		return nil, nil
	}
	return r.attached(ctx, orgID, "report_id", reportID)
}

// attached are the organisation's records whose column holds id.
func (r Requests[T, P]) attached(ctx context.Context, orgID, column, id string) ([]T, error) {
	db := r.s.db.WithContext(ctx)
	var rows []T
	if err := db.Where("organization_id = ? AND "+column+" = ?", orgID, id).Order("id").Find(&rows).Error; err != nil {
		return nil, err
	}
	recs := make([]*T, len(rows))
	for i := range rows {
		recs[i] = &rows[i]
	}
	return rows, r.loaded(db, orgID, recs...)
}

// Reveal sets the record's callback secret from its sealed column, for the
// create's answer, which shows it once (also when a retry resumes it).
func (r Requests[T, P]) Reveal(rec *T) (err error) {
	h := P(rec).RequestHead()
	*h.callbackSecret, err = r.s.openCallbackSecret(r.k.callback(), *h.id, *h.sealedCallbackSecret)
	return err
}

// Get returns one of the organisation's records.
func (r Requests[T, P]) Get(ctx context.Context, orgID, id string) (*T, error) {
	db := r.s.db.WithContext(ctx)
	rec, err := take[T](db, orgID, id, r.k.Subject+" "+id)
	if err != nil {
		return nil, err
	}
	return rec, r.loaded(db, orgID, rec)
}

// Load completes rec, a record in hand, as Get does.
func (r Requests[T, P]) Load(ctx context.Context, rec *T) error {
	return r.loaded(r.s.db.WithContext(ctx), P(rec).RequestHead().organizationID, rec)
}

func (r Requests[T, P]) loaded(db *gorm.DB, orgID string, recs ...*T) error {
	return loadAll[T, P](db, orgID, recs)
}

// loadAll completes records read, for a kind that loads more.
func loadAll[T any, P RequestRecord[T]](db *gorm.DB, orgID string, recs []*T) error {
	if l, ok := any(P(nil)).(loadedWith[T]); ok {
		return l.LoadWith(db, orgID, recs)
	}
	return nil
}

// DeleteUnstarted removes, in ctx's transaction, a record whose workflow
// never started (Seq 0) and what indexes it, and reports whether there was
// one (requests.TakeBack).
func (r Requests[T, P]) DeleteUnstarted(ctx context.Context, orgID, id string) (bool, error) {
	st, err := inTx(ctx)
	if err != nil {
		return false, err
	}
	res := st.tx.Where("organization_id = ? AND id = ? AND seq = 0", orgID, id).Delete(new(T))
	if res.Error != nil || res.RowsAffected == 0 {
		return false, res.Error
	}
	if err := st.tx.Where("id = ?", id).Delete(&Request{}).Error; err != nil {
		return false, err
	}
	return true, st.tx.Where("request_id = ?", id).Delete(&RequestPerson{}).Error
}

// Statuses returns the status of each record among ids, with one query,
// for the long-poll.
func (r Requests[T, P]) Statuses(ctx context.Context, ids []string) (map[string]string, error) {
	var rows []struct{ ID, Status string }
	if err := r.s.db.WithContext(ctx).Model(new(T)).Select("id, status").Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, row := range rows {
		out[row.ID] = row.Status
	}
	return out, nil
}

// Unowned lists records still open whose workflow has not run its first
// step although they were created before olderThan: the reconciler starts
// them.
func (r Requests[T, P]) Unowned(ctx context.Context, olderThan time.Time, limit int) ([]T, error) {
	var out []T
	err := r.s.db.WithContext(ctx).Where("seq = 0 AND status = ? AND created_at < ?", r.k.Open, olderThan).
		Order("id").Limit(limit).Find(&out).Error
	return out, err
}

// Locked is a request's record read under its row lock for a transition
// (Lock), with what Save compares it with, so that Save writes what
// indexes the record only where it changed.
type Locked[T any] struct {
	Record *T
	// Seq is the last transition written to the record.
	Seq int
	// OrganizationID, FlowID and Subject (the kind: "approval") name the
	// record in its audit entries and events.
	OrganizationID string
	FlowID         *string
	Subject        string
	// before is the record as it was read; row and asking what it
	// indexed then.
	before T
	row    Request
	asking []Asking
}

// Lock reads one of the organisation's records under its row lock, for
// the rest of ctx's transaction, to be changed by a transition (Save). A
// record that is gone is ErrRequestMissing.
func (r Requests[T, P]) Lock(ctx context.Context, orgID, id string) (*Locked[T], error) {
	st, err := inTx(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := take[T](st.tx.Clauses(lockForUpdate(st.tx)...), orgID, id, r.k.Subject+" "+id)
	if apperr.Is(err, apperr.NotFound) {
		return nil, fmt.Errorf("%w: %w", ErrRequestMissing, err)
	}
	if err != nil {
		return nil, err
	}
	h := P(rec).RequestHead()
	l := &Locked[T]{Record: rec, Seq: *h.seq, OrganizationID: h.organizationID, FlowID: h.flowID, Subject: r.k.Subject,
		before: *rec, row: requestRow[T, P](rec), asking: asking[T, P](rec)}
	*P(&l.before).RequestHead().asked = slices.Clone(*h.asked)
	return l, nil
}

// Save writes a locked record as transition seq changed it, in ctx's
// transaction, with what indexes it: its requests row and the rows of whom
// it asks, each only where it changed since Lock, the names of the people
// newly asked, and what the kind keeps beside the record. The record is
// then read as a later read reads it, and the change counted once the
// transaction commits.
func (r Requests[T, P]) Save(ctx context.Context, l *Locked[T], seq int) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	tx, rec := st.tx, l.Record
	h := P(rec).RequestHead()
	*h.seq = seq
	*h.updatedAt = Now()
	if err := tx.Save(rec).Error; err != nil {
		return err
	}
	if row := requestRow[T, P](rec); requestRowChanged(l.row, row) {
		if err := saveRequestRow(tx, row); err != nil {
			return err
		}
	}
	if err := r.k.rewriteAsking(tx, *h.id, l.asking, asking[T, P](rec)); err != nil {
		return err
	}
	if named, ok := any(rec).(namesAsked); ok && !slices.Equal(*P(&l.before).RequestHead().asked, *h.asked) {
		if err := completeAsked(tx, h.organizationID, rec, named.AskedPeople()); err != nil {
			return err
		}
	}
	if a, ok := any(rec).(appliedBeside[T]); ok {
		if err := a.ApplyBeside(tx, &l.before); err != nil {
			return err
		}
	}
	st.onCommit = append(st.onCommit, func() { r.counted(&l.before, rec) })
	r.s.Changed(ctx, *h.id)
	return r.loaded(tx, h.organizationID, rec)
}

// ErrRequestMissing is what a transition of a request without a record
// fails with: the API took the record back after a workflow start it could
// not confirm, and the start had gone through. Retrying cannot help.
var ErrRequestMissing = errors.New("the request's record is gone")

// sealCallbackSecret seals the callback secret of request id for c, its
// record's column.
func (s *core) sealCallbackSecret(c sealedColumn, id string, secret *string) *string {
	if secret == nil {
		return nil
	}
	sealed := s.seal(c, *secret, id)
	return &sealed
}

// openCallbackSecret opens the sealed callback secret of request id, read
// from c.
func (s *core) openCallbackSecret(c sealedColumn, id string, sealed *string) (*string, error) {
	if sealed == nil {
		return nil, nil
	}
	secret, err := s.open(c, *sealed, id)
	if err != nil {
		return nil, err
	}
	return &secret, nil
}

// completeAsked fills in the name, email and kind of the people in refs
// known only by id (a delegate a workflow added), as they are now, and
// saves refs on rec when any was.
func completeAsked[T any](tx *gorm.DB, orgID string, rec *T, refs *JSON[[]PersonRef]) error {
	changed := false
	for i, ref := range refs.V {
		if ref.named() {
			continue
		}
		p, err := loadPerson(tx, orgID, ref.ID)
		if err != nil || p.Deactivated() {
			continue // gone since; the id stays
		}
		now := p.Ref()
		refs.V[i].Name, refs.V[i].Email, refs.V[i].Kind, changed = now.Name, now.Email, now.Kind, true
	}
	if !changed {
		return nil
	}
	return tx.Model(rec).Update("asked", *refs).Error
}
