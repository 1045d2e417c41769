package models

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/publishscan"
)

// Report classifications, read by the organisation's sharing rules.
const (
	ClassPublic       = "public"
	ClassInternal     = "internal"
	ClassConfidential = "confidential"
	ClassRestricted   = "restricted"
)

// Classifications lists them from least to most guarded.
var Classifications = []string{ClassPublic, ClassInternal, ClassConfidential, ClassRestricted}

// What became of a version. Live and previous are not stored: a published
// version is live when it is the report's LiveVersion, previous otherwise.
const (
	VersionPublished = "published"
	VersionHeld      = "held"
	VersionDeclined  = "declined"
	// VersionLive and VersionPrevious are the wire statuses of published
	// versions.
	VersionLive     = "live"
	VersionPrevious = "previous"
)

// Report is a published HTML document at a stable address. Its content is
// in its versions; Audience names its grants (ReportGrant).
type Report struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;uniqueIndex:idx_reports_org_slug,priority:1"`
	Slug           string `gorm:"size:200;not null;uniqueIndex:idx_reports_org_slug,priority:2"`
	// Key names the report's own origin when readers open it: random and
	// stable, unlike the slug, so a host name reveals nothing.
	Key            string     `gorm:"size:40;not null;uniqueIndex"`
	Title          string     `gorm:"size:200;not null"`
	Living         bool       `gorm:"not null"`
	Classification string     `gorm:"size:20;not null"`
	Audience       StringList `gorm:"type:text;not null"`
	Archived       bool       `gorm:"not null"`
	// ShowViewers lets readership analytics name who read the report;
	// off, they count readers without saying who.
	ShowViewers bool `gorm:"not null"`
	// OwnerID is the member who published it, or the key for an agent.
	OwnerID     string  `gorm:"size:60;not null"`
	OwnerName   string  `gorm:"size:320;not null"`
	OwnerPerson bool    `gorm:"not null"`
	FlowID      *string `gorm:"size:40;index"`
	// CopiedFromID is the report this one was copied from: its
	// classification is the copy's floor.
	CopiedFromID *string `gorm:"size:40"`
	// LatestVersion is the highest number taken, held and declined ones
	// included; LiveVersion the one served, nil until one goes live.
	LatestVersion int `gorm:"not null"`
	LiveVersion   *int
	// AuditSeq numbers the report's audit entries.
	AuditSeq  int `gorm:"not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ManifestFile is one file of a version, stored in the blob store under
// its SHA-256.
type ManifestFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Finding is something the publish scan found, its secret redacted.
type Finding = publishscan.Finding

// ReportVersion is one publish of a report: live, previous, held by the
// scan for an administrator, or declined.
type ReportVersion struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index:idx_report_versions_org_state,priority:1"`
	ReportID       string `gorm:"size:40;not null;uniqueIndex:idx_report_versions_number,priority:1"`
	Version        int    `gorm:"not null;uniqueIndex:idx_report_versions_number,priority:2"`
	State          string `gorm:"size:20;not null;index:idx_report_versions_org_state,priority:2"`
	ChangeSummary  string `gorm:"type:text;not null"`
	// PublishedBy is a member id or a key id.
	PublishedBy     string               `gorm:"size:60;not null"`
	PublishedByName string               `gorm:"size:320;not null"`
	Files           JSON[[]ManifestFile] `gorm:"type:text;not null"`
	Bytes           int64                `gorm:"not null"`
	Findings        JSON[[]Finding]      `gorm:"type:text;not null"`
	// HoldStarted is set by the hold's workflow when it takes the held
	// version up; the reconciler starts it for those left without.
	HoldStarted   bool `gorm:"not null"`
	DecidedBy     *string
	DecidedByName *string
	DecidedAt     *time.Time
	CreatedAt     time.Time
}

// Status is the version as the API shows it: live, previous, held or
// declined.
func (v *ReportVersion) Status(r *Report) string {
	if v.State != VersionPublished {
		return v.State
	}
	if r.LiveVersion != nil && *r.LiveVersion == v.Version {
		return VersionLive
	}
	return VersionPrevious
}

// FileCount is how many files the version holds.
func (v *ReportVersion) FileCount() int { return len(v.Files.V) }

