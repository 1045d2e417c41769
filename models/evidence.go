package models

import (
	"context"
	"slices"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
)

// Evidence is what an evidence export holds of a flow or a report beside
// its requests (which each kind's service reads): the other records,
// their audit entries and the requests' in chain order with the hash
// before each, the deliveries of their events, and the chain's head when
// read.
type Evidence struct {
	Reports    []Report
	GateChecks []GateCheck
	// Receipts are the execution receipts of the approvals and checks.
	Receipts []Receipt
	// Mandates are the standing mandates that allowed the checks.
	Mandates []Mandate
	// Versions are each report's versions, by report id; Threads its
	// comment threads with their comments.
	Versions map[string][]ReportVersion
	Threads  map[string][]CommentThread
	Entries  []AuditEntry
	// PreviousHash is the hash of the chain entry before each entry, by
	// the entry's position.
	PreviousHash map[int64]string
	Deliveries   []EvidenceDelivery
	Head         AuditHead
}

// EvidenceDelivery is a delivery with the event it carried.
type EvidenceDelivery struct {
	Delivery
	Kind        string
	SubjectType string
	SubjectID   string
}

// FlowEvidence gathers flow id's evidence beside its requests, requestIDs:
// the reports and gate checks attached to it, and what hangs off them all.
func (s *EvidenceStore) FlowEvidence(ctx context.Context, orgID, id string, requestIDs []string) (*Evidence, error) {
	e := &Evidence{}
	db := s.db.WithContext(ctx)
	for _, dst := range []any{&e.Reports, &e.GateChecks} {
		if err := db.Where("organization_id = ? AND flow_id = ?", orgID, id).Order("id").Find(dst).Error; err != nil {
			return nil, err
		}
	}
	return e, s.gatherEvidence(ctx, orgID, e, requestIDs, &id)
}

// ReportEvidence gathers report r's evidence beside the requests about it,
// requestIDs: the report, and what hangs off them all.
func (s *EvidenceStore) ReportEvidence(ctx context.Context, orgID string, r *Report, requestIDs []string) (*Evidence, error) {
	e := &Evidence{Reports: []Report{*r}}
	return e, s.gatherEvidence(ctx, orgID, e, requestIDs, nil)
}

// gatherEvidence reads what hangs off e's records and the requests
// requestIDs: versions, threads, receipts (of approvals and checks),
// mandates, audit entries (and those of flow, when given), deliveries, the
// head.
func (s *EvidenceStore) gatherEvidence(ctx context.Context, orgID string, e *Evidence, requestIDs []string, flowID *string) error {
	db := s.db.WithContext(ctx)
	subjects := slices.Clone(requestIDs)
	var checks, mandates []string
	for _, c := range e.GateChecks {
		subjects = append(subjects, c.ID)
		checks = append(checks, c.ID)
		if c.MandateID != nil && !slices.Contains(mandates, *c.MandateID) {
			mandates = append(mandates, *c.MandateID)
		}
	}
	// A mandate's grant, exhaustion and revocation are on the timeline of
	// each flow that used it.
	subjects = append(subjects, mandates...)
	var err error
	if e.Mandates, err = mandatesOf(db, orgID, mandates); err != nil {
		return err
	}
	// A receipt names the approval or the check it reports on.
	if e.Receipts, err = receiptsOf(db, orgID, requestIDs, checks); err != nil {
		return err
	}
	for _, r := range e.Receipts {
		subjects = append(subjects, r.ID)
	}
	e.Versions, e.Threads = map[string][]ReportVersion{}, map[string][]CommentThread{}
	for _, r := range e.Reports {
		subjects = append(subjects, r.ID)
		versions, err := s.reports.ListVersions(ctx, &r)
		if err != nil {
			return err
		}
		e.Versions[r.ID] = versions
		if e.Threads[r.ID], err = s.comments.Threads(ctx, orgID, r.ID); err != nil {
			return err
		}
	}
	if flowID != nil {
		subjects = append(subjects, *flowID)
	}
	if len(subjects) == 0 {
		subjects = []string{""}
	}
	if err := db.Where("organization_id = ? AND subject_id IN ?", orgID, subjects).Order("position").Find(&e.Entries).Error; err != nil {
		return err
	}
	var before []int64
	for _, en := range e.Entries {
		before = append(before, en.Position-1)
	}
	var prev []AuditEntry
	if len(before) > 0 {
		if err := db.Select("position, entry_hash").Where("organization_id = ? AND position IN ?", orgID, before).Find(&prev).Error; err != nil {
			return err
		}
	}
	e.PreviousHash = map[int64]string{}
	for _, p := range prev {
		e.PreviousHash[p.Position+1] = p.EntryHash
	}
	for _, en := range e.Entries {
		if _, ok := e.PreviousHash[en.Position]; !ok && en.Position != 1 {
			return apperr.New(apperr.Internal, "the audit chain lacks the entry before position %d", en.Position)
		}
	}
	if err := db.Table("deliveries").Select("deliveries.*, events.kind, events.subject_type, events.subject_id").
		Joins("JOIN events ON events.id = deliveries.event_id").
		Where("events.organization_id = ? AND events.subject_id IN ?", orgID, subjects).
		Order("deliveries.created_at, deliveries.id").Scan(&e.Deliveries).Error; err != nil {
		return err
	}
	err = db.Where("organization_id = ?", orgID).Take(&e.Head).Error
	if err == gorm.ErrRecordNotFound {
		return nil // nothing audited yet
	}
	return err
}
