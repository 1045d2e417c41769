// Package reports is the domain of report publishing: uploads, publishing
// a report and its versions (each scanned before anything goes live),
// rollback, archive, copies and templates, and the held versions an
// owner or administrator releases or declines. Reports are plain
// request/response over the database and the blob store; only a held
// version waits in a workflow (workflows.PublishHold).
package reports

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/bundle"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/publishscan"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// Store is what publishing reads and writes: the reports' own queries,
// what every held version shares with a request (its claim, flow and
// long-poll; requests.Store), what a report's step writes beside them
// (audit steps, events), and the people it shares a report with.
type Store interface {
	Reports() *models.ReportStore
	requests.Store
	requests.Directory
	accounts.People
	LockReport(ctx context.Context, orgID, idOrSlug string) (*models.Report, error)
	ReportStep(ctx context.Context, r *models.Report, action, detail string, by models.Actor, at time.Time) error
	Emit(ctx context.Context, e *models.Event) error
	Changed(ctx context.Context, id string)
	Metrics() *metrics.Metrics

	GetOrganization(ctx context.Context, id string) (*models.Organization, error)
	GetMember(ctx context.Context, orgID, id string) (*models.Member, error)
	ActiveMemberIDs(ctx context.Context, orgID string, roles ...string) ([]string, error)
	EnabledRules(ctx context.Context, orgID string) ([]models.Rule, error)
}

// Deps are what the service needs.
type Deps struct {
	Store    Store
	Temporal client.Client
	Blobs    *blobstore.Store
	Scanner  *publishscan.Scanner
	Logger   *slog.Logger
	// BaseURL makes report urls in responses and event data.
	BaseURL string
	// TempDir holds a ZIP upload while it is read; "" is the system's.
	TempDir string
}

// Service runs the publishing operations; build one per process.
type Service struct {
	store    Store
	temporal client.Client
	blobs    *blobstore.Store
	scanner  *publishscan.Scanner
	log      *slog.Logger
	baseURL  string
	tempDir  string
}

// New returns the service.
func New(d Deps) *Service {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &Service{store: d.Store, temporal: d.Temporal, blobs: d.Blobs, scanner: d.Scanner, log: d.Logger,
		baseURL: d.BaseURL, tempDir: d.TempDir}
}

// Source is a publish's content: exactly one of content, files or
// uploadId.
type Source struct {
	Content  *string              `json:"content" nullable:"true"`
	Files    *[]bundle.InlineFile `json:"files" nullable:"true"`
	UploadID *string              `json:"uploadId" validate:"omitempty,max=40" nullable:"true"`
}

// check refuses anything but one source, naming one field: the second
// one sent, or content when none is.
func (src *Source) check() error {
	var set []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"content", src.Content != nil}, {"files", src.Files != nil}, {"uploadId", src.UploadID != nil}} {
		if f.set {
			set = append(set, f.name)
		}
	}
	switch len(set) {
	case 0:
		return apperr.Field(apperr.InvalidRequest, "content",
			"content is required: send one HTML document as content, or the files as files ([{path, content}]), or an upload's uploadId")
	case 1:
		return nil
	}
	return apperr.Field(apperr.InvalidRequest, set[1], "send %s or %s, not both: a version has one source", set[0], set[1])
}

// CreateInput is a new report and its first version.
type CreateInput struct {
	Title string  `json:"title" validate:"required,notblank,max=200"`
	Slug  *string `json:"slug" validate:"omitempty,max=200" nullable:"true"`
	Source
	Audience       []string `json:"audience" validate:"omitempty,max=50,dive,required,max=320" nullable:"true"`
	Living         bool     `json:"living"`
	Classification string   `json:"classification" validate:"omitempty,oneof=public internal confidential restricted"`
	ChangeSummary  string   `json:"changeSummary" validate:"max=2000"`
	FlowID         *string  `json:"flowId" validate:"omitempty,max=40" nullable:"true"`
}

// VersionInput is a report's next version.
type VersionInput struct {
	Source
	ChangeSummary   string `json:"changeSummary" validate:"max=2000"`
	ExpectedVersion *int   `json:"expectedVersion" validate:"omitempty,min=0" nullable:"true"`
}