// Upload is a ticket to upload the content of one publish: the PUT
// carries the ticket, which is kept only hashed.
type Upload struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	TicketHash     string `gorm:"size:64;not null;uniqueIndex"`
	CreatedBy      string `gorm:"size:60;not null"`
	ContentType    string `gorm:"size:40;not null"`
	Size           int64  `gorm:"not null"`
	// Blob names the bytes in the blob store: each PUT writes its own,
	// named when it claims the upload (ClaimUpload).
	Blob string `gorm:"size:80;not null"`
	// ReceivingUntil is set while a PUT holds the claim to send the bytes:
	// until then no other PUT reads a byte. A claim its PUT never let go
	// (the process died) lapses then.
	ReceivingUntil *time.Time
	UploadedAt     *time.Time
	ConsumedAt     *time.Time
	ExpiresAt      time.Time `gorm:"not null"`
	CreatedAt      time.Time
}

// UploadLifetime is how long an upload ticket may be used.
const UploadLifetime = time.Hour

// CreateUpload issues an upload ticket, returned once.
func (s *ReportStore) CreateUpload(ctx context.Context, orgID string, by Actor) (*Upload, string, error) {
	ticket := RandomToken(32)
	now := Now()
	u := &Upload{ID: newID(ids.Upload), OrganizationID: orgID, TicketHash: HashSecret(ticket), CreatedBy: by.ID,
		ExpiresAt: now.Add(UploadLifetime), CreatedAt: now}
	return u, ticket, s.db.WithContext(ctx).Create(u).Error
}

// UploadByTicket returns the upload a PUT's ticket names, as it is (the
// reports service says whether it may still receive its bytes).
func (s *ReportStore) UploadByTicket(ctx context.Context, ticket string) (*Upload, error) {
	var u Upload
	err := s.db.WithContext(ctx).Where("ticket_hash = ?", HashSecret(ticket)).Take(&u).Error
	if err != nil {
		return nil, notFound(err, "upload")
	}
	return &u, nil
}

// ClaimUpload lets one PUT send an upload's bytes, as blob, until until,
// and says whether it did: one conditional update, so of racing PUTs one
// wins and the others are refused before they read a byte of their
// bodies. None claims an upload with content, consumed, or claimed by a
// PUT whose claim has not lapsed.
func (s *ReportStore) ClaimUpload(ctx context.Context, id, blob string, until time.Time) (bool, error) {
	res := s.db.WithContext(ctx).Model(&Upload{}).
		Where("id = ? AND uploaded_at IS NULL AND consumed_at IS NULL AND (receiving_until IS NULL OR receiving_until < ?)", id, Now()).
		Updates(map[string]any{"blob": blob, "receiving_until": until})
	return res.RowsAffected == 1, res.Error
}

// ReleaseUpload gives up the claim of the PUT that sent blob, whose body
// failed: the upload may be sent again.
func (s *ReportStore) ReleaseUpload(ctx context.Context, id, blob string) error {
	return s.db.WithContext(ctx).Model(&Upload{}).Where("id = ? AND blob = ? AND uploaded_at IS NULL", id, blob).
		Updates(map[string]any{"blob": "", "receiving_until": nil}).Error
}

// MarkUploaded records that the bytes of the PUT holding the claim, blob,
// are stored, and says whether it held it still: its bytes are written
// once.
func (s *ReportStore) MarkUploaded(ctx context.Context, id, blob, contentType string, size int64) (bool, error) {
	now := Now()
	res := s.db.WithContext(ctx).Model(&Upload{}).Where("id = ? AND blob = ? AND uploaded_at IS NULL", id, blob).
		Updates(map[string]any{"uploaded_at": now, "receiving_until": nil, "content_type": contentType, "size": size})
	return res.RowsAffected == 1, res.Error
}

// GetUpload returns one of the organisation's uploads, as it is.
func (s *ReportStore) GetUpload(ctx context.Context, orgID, id string) (*Upload, error) {
	return take[Upload](s.conn(ctx), orgID, id, "upload "+id)
}

// ExpiredUploads lists uploads whose bytes may go: expired an hour ago or
// more, so no publish that read one in time is still reading it.
func (s *ReportStore) ExpiredUploads(ctx context.Context, limit int) ([]Upload, error) {
	var out []Upload
	err := s.db.WithContext(ctx).Where("expires_at < ?", Now().Add(-time.Hour)).Order("id").Limit(limit).Find(&out).Error
	return out, err
}

