// Package reviews is the domain of reviews: an agent asks people for a
// verdict on one version of a report, each reviewer approves or requests
// changes, and the agent reads the outcome. Creating, reading and waiting
// follow approvals through the shared requests package; the workflow
// (Workflow) decides who may return a verdict and when.
package reviews

import (
	"context"
	"slices"
	"strings"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Service runs the review kind's operations; build one per process. What
// every kind does alike comes from its requests.Lifecycle.
type Service struct {
	*requests.Lifecycle[Review]
	store     Store
	netPolicy *netguard.Policy
	reports   *reports.Service
}

// Store is what a review reads beside what every kind does: the people
// it asks and who may read the report it is of.
type Store interface {
	requests.Directory
	People(ctx context.Context, orgID string, personIDs []string) ([]*models.Person, error)
	ActiveMemberIDs(ctx context.Context, orgID string, roles ...string) ([]string, error)
	GetReport(ctx context.Context, orgID, idOrSlug string) (*models.Report, error)
	GetVersion(ctx context.Context, orgID, id string) (*models.ReportVersion, error)
	CanRead(ctx context.Context, r *models.Report, person *models.Person) (bool, error)
}

// New returns the service; reports decides which reports a caller may
// put under review.
func New(d requests.Deps, reports *reports.Service) *Service {
	d = d.Filled()
	s := &Service{store: d.Store, netPolicy: d.NetPolicy, reports: reports}
	s.Lifecycle = requests.NewLifecycle[Review](d, Names, Records(d.Store), s)
	return s
}

// Head is what the shared paths read of a review (requests.Kind).
func (s *Service) Head(r *Review) requests.Head {
	return requests.HeadOf(&r.RequestBase, r.ReviewerIDs, requests.AskedVia(r.Asked.V))
}

// CreateInput is the create body with its limits; Create checks what the
// tags cannot.
type CreateInput struct {
	requests.Fields
	ReportID          string   `json:"reportId" validate:"required,max=300"`
	Instructions      string   `json:"instructions" validate:"max=20000"`
	Reviewers         []string `json:"reviewers" validate:"required,min=1,max=20,dive,required,max=320"`
	RequiredApprovals *int     `json:"requiredApprovals" nullable:"true"`
	VersionID         *string  `json:"versionId" validate:"omitempty,max=40" nullable:"true"`
}

// reviewerRole is how reviewers are resolved and refused: guests the
// report is shared with may review it.
var reviewerRole = requests.Role{Field: "reviewers", Unknown: apperr.UnknownReviewer, Ambiguous: apperr.AmbiguousReviewer, Guests: true}

// Create makes an open review for the caller and starts its workflow,
// exactly once per claim (see requests.Insert).
func (s *Service) Create(ctx context.Context, p models.Actor, in *CreateInput, claim *models.Claim) (*Review, error) {
	return s.Lifecycle.Create(ctx, claim, func() (*Review, error) { return s.build(ctx, p, in) })
}

func (s *Service) build(ctx context.Context, p models.Actor, in *CreateInput) (*Review, error) {
	report, err := s.reports.Readable(ctx, p, in.ReportID)
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Field(apperr.NotFound, "reportId", "report %s not found", in.ReportID)
	}
	if err != nil {
		return nil, err
	}
	if report.Archived {
		return nil, apperr.Field(apperr.InvalidState, "reportId", "report %s is archived: restore it before asking for a review", report.Slug)
	}
	version, err := s.pinned(ctx, report, in.VersionID)
	if err != nil {
		return nil, err
	}
	base, err := in.Base(ctx, p, models.Now(), s.netPolicy)
	if err != nil {
		return nil, err
	}
	rec := &Review{RequestBase: base, Instructions: in.Instructions,
		ReportID: report.ID, VersionID: version.ID, Version: version.Version, Reviewers: in.Reviewers,
	}
	asked, err := requests.ResolveVia(ctx, s.store, p.Organization.ID, in.Reviewers, reviewerRole, s.handoverOf(rec.Requester, report))
	if err != nil {
		return nil, err
	}
	rec.ReviewerIDs = requests.IDsOf(asked)
	// Who may read the report depends on more than the directory's
	// entry (a member's role, a guest's shares).
	people, err := s.store.People(ctx, p.Organization.ID, rec.ReviewerIDs)
	if err != nil {
		return nil, err
	}
	var unable []string
	for _, person := range people {
		ok, err := s.mayReview(ctx, report, person)
		if err != nil {
			return nil, err
		}
		if !ok {
			unable = append(unable, person.Email())
		}
	}
	rec.Asked.V = requests.Asked(people, requests.AskedVia(asked))
	if len(unable) > 0 {
		e := apperr.Field(apperr.ReviewerCannotRead, "reviewers", "%s cannot open report %s: share it with them first, or ask an owner or administrator",
			strings.Join(unable, ", "), report.Slug)
		if e.Candidates, err = s.askable(ctx, report, p.ID); err != nil {
			return nil, err
		}
		return nil, e
	}
	rec.RequiredApprovals = 1
	if in.RequiredApprovals != nil {
		if n := *in.RequiredApprovals; n < 1 || n > len(rec.ReviewerIDs) {
			return nil, apperr.Field(apperr.InvalidRequest, "requiredApprovals",
				"requiredApprovals must be between 1 and the %d reviewers asked", len(rec.ReviewerIDs))
		}
		rec.RequiredApprovals = *in.RequiredApprovals
	}
	return rec, nil
}