// Create publishes a new report with its first version, once per claim:
// a retry of a create that made its report answers with that report.
func (s *Service) Create(ctx context.Context, p models.Actor, in *CreateInput, claim *models.Claim) (*models.Report, *models.ReportVersion, error) {
	if r, v, err := s.store.Reports().ClaimedVersion(ctx, claim); err != nil || r != nil {
		return r, v, err
	}
	if err := in.Source.check(); err != nil {
		return nil, nil, err
	}
	nr := models.NewReport{OrganizationID: p.Organization.ID, Title: strings.TrimSpace(in.Title), Living: in.Living,
		Classification: in.Classification, FlowID: in.FlowID}
	if nr.Classification == "" {
		nr.Classification = models.ClassInternal
	}
	if err := setSlug(&nr, in.Slug); err != nil {
		return nil, nil, err
	}
	if len(in.Audience) > 0 {
		var err error
		by := p
		draft := &models.Report{OrganizationID: nr.OrganizationID, Title: nr.Title, Slug: nr.Slug, Classification: nr.Classification,
			Living: nr.Living, OwnerID: by.ID, OwnerName: by.Name, OwnerPerson: by.IsPerson}
		if nr.Grants, err = s.grantsFor(ctx, draft, by, in.Audience); err != nil {
			return nil, nil, err
		}
	}
	pub, err := s.prepare(ctx, p, &in.Source, in.ChangeSummary)
	if err != nil {
		return nil, nil, err
	}
	r, v, err := s.versions().Create(ctx, nr, pub, claim)
	if err != nil {
		return nil, nil, err
	}
	s.hold(ctx, v)
	return r, v, nil
}

// Publish adds the next version to a report, once per claim.
func (s *Service) Publish(ctx context.Context, p models.Actor, idOrSlug string, in *VersionInput, claim *models.Claim) (*models.Report, *models.ReportVersion, error) {
	if r, v, err := s.store.Reports().ClaimedVersion(ctx, claim); err != nil || r != nil {
		return r, v, err
	}
	if err := in.Source.check(); err != nil {
		return nil, nil, err
	}
	r, err := s.managed(ctx, p.Organization.ID, p, idOrSlug)
	if err != nil {
		return nil, nil, err
	}
	// A stale expectedVersion is refused before the content is read and
	// scanned; the store checks it again under the report's lock.
	if in.ExpectedVersion != nil && *in.ExpectedVersion != r.LatestVersion {
		return nil, nil, apperr.Field(apperr.VersionConflict, "expectedVersion",
			"expectedVersion is %d but the report's latest version is %d: read the versions and publish again", *in.ExpectedVersion, r.LatestVersion)
	}
	pub, err := s.prepare(ctx, p, &in.Source, in.ChangeSummary)
	if err != nil {
		return nil, nil, err
	}
	r, v, err := s.versions().Publish(ctx, p.Organization.ID, r.ID, in.ExpectedVersion, pub, claim)
	if err != nil {
		return nil, nil, err
	}
	s.hold(ctx, v)
	return r, v, nil
}

// Get returns one of the organisation's reports by id or slug, whoever
// asks: the caller decides what to show (a person's page offers a
// request for access). Visible is the checked read.
func (s *Service) Get(ctx context.Context, orgID, idOrSlug string) (*models.Report, error) {
	return s.store.Reports().GetReport(ctx, orgID, idOrSlug)
}

// List returns a page of the organisation's reports visible to person
// (every one for an agent key, person nil, and for an administrator).
func (s *Service) List(ctx context.Context, who models.Actor, f models.ReportFilter, p models.Page) ([]models.Report, string, error) {
	// A member manages only the reports they own, which they also read.
	if who.Person != nil && !who.Administrator {
		f.ReadableBy = who.Person
	}
	return s.store.Reports().ListReports(ctx, who.OrgID(), f, p)
}

// Versions returns a report visible to who and every version of it,
// newest first.
func (s *Service) Versions(ctx context.Context, who models.Actor, idOrSlug string) (*models.Report, []models.ReportVersion, error) {
	r, err := s.Visible(ctx, who, idOrSlug)
	if err != nil {
		return nil, nil, err
	}
	vs, err := s.store.Reports().ListVersions(ctx, r)
	return r, vs, err
}

// RollbackInput names the version to serve.
type RollbackInput struct {
	Version *int `json:"version" validate:"required,min=1"`
}

// Rollback serves an earlier version that went live again (or a later
// one: rolling forward is the same).
func (s *Service) Rollback(ctx context.Context, orgID string, by models.Actor, idOrSlug string, in *RollbackInput) (*models.Report, *models.ReportVersion, error) {
	r, err := s.managed(ctx, orgID, by, idOrSlug)
	if err != nil {
		return nil, nil, err
	}
	return s.versions().Rollback(ctx, orgID, r.ID, *in.Version, by)
}

// ArchiveInput archives a report, or restores it with archived false.
type ArchiveInput struct {
	Archived *bool `json:"archived" nullable:"true"`
}

// Archive stops a report's address serving, or restores it.
func (s *Service) Archive(ctx context.Context, p models.Actor, idOrSlug string, in *ArchiveInput) (*models.Report, error) {
	r, err := s.managed(ctx, p.Organization.ID, p, idOrSlug)
	if err != nil {
		return nil, err
	}
	archived := in.Archived == nil || *in.Archived
	return s.versions().SetArchived(ctx, p.Organization.ID, r.ID, archived, p)
}

// versions writes the reports' versions and their life.
func (s *Service) versions() Versions { return Versions{Store: s.store, BaseURL: s.baseURL} }

// Blobs is the blob store the service keeps report files in, which other
// report-bound content (comment images) shares.
func (s *Service) Blobs() *blobstore.Store { return s.blobs }