// DeleteUploads forgets uploads whose bytes are gone.
func (s *ReportStore) DeleteUploads(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.db.WithContext(ctx).Where("id IN ?", ids).Delete(&Upload{}).Error
}

// Publication is one publish: the files the scan passed or not, and what
// the caller said of them.
type Publication struct {
	State         string
	ChangeSummary string
	Files         []ManifestFile
	Findings      []Finding
	By            Actor
	// UploadID, when the content came from an upload, is consumed by this
	// publish.
	UploadID string
}

// NewReport is a report to create with its first version.
type NewReport struct {
	OrganizationID string
	Title          string
	Slug           string
	// SlugGiven is false when the slug was derived from the title: then a
	// taken slug gets a numbered suffix instead of a 409.
	SlugGiven      bool
	Living         bool
	Classification string
	// Grants are who may read it besides its owner.
	Grants []NewGrant
	FlowID *string
	// CopiedFrom is the report copied, whose audit trail records the copy.
	CopiedFrom *Report
}

// SlugTaken says whether the organisation has a report at slug.
func (s *ReportStore) SlugTaken(ctx context.Context, orgID, slug string) (bool, error) {
	var n int64
	err := s.conn(ctx).Model(&Report{}).Where("organization_id = ? AND slug = ?", orgID, slug).Count(&n).Error
	return n > 0, err
}

// InsertReport writes r, in ctx's transaction; a slug taken meanwhile is
// ErrDuplicate, which ends the transaction.
func (s *ReportStore) InsertReport(ctx context.Context, r *Report) error {
	return insertIn(ctx, r)
}

// ConsumeUpload uses the organisation's upload id up, in ctx's
// transaction, and says whether it did: a concurrent publish that read it
// too finds it used.
func (s *ReportStore) ConsumeUpload(ctx context.Context, orgID, id string) (bool, error) {
	st, err := inTx(ctx)
	if err != nil {
		return false, err
	}
	res := st.tx.Model(&Upload{}).Where("organization_id = ? AND id = ? AND consumed_at IS NULL", orgID, id).
		Update("consumed_at", Now())
	return res.RowsAffected == 1, res.Error
}

// InsertVersion writes v, in ctx's transaction, counted once it commits.
func (s *ReportStore) InsertVersion(ctx context.Context, v *ReportVersion) error {
	if err := insertIn(ctx, v); err != nil {
		return err
	}
	st, _ := inTx(ctx)
	st.onCommit = append(st.onCommit, func() { s.versionWritten(v) })
	return nil
}

// SaveVersion writes v's changes, in ctx's transaction.
func (s *ReportStore) SaveVersion(ctx context.Context, v *ReportVersion) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	return st.tx.Save(v).Error
}

// MaxSlug bounds a report's slug.
const MaxSlug = 200

// claimedReport returns the report an earlier attempt created and its
// first version.
func (s *ReportStore) claimedReport(ctx context.Context, orgID, id string) (*Report, *ReportVersion, error) {
	r, err := s.GetReport(ctx, orgID, id)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.GetVersionNumber(ctx, r, 1)
	return r, v, err
}

// ClaimedVersion returns the report and version an earlier attempt of a
// claimed publish made, or nils when there was none.
func (s *ReportStore) ClaimedVersion(ctx context.Context, claim *Claim) (*Report, *ReportVersion, error) {
	id, err := s.claims.ClaimedResource(ctx, claim)
	if err != nil || id == "" {
		return nil, nil, err
	}
	if ids.HasPrefix(id, ids.Report) {
		return s.claimedReport(ctx, claim.OrganizationID, id)
	}
	var v ReportVersion
	if err := s.db.WithContext(ctx).Where("organization_id = ? AND id = ?", claim.OrganizationID, id).Take(&v).Error; err != nil {
		return nil, nil, notFound(err, "version "+id)
	}
	r, err := s.GetReport(ctx, claim.OrganizationID, v.ReportID)
	return r, &v, err
}

// reportStep saves r and writes an audit entry about it, its next step.
func reportStep(tx *gorm.DB, r *Report, action, detail string, by Actor, now time.Time) error {
	r.AuditSeq++
	r.UpdatedAt = now
	if err := tx.Save(r).Error; err != nil {
		return err
	}
	return writeAudit(tx, &AuditEntry{ID: newID(ids.Audit), OrganizationID: r.OrganizationID, FlowID: r.FlowID, SubjectType: "report",
		SubjectID: r.ID, Seq: r.AuditSeq, Action: action, ActorID: by.ID, ActorName: by.Name, Detail: detail, At: now})
}