// mayReview reports whether person may be asked to review r: whoever
// reads it, and the organisation's owners and administrators, who read
// any report they are asked to review (models.CanRead).
func (s *Service) mayReview(ctx context.Context, r *models.Report, person *models.Person) (bool, error) {
	if person.Member != nil && person.Member.Active && person.Member.Administers() {
		return true, nil
	}
	return s.store.CanRead(ctx, r, person)
}

var _ requests.HandsOver[Review] = (*Service)(nil)

// Handover is what review r allows of a hand-over to a delegate (see
// handoverOf).
func (s *Service) Handover(ctx context.Context, r *Review) (requests.Handover, error) {
	report, err := s.store.GetReport(ctx, r.OrganizationID, r.ReportID)
	if err != nil {
		return requests.Handover{}, err
	}
	return s.handoverOf(r.Requester, report), nil
}

// handoverOf is what a review of report made by requester allows of a
// hand-over to a delegate: never to its requester, and only to someone
// who may review the report (mayReview). A review grants no one access to
// a report, and neither does a delegation: one whose delegate cannot read
// it stays with the reviewer away.
func (s *Service) handoverOf(requester string, report *models.Report) requests.Handover {
	return requests.Handover{Requester: requester, May: func(ctx context.Context, id string) (bool, error) {
		people, err := s.store.People(ctx, report.OrganizationID, []string{id})
		if err != nil || len(people) == 0 {
			return false, err
		}
		return s.mayReview(ctx, report, people[0])
	}}
}

// askable are the candidates a refused review names instead of those who
// cannot read the report: its owner, when a person, and the
// organisation's active owners and administrators, never the requester;
// the refused themselves are never among them, since each of these may be
// asked.
func (s *Service) askable(ctx context.Context, r *models.Report, requester string) ([]string, error) {
	ids, err := s.store.ActiveMemberIDs(ctx, r.OrganizationID, models.RoleOwner, models.RoleAdmin)
	if err != nil {
		return nil, err
	}
	if r.OwnerPerson && !slices.Contains(ids, r.OwnerID) {
		ids = append([]string{r.OwnerID}, ids...)
	}
	people, err := s.store.People(ctx, r.OrganizationID, slices.DeleteFunc(ids, func(id string) bool { return id == requester }))
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, p := range people {
		if ok, err := s.mayReview(ctx, r, p); err != nil {
			return nil, err
		} else if ok && len(out) < requests.MaxCandidates {
			out = append(out, requests.DescribePerson(p))
		}
	}
	return out, nil
}

// pinned is the version a review looks at: the one named, which must be
// the report's and published, or else the live one.
func (s *Service) pinned(ctx context.Context, r *models.Report, versionID *string) (*models.ReportVersion, error) {
	if versionID == nil {
		v, err := s.reports.LiveVersion(ctx, r)
		if apperr.Is(err, apperr.InvalidState) {
			return nil, apperr.Field(apperr.InvalidState, "versionId", "report %s has no live version to review", r.Slug)
		}
		return v, err
	}
	v, err := s.store.GetVersion(ctx, r.OrganizationID, *versionID)
	if apperr.Is(err, apperr.NotFound) || (err == nil && v.ReportID != r.ID) {
		return nil, apperr.Field(apperr.NotFound, "versionId", "version %s of report %s not found", *versionID, r.Slug)
	}
	if err != nil {
		return nil, err
	}
	if v.State != models.VersionPublished {
		return nil, apperr.Field(apperr.InvalidState, "versionId", "version %d was %s by the publish scan and cannot be reviewed", v.Version, v.State)
	}
	return v, nil
}

