package reports

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// holdKind names held versions in search attributes and logs.
const holdKind = "publish_hold"

// holds is how the shared Update and reconciler paths handle held
// versions: each waits in its own workflow.
func (s *Service) holds() *requests.Records[models.ReportVersion] {
	return &requests.Records[models.ReportVersion]{Noun: "held version", Open: models.VersionHeld,
		Owner: heldVersions{s}, Rows: heldVersions{s}, Log: s.log, Store: s.store, Temporal: s.temporal}
}

// heldVersions are the versions the publish scan held, as the shared
// paths own and read them.
type heldVersions struct{ s *Service }

func (heldVersions) Head(v *models.ReportVersion) requests.Head {
	return requests.Head{ID: v.ID, OrganizationID: v.OrganizationID, Status: v.State, Started: v.HoldStarted}
}

func (heldVersions) WorkflowID(id string) string { return workflows.HoldWorkflowID(id) }

func (h heldVersions) Start(ctx context.Context, v *models.ReportVersion) error {
	return h.s.startHold(ctx, v)
}

func (h heldVersions) Get(ctx context.Context, orgID, id string) (*models.ReportVersion, error) {
	return h.s.store.Reports().GetVersion(ctx, orgID, id)
}

func (h heldVersions) Unowned(ctx context.Context, olderThan time.Time, limit int) ([]models.ReportVersion, error) {
	return h.s.store.Reports().UnstartedHolds(ctx, olderThan, limit)
}

// hold starts the workflow of a version the scan held. A start that fails
// is the reconciler's to retry: the version is written, and held versions
// without a workflow are started after requests.ReconcileGrace.
func (s *Service) hold(ctx context.Context, v *models.ReportVersion) {
	if v.State != models.VersionHeld || v.HoldStarted {
		return
	}
	if err := s.startHold(ctx, v); err != nil {
		s.log.Warn("start the workflow of a held version; the reconciler will", "version", v.ID, "error", err)
	}
}

func (s *Service) startHold(ctx context.Context, v *models.ReportVersion) error {
	if s.temporal == nil {
		return apperr.New(apperr.Unavailable, "no workflow service is configured")
	}
	return requests.StartOnce(ctx, s.temporal, client.StartWorkflowOptions{
		ID:                    workflows.HoldWorkflowID(v.ID),
		TypedSearchAttributes: requests.Attributes(v.OrganizationID, holdKind, models.VersionHeld, nil),
	}, workflows.WorkflowHold, workflows.PublishHoldInput{OrganizationID: v.OrganizationID, VersionID: v.ID, HeldAt: v.CreatedAt})
}

// Kind names held versions for the reconciler's logs.
func (s *Service) Kind() string { return holdKind }

// StartUnowned starts the workflows of held versions whose start was lost.
func (s *Service) StartUnowned(ctx context.Context, olderThan time.Time, batch int) (int, error) {
	return s.holds().StartUnowned(ctx, olderThan, batch)
}

// HeldVersion is a held version with its report, for the admin pages.
type HeldVersion struct {
	Report  *models.Report
	Version models.ReportVersion
}

// Held lists the organisation's held versions, oldest first.
func (s *Service) Held(ctx context.Context, orgID string) ([]HeldVersion, error) {
	vs, err := s.store.Reports().HeldVersions(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := make([]HeldVersion, 0, len(vs))
	for _, v := range vs {
		r, err := s.store.Reports().GetReport(ctx, orgID, v.ReportID)
		if err != nil {
			return nil, err
		}
		out = append(out, HeldVersion{Report: r, Version: v})
	}
	return out, nil
}

// DecideHeld releases or declines a held version, for an owner, an
// administrator or an admin key; updateID makes a repeated request run
// once. It returns the report and the version as they are after it.
func (s *Service) DecideHeld(ctx context.Context, by models.Actor, orgID, versionID string, release bool, updateID string) (*models.Report, *models.ReportVersion, error) {
	if !by.Administrator {
		return nil, nil, apperr.New(apperr.Forbidden, "only an owner or administrator may release or decline a held version")
	}
	d := workflows.HoldDecision{Decision: workflows.HoldDecline, ActorID: by.ID, ActorName: by.Name}
	if release {
		d.Decision = workflows.HoldRelease
	}
	v, err := s.holds().Update(ctx, orgID, versionID, updateID, workflows.UpdateDecideHold, &d)
	if err != nil {
		return nil, nil, err
	}
	r, err := s.store.Reports().GetReport(ctx, orgID, v.ReportID)
	return r, v, err
}
