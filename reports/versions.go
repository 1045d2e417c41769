package reports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/assent-hq/assent/flows"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// Versions writes a report's life: its creation with its first version,
// a publish, a rollback, archiving, a held version's decision, and a
// schedule's moment due. Each
// is one transaction under the report's row lock with its audit step and
// its event, whose data is the report as the API shows it. The service
// writes through it, and so does the hold workflow's activity, which has
// no service.
type Versions struct {
	Store Store
	// BaseURL makes the addresses in event data.
	BaseURL string
}

// step writes r's next audit step and, when event is set, the event with
// r and v as its data, in ctx's transaction.
func (w Versions) step(ctx context.Context, r *models.Report, v *models.ReportVersion, action, detail string, by models.Actor,
	event string, at time.Time) error {
	if err := w.Store.ReportStep(ctx, r, action, detail, by, at); err != nil || event == "" {
		return err
	}
	b, err := json.Marshal(wire.NewReport(r, v, w.BaseURL))
	if err != nil {
		return err
	}
	return w.Store.Emit(ctx, models.ReportEvent(r, event, b, at))
}

var errSlugTaken = errors.New("slug taken")

// Create creates a report with its first version, binding claim to the
// report. A slug derived from the title that is taken gets a numbered
// suffix; one given is refused. When an earlier attempt of the claimed
// request already made it, that report and its first version are
// returned.
func (w Versions) Create(ctx context.Context, in models.NewReport, pub models.Publication, claim *models.Claim) (*models.Report, *models.ReportVersion, error) {
	now := models.Now()
	r := &models.Report{ID: ids.New(ids.Report), OrganizationID: in.OrganizationID, Key: strings.ToLower(models.RandomToken(20)),
		Title: in.Title, Living: in.Living, Classification: in.Classification, Audience: models.StringList{},
		OwnerID: pub.By.ID, OwnerName: pub.By.Name, OwnerPerson: pub.By.IsPerson, FlowID: in.FlowID, CreatedAt: now, UpdatedAt: now}
	if in.CopiedFrom != nil {
		r.CopiedFromID = &in.CopiedFrom.ID
	}
	var v *models.ReportVersion
	var earlier string
	for attempt := 1; ; attempt++ {
		r.Slug = derivedSlug(in.Slug, attempt)
		err := w.Store.Tx(ctx, func(ctx context.Context) error {
			if err := flows.RequireOpen(ctx, w.Store, r.OrganizationID, r.FlowID); err != nil {
				return err
			}
			var err error
			if earlier, err = w.Store.BindClaim(ctx, claim, r.ID); err != nil || earlier != "" {
				return err
			}
			taken, err := w.Store.Reports().SlugTaken(ctx, r.OrganizationID, r.Slug)
			if err != nil {
				return err
			}
			if taken {
				return errSlugTaken
			}
			err = w.Store.Reports().InsertReport(ctx, r)
			if errors.Is(err, models.ErrDuplicate) {
				return errSlugTaken
			}
			if err != nil {
				return err
			}
			w.Store.Changed(ctx, r.ID)
			if _, err := w.Store.Reports().AddGrants(ctx, r, in.Grants, pub.By, now); err != nil {
				return err
			}
			if v, err = w.addVersion(ctx, r, ids.New(ids.Version), pub); err != nil || in.CopiedFrom == nil {
				return err
			}
			src, err := w.Store.LockReport(ctx, r.OrganizationID, in.CopiedFrom.ID)
			if err != nil {
				return err
			}
			return w.step(ctx, src, nil, "copied", fmt.Sprintf("copied as %s (%s)", r.Slug, r.ID), pub.By, "", now)
		})
		switch {
		case earlier != "":
			return w.Store.Reports().ClaimedVersion(ctx, claim)
		case errors.Is(err, errSlugTaken) && in.SlugGiven:
			return nil, nil, apperr.Field(apperr.SlugTaken, "slug", "slug %q is already used by another report in this organisation", r.Slug)
		case errors.Is(err, errSlugTaken) && attempt < 20:
			continue
		case err != nil:
			return nil, nil, err
		}
		return r, v, nil
	}
}

// derivedSlug is the slug to try on the nth attempt: slug itself, then
// slug-2 to slug-9, then slug with a random suffix, within the slug limit.
func derivedSlug(slug string, n int) string {
	if n == 1 {
		return slug
	}
	suffix := fmt.Sprintf("-%d", n)
	if n >= 10 {
		suffix = "-" + models.RandomToken(4)[:6]
	}
	if len(slug)+len(suffix) > models.MaxSlug {
		slug = strings.TrimRight(slug[:models.MaxSlug-len(suffix)], "-/")
	}
	return slug + suffix
}