// Start starts the workflow of rec, a record already stored: Create and
// the reconciler start every review this way.
func (s *Service) Start(ctx context.Context, rec *Review) error {
	return s.StartWorkflow(ctx, &rec.RequestBase, WorkflowInput{RequestInput: requests.InputOf(&rec.RequestBase, requests.AskedVia(rec.Asked.V)),
		ReviewID: rec.ID, ReviewerIDs: rec.ReviewerIDs, RequiredApprovals: rec.RequiredApprovals})
}

// VerdictInput is a reviewer's verdict.
type VerdictInput struct {
	Verdict string `json:"verdict" validate:"required,oneof=approved changes_requested"`
	Note    string `json:"note" validate:"max=20000"`
}

// Verdict returns a person's verdict on a review, through the workflow,
// which decides whether this person may give one now.
func (s *Service) Verdict(ctx context.Context, who models.Actor, id, updateID string, in VerdictInput) (*Review, error) {
	person, err := accounts.ActingPerson(who, "a verdict")
	if err != nil {
		return nil, err
	}
	r, err := s.View(ctx, who, id)
	if err != nil {
		return nil, err
	}
	return s.Update(ctx, r.OrganizationID, id, updateID, UpdateVerdict,
		&VerdictRequest{ReviewerID: person.ID(), ReviewerName: person.DisplayName(), ReviewerEmail: person.Email(),
			Verdict: in.Verdict, Note: strings.TrimSpace(in.Note)})
}

// RemoveAsked takes a person removed from the organisation off each of
// the open reviews named, through its workflow (see Workflow
// removeReviewer). When those left could not give the approvals still
// needed, the organisation's active owners and administrators who can read
// the review's report, other than its requester, become reviewers: a
// reviewer must read what they review, as at creation; those away are
// replaced by who stands in for them, as at creation. A review already
// settled, or where the person returned a verdict or is no longer asked,
// needs nothing.
func (s *Service) RemoveAsked(ctx context.Context, orgID string, by models.Actor, personID, personName string, reviewIDs []string) error {
	if len(reviewIDs) == 0 {
		return nil
	}
	admins, err := s.store.ActiveMemberIDs(ctx, orgID, models.RoleOwner, models.RoleAdmin)
	if err != nil {
		return err
	}
	return s.RemovePerson(ctx, orgID, reviewIDs, personID, UpdateRemoveReviewer, "remove-reviewer",
		func(r *Review) (workflows.Argument, error) {
			defaults, via, err := s.defaultReviewers(ctx, r, admins)
			return &workflows.RemoveAskedRequest{PersonID: personID, PersonName: personName, Defaults: defaults,
				OnBehalfOf: requests.OnBehalfOf(via), ActorID: by.ID, ActorName: by.Name}, err
		},
		apperr.InvalidState, apperr.NotAReviewer, apperr.AlreadyDecided)
}

// defaultReviewers are the admins who may review review r's report (all
// of them: see mayReview), less its requester, each away replaced by who
// stands in for them there (handoverOf), with how each was reached.
func (s *Service) defaultReviewers(ctx context.Context, r *Review, admins []string) ([]string, map[string][]models.Via, error) {
	orgID := r.OrganizationID
	report, err := s.store.GetReport(ctx, orgID, r.ReportID)
	if err != nil {
		return nil, nil, err
	}
	people, err := s.store.People(ctx, orgID, slices.DeleteFunc(slices.Clone(admins), func(id string) bool { return id == r.Requester }))
	if err != nil {
		return nil, nil, err
	}
	var out []string
	via := map[string][]models.Via{}
	for _, p := range people {
		ok, err := s.mayReview(ctx, report, p)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			out = append(out, p.ID())
			via[p.ID()] = []models.Via{models.ViaDefault("reviewers")}
		}
	}
	return requests.StandIns(ctx, s.store, orgID, out, via, "reviewers", s.handoverOf(r.Requester, report))
}
