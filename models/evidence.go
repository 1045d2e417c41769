package models

import (
	"context"
	"slices"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
)

// Evidence is everything an evidence export holds of a flow or a report,
// read in one place: the records, their audit entries in chain order with
// the hash before each, the deliveries of their events, and the chain's
// head when read.
type Evidence struct {
	Approvals   []Approval
	Collections []Collection
	Reviews     []Review
	Reports     []Report
	GateChecks  []GateCheck
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

// FlowEvidence gathers a flow's evidence: every request, report and gate
// check attached to it.
func (s *EvidenceStore) FlowEvidence(ctx context.Context, orgID, id string) (*Flow, *Evidence, error) {
	f, err := s.flows.GetFlow(ctx, orgID, id)
	if err != nil {
		return nil, nil, err
	}
	e := &Evidence{}
	db := s.db.WithContext(ctx)
	for _, dst := range []any{&e.Approvals, &e.Collections, &e.Reviews, &e.Reports, &e.GateChecks} {
		if err := db.Where("organization_id = ? AND flow_id = ?", orgID, id).Order("id").Find(dst).Error; err != nil {
			return nil, nil, err
		}
	}
	return f, e, s.gatherEvidence(ctx, orgID, e, &id)
}

// ReportEvidence gathers a report's evidence: the report, its reviews and
// the approvals about it.
func (s *EvidenceStore) ReportEvidence(ctx context.Context, orgID, idOrSlug string) (*Report, *Evidence, error) {
	db := s.db.WithContext(ctx)
	r, err := getReport(db, orgID, idOrSlug)
	if err != nil {
		return nil, nil, err
	}
	e := &Evidence{Reports: []Report{*r}}
	if e.Reviews, err = reviewsOf(db, orgID, r.ID); err != nil {
		return nil, nil, err
	}
	if err := db.Where("organization_id = ? AND report_id = ?", orgID, r.ID).Order("id").Find(&e.Approvals).Error; err != nil {
		return nil, nil, err
	}
	return r, e, s.gatherEvidence(ctx, orgID, e, nil)
}

// gatherEvidence reads what hangs off e's records: versions, threads,
// audit entries (and those of flow, when given), deliveries, the head.
func (s *EvidenceStore) gatherEvidence(ctx context.Context, orgID string, e *Evidence, flowID *string) error {
	db := s.db.WithContext(ctx)
	var subjects []string
	approvals := make([]*Approval, len(e.Approvals))
	var approvalIDs []string
	for i := range e.Approvals {
		approvals[i] = &e.Approvals[i]
		approvalIDs = append(approvalIDs, e.Approvals[i].ID)
	}
	subjects = append(subjects, approvalIDs...)
	if err := loadApprovals(db, orgID, approvals); err != nil {
		return err
	}
	for _, c := range e.Collections {
		subjects = append(subjects, c.ID)
	}
	for _, r := range e.Reviews {
		subjects = append(subjects, r.ID)
	}
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
	if e.Receipts, err = receiptsOf(db, orgID, approvalIDs, checks); err != nil {
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