// Publish adds the next version to a report. expected, when set, must be
// the report's latest version number (version_conflict otherwise); the
// report's row is locked, so of two publishes expecting the same number
// one wins. A retry of a claimed publish answers with what it made.
func (w Versions) Publish(ctx context.Context, orgID, reportID string, expected *int, pub models.Publication, claim *models.Claim) (*models.Report, *models.ReportVersion, error) {
	var r *models.Report
	var v *models.ReportVersion
	var earlier string
	err := w.Store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if r, err = w.Store.LockReport(ctx, orgID, reportID); err != nil {
			return err
		}
		if expected != nil && *expected != r.LatestVersion {
			return apperr.Field(apperr.VersionConflict, "expectedVersion",
				"expectedVersion is %d but the report's latest version is %d: read the versions and publish again", *expected, r.LatestVersion)
		}
		id := ids.New(ids.Version)
		if earlier, err = w.Store.BindClaim(ctx, claim, id); err != nil || earlier != "" {
			return err
		}
		w.Store.Changed(ctx, r.ID)
		v, err = w.addVersion(ctx, r, id, pub)
		return err
	})
	switch {
	case err != nil:
		return nil, nil, err
	case earlier != "":
		return w.Store.Reports().ClaimedVersion(ctx, claim)
	}
	return r, v, nil
}

// addVersion writes r's next version, id, from pub, with its audit step
// and event, and uses its upload up, in ctx's transaction.
func (w Versions) addVersion(ctx context.Context, r *models.Report, id string, pub models.Publication) (*models.ReportVersion, error) {
	if pub.UploadID != "" {
		consumed, err := w.Store.Reports().ConsumeUpload(ctx, r.OrganizationID, pub.UploadID)
		if err != nil {
			return nil, err
		}
		if !consumed { // a concurrent publish read it too
			return nil, uploadGone(pub.UploadID)
		}
	}
	now := models.Now()
	var size int64
	for _, f := range pub.Files {
		size += f.Size
	}
	r.LatestVersion++
	v := &models.ReportVersion{ID: id, OrganizationID: r.OrganizationID, ReportID: r.ID, Version: r.LatestVersion,
		State: pub.State, ChangeSummary: pub.ChangeSummary, PublishedBy: pub.By.ID, PublishedByName: pub.By.Name,
		Files: models.JSON[[]models.ManifestFile]{V: nonNil(pub.Files)}, Bytes: size,
		Findings: models.JSON[[]models.Finding]{V: nonNil(pub.Findings)}, CreatedAt: now}
	if err := w.Store.Reports().InsertVersion(ctx, v); err != nil {
		return nil, err
	}
	action, event := "published", ""
	switch pub.State {
	case models.VersionPublished:
		event = goLive(r, v)
	case models.VersionHeld:
		action, event = "held", events.PublishHeld
	case models.VersionDeclined:
		action = "declined"
	}
	detail := fmt.Sprintf("version %d", v.Version)
	if n := len(pub.Findings); n > 0 {
		detail += fmt.Sprintf(", %d finding(s) of the publish scan", n)
	}
	return v, w.step(ctx, r, v, action, detail, pub.By, event, now)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// goLive makes v the live version of r and names the event it causes: a
// report's first live version is published, any later one updates it.
func goLive(r *models.Report, v *models.ReportVersion) string {
	first := r.LiveVersion == nil // once live, a report always has a live version
	n := v.Version
	r.LiveVersion = &n
	if first {
		return events.ReportPublished
	}
	return events.ReportUpdated
}

// Rollback makes an earlier version that went live the live one again
// (or a later one: rolling forward is the same), under the report's row
// lock; a version the publish scan held or declined never went live and
// is refused. Making the live version live again changes nothing.
func (w Versions) Rollback(ctx context.Context, orgID, reportID string, version int, by models.Actor) (*models.Report, *models.ReportVersion, error) {
	var r *models.Report
	var v *models.ReportVersion
	err := w.Store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if r, err = w.Store.LockReport(ctx, orgID, reportID); err != nil {
			return err
		}
		w.Store.Changed(ctx, r.ID)
		v, err = w.Store.Reports().GetVersionNumber(ctx, r, version)
		if apperr.Is(err, apperr.NotFound) {
			return apperr.Field(apperr.NotFound, "version", "report %s has no version %d", r.Slug, version)
		}
		if err != nil {
			return err
		}
		if v.State != models.VersionPublished {
			return apperr.Field(apperr.InvalidState, "version", "version %d was %s by the publish scan and never went live", version, v.State)
		}
		if r.LiveVersion != nil && *r.LiveVersion == version {
			return nil
		}
		from := "none"
		if r.LiveVersion != nil {
			from = fmt.Sprint(*r.LiveVersion)
		}
		event := goLive(r, v)
		return w.step(ctx, r, v, "rolled back", fmt.Sprintf("live version %s → %d", from, version), by, event, models.Now())
	})
	if err != nil {
		return nil, nil, err
	}
	return r, v, nil
}