// ReportEvent is an outbox event of kind about r with data b, at now.
func ReportEvent(r *Report, kind string, b []byte, now time.Time) *Event {
	return &Event{ID: newID(ids.Event), OrganizationID: r.OrganizationID, Kind: kind,
		SubjectType: "report", SubjectID: r.ID, Data: b, CreatedAt: now}
}

// GetReport returns one of the organisation's reports by id or slug.
func (s *ReportStore) GetReport(ctx context.Context, orgID, idOrSlug string) (*Report, error) {
	return getReport(s.conn(ctx), orgID, idOrSlug)
}

func getReport(q *gorm.DB, orgID, idOrSlug string) (*Report, error) {
	var r Report
	col := "slug"
	if ids.HasPrefix(idOrSlug, ids.Report) {
		col = "id"
	}
	if err := q.Where("organization_id = ? AND "+col+" = ?", orgID, idOrSlug).Take(&r).Error; err != nil {
		return nil, notFound(err, "report "+idOrSlug)
	}
	return &r, nil
}

// ReportFilter narrows a list of reports.
type ReportFilter struct {
	FlowID   string
	Archived *bool
	// ReadableBy keeps the reports this person may read (owned or granted).
	ReadableBy *Person
}

// ListReports returns a page of the organisation's reports, newest first.
func (s *ReportStore) ListReports(ctx context.Context, orgID string, f ReportFilter, p Page) ([]Report, string, error) {
	db := s.db.WithContext(ctx)
	q := db.Model(&Report{}).Where("reports.organization_id = ?", orgID)
	if f.ReadableBy != nil {
		q = readableBy(q, db, f.ReadableBy)
	}
	if f.FlowID != "" {
		q = q.Where("flow_id = ?", f.FlowID)
	}
	if f.Archived != nil {
		q = q.Where("archived = ?", *f.Archived)
	}
	return list(q, p, ids.Report, func(r *Report) string { return r.ID })
}

// ListVersions returns every version of a report, newest first.
func (s *ReportStore) ListVersions(ctx context.Context, r *Report) ([]ReportVersion, error) {
	var out []ReportVersion
	err := s.db.WithContext(ctx).Where("organization_id = ? AND report_id = ?", r.OrganizationID, r.ID).
		Order("version DESC").Find(&out).Error
	return out, err
}

// GetVersionNumber returns version n of r.
func (s *ReportStore) GetVersionNumber(ctx context.Context, r *Report, n int) (*ReportVersion, error) {
	var v ReportVersion
	err := s.conn(ctx).Where("organization_id = ? AND report_id = ? AND version = ?", r.OrganizationID, r.ID, n).Take(&v).Error
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("version %d of report %s", n, r.ID))
	}
	return &v, nil
}

// GetVersion returns one of the organisation's versions by id.
func (s *ReportStore) GetVersion(ctx context.Context, orgID, id string) (*ReportVersion, error) {
	return take[ReportVersion](s.conn(ctx), orgID, id, "version "+id)
}

// HeldVersions lists the organisation's versions waiting for an owner or
// administrator, oldest first.
func (s *ReportStore) HeldVersions(ctx context.Context, orgID string) ([]ReportVersion, error) {
	var out []ReportVersion
	err := s.db.WithContext(ctx).Where("organization_id = ? AND state = ?", orgID, VersionHeld).Order("id").Find(&out).Error
	return out, err
}

// UnstartedHolds lists held versions created before olderThan whose hold
// workflow has not taken them up.
func (s *ReportStore) UnstartedHolds(ctx context.Context, olderThan time.Time, limit int) ([]ReportVersion, error) {
	var out []ReportVersion
	err := s.db.WithContext(ctx).Where("state = ? AND hold_started = ? AND created_at < ?", VersionHeld, false, olderThan).
		Order("id").Limit(limit).Find(&out).Error
	return out, err
}

// MarkHoldStarted records that a held version's workflow took it up.
func (s *ReportStore) MarkHoldStarted(ctx context.Context, orgID, versionID string) error {
	return s.db.WithContext(ctx).Model(&ReportVersion{}).Where("organization_id = ? AND id = ?", orgID, versionID).
		Update("hold_started", true).Error
}

// RandomToken is n random bytes in lower-case base32.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}