// SetArchived archives a report (its address stops serving) or restores
// it with the same live version and audience; one already so changes
// nothing.
func (w Versions) SetArchived(ctx context.Context, orgID, reportID string, archived bool, by models.Actor) (*models.Report, error) {
	var r *models.Report
	err := w.Store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if r, err = w.Store.LockReport(ctx, orgID, reportID); err != nil {
			return err
		}
		w.Store.Changed(ctx, r.ID)
		if r.Archived == archived {
			return nil
		}
		r.Archived = archived
		action := "archived"
		if !archived {
			action = "restored"
		}
		return w.step(ctx, r, nil, action, "", by, "", models.Now())
	})
	return r, err
}

// DecideHeld releases or declines a held version. A released version goes
// live as if published now, unless a newer version is live, when it
// becomes previous. Deciding a version already decided the same way is a
// no-op, so the hold workflow's activity may be retried.
func (w Versions) DecideHeld(ctx context.Context, orgID, versionID string, release bool, by models.Actor) (*models.Report, *models.ReportVersion, error) {
	var r *models.Report
	var v *models.ReportVersion
	err := w.Store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if v, err = w.Store.Reports().GetVersion(ctx, orgID, versionID); err != nil {
			return err
		}
		// The report's lock orders deciders; the version is read again
		// under it, so two decisions never both find it held.
		if r, err = w.Store.LockReport(ctx, orgID, v.ReportID); err != nil {
			return err
		}
		w.Store.Changed(ctx, r.ID)
		if v, err = w.Store.Reports().GetVersion(ctx, orgID, versionID); err != nil {
			return err
		}
		if v.State != models.VersionHeld {
			if release == (v.State == models.VersionPublished) {
				return nil
			}
			return apperr.New(apperr.InvalidState, "version %d is already %s", v.Version, v.State)
		}
		now := models.Now()
		v.DecidedBy, v.DecidedByName, v.DecidedAt = &by.ID, &by.Name, &now
		action, event := "declined", ""
		if release {
			v.State, action = models.VersionPublished, "released"
			if r.LiveVersion == nil || *r.LiveVersion < v.Version {
				event = goLive(r, v)
			}
		} else {
			v.State = models.VersionDeclined
		}
		if err := w.Store.Reports().SaveVersion(ctx, v); err != nil {
			return err
		}
		return w.step(ctx, r, v, action, fmt.Sprintf("version %d", v.Version), by, event, now)
	})
	if err != nil {
		return nil, nil, err
	}
	return r, v, nil
}

// ScheduleDue writes schedule.due for the moment dueAt of the
// organisation's schedule id, once, under the schedule's row lock: a
// retry of the same moment, or a moment before the last, writes nothing,
// and so does a schedule or report that is gone. It reports whether it
// wrote. The schedule's workflow's activity runs it.
func (w Versions) ScheduleDue(ctx context.Context, orgID, id string, dueAt time.Time) (bool, error) {
	wrote := false
	err := w.Store.Tx(ctx, func(ctx context.Context) error {
		sc, err := w.Store.Reports().LockSchedule(ctx, orgID, id)
		if err != nil {
			return err
		}
		if sc.LastDueAt != nil && !dueAt.After(*sc.LastDueAt) {
			return nil
		}
		r, err := w.Store.Reports().GetReport(ctx, orgID, sc.ReportID)
		if err != nil {
			return err
		}
		if err := w.Store.Reports().MarkDue(ctx, sc, dueAt); err != nil {
			return err
		}
		b, err := json.Marshal(wire.ScheduleDue{Schedule: wire.NewSchedule(sc), Report: wire.NewReport(r, nil, w.BaseURL)})
		if err != nil {
			return err
		}
		wrote = true
		return w.Store.Emit(ctx, &models.Event{OrganizationID: orgID, Kind: events.ScheduleDue,
			SubjectType: "schedule", SubjectID: sc.ID, Data: b, CreatedAt: models.Now()})
	})
	if apperr.Is(err, apperr.NotFound) {
		return false, nil
	}
	return wrote, err
}
