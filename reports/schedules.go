package reports

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	_ "time/tzdata" // time zones by name, also where the system has none

	schedulepb "go.temporal.io/api/schedule/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/server/service/worker/scheduler"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// MinEvery is the shortest interval a schedule may have.
const MinEvery = time.Minute

// scheduleKind names report schedules in search attributes and logs.
const scheduleKind = "report_schedule"

// ScheduleInput is a new schedule of a living report: exactly one of cron
// and every.
type ScheduleInput struct {
	ReportID string `json:"reportId" validate:"required,max=200"`
	// Cron is a cron expression ("0 9 * * MON"), read in Timezone.
	Cron *string `json:"cron" validate:"omitempty,notblank,max=200" nullable:"true"`
	// Every is an interval: a duration ("24h") or whole seconds.
	Every    json.RawMessage `json:"every" nullable:"true"`
	Timezone *string         `json:"timezone" validate:"omitempty,max=64" nullable:"true"`
	Note     string          `json:"note" validate:"max=2000"`
}

// CreateSchedule schedules schedule.due for a living report, once per
// claim: the row is written bound to the claim first, then its Temporal
// Schedule is registered; a retry, or else the reconciler, registers one
// a crash left without.
func (s *Service) CreateSchedule(ctx context.Context, p models.Actor, in *ScheduleInput, claim *models.Claim) (*models.Schedule, error) {
	if id, err := s.store.ClaimedResource(ctx, claim); err != nil || id != "" {
		if err != nil {
			return nil, err
		}
		return s.registered(ctx, p.Organization.ID, id)
	}
	sc, err := s.newSchedule(ctx, p, in)
	if err != nil {
		return nil, err
	}
	var earlier string
	err = s.store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if earlier, err = s.store.BindClaim(ctx, claim, sc.ID); err != nil || earlier != "" {
			return err
		}
		return s.store.Reports().InsertSchedule(ctx, sc)
	})
	if err != nil {
		return nil, err
	}
	if earlier != "" {
		return s.registered(ctx, p.Organization.ID, earlier)
	}
	if err := s.register(ctx, sc); err != nil {
		// A schedule Temporal refused is taken back with its claim, so the
		// same key may send a corrected one. Any other failure leaves it
		// bound to its claim: a retry with the key, or else the
		// reconciler, registers it.
		if apperr.Is(err, apperr.InvalidRequest) {
			if del := s.takeBack(context.WithoutCancel(ctx), sc); del != nil {
				s.log.Error("take back a schedule Temporal refused", "schedule", sc.ID, "error", del)
			}
		}
		return nil, err
	}
	return s.store.Reports().GetSchedule(ctx, sc.OrganizationID, sc.ID)
}

// takeBack removes a schedule never registered and frees the claim that
// made it, in one transaction.
func (s *Service) takeBack(ctx context.Context, sc *models.Schedule) error {
	return s.store.Tx(ctx, func(ctx context.Context) error {
		if err := s.store.Reports().DeleteSchedule(ctx, sc.OrganizationID, sc.ID); err != nil {
			return err
		}
		return s.store.UnbindClaims(ctx, sc.OrganizationID, sc.ID)
	})
}

// newSchedule checks in and makes the schedule it asks for.
func (s *Service) newSchedule(ctx context.Context, p models.Actor, in *ScheduleInput) (*models.Schedule, error) {
	if (in.Cron == nil) == (len(in.Every) == 0 || string(in.Every) == "null") {
		return nil, apperr.Field(apperr.InvalidRequest, "cron, every", "send exactly one of cron (such as \"0 9 * * MON\") and every (such as \"24h\")")
	}
	r, err := s.managed(ctx, p.Organization.ID, p, in.ReportID)
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Field(apperr.InvalidRequest, "reportId", "report %s not found", in.ReportID)
	}
	if err != nil {
		return nil, err
	}
	if !r.Living {
		return nil, apperr.Field(apperr.InvalidState, "reportId", "report %s is not living: only reports meant to be updated at the same address have schedules", r.Slug)
	}
	sc := &models.Schedule{ID: models.NewScheduleID(), OrganizationID: p.Organization.ID, ReportID: r.ID, Cron: in.Cron,
		Timezone: "UTC", Note: in.Note, CreatedBy: p.ID, CreatedByName: p.Name}
	if in.Timezone != nil {
		if _, err := time.LoadLocation(*in.Timezone); err != nil || *in.Timezone == "" || strings.EqualFold(*in.Timezone, "local") {
			return nil, apperr.Field(apperr.InvalidRequest, "timezone", "timezone must be an IANA time zone name such as Europe/Paris")
		}
		sc.Timezone = *in.Timezone
	}
	field := "every"
	if in.Cron != nil {
		cron := strings.TrimSpace(*in.Cron)
		if n := len(strings.Fields(cron)); !strings.HasPrefix(cron, "@") && (n < 5 || n > 7) {
			return nil, apperr.Field(apperr.InvalidRequest, "cron", "cron must have five fields (minute hour day month weekday), such as \"0 9 * * MON\"")
		}
		sc.Cron, field = &cron, "cron"
	} else {
		every, err := requests.Duration("every", in.Every)
		if err != nil {
			return nil, err
		}
		seconds := int64(every / time.Second)
		sc.EverySeconds = &seconds
	}
	if err := oftenEnough(field, sc, time.Now()); err != nil {
		return nil, err
	}
	return sc, nil
}

// specs compiles schedule specs as the Temporal server does; Temporal
// exports the compiler, so the gaps checked are the ones it will fire at.
var specs = scheduler.NewSpecBuilder(func() int { return 0 }, func() int { return 10_000 })

// firingsChecked is how many firings oftenEnough looks at: three always
// include two firings of one minute when a cron's second field has two
// values, wherever now falls (the last of one minute, then two of the next).
const firingsChecked = 3

// oftenEnough holds every form of schedule (an interval, a cron of five
// to seven fields, @every with its offset, @hourly and the others) to
// MinEvery between firings, computed from its next firings as Temporal
// computes them. A spec Temporal refuses is named by field.
func oftenEnough(field string, sc *models.Schedule, now time.Time) error {
	spec := &schedulepb.ScheduleSpec{TimezoneName: sc.Timezone}
	if sc.Cron != nil {
		spec.CronString = []string{*sc.Cron}
	} else {
		spec.Interval = []*schedulepb.IntervalSpec{{Interval: durationpb.New(time.Duration(*sc.EverySeconds) * time.Second)}}
	}
	compiled, err := specs.NewCompiledSpec(spec)
	if err != nil {
		if sc.Cron != nil {
			return apperr.Field(apperr.InvalidRequest, field, "cron %q is not a valid cron expression: %s", *sc.Cron, err)
		}
		return apperr.Field(apperr.InvalidRequest, field, "%s is not a valid interval: %s", field, err)
	}
	var last time.Time
	for range firingsChecked {
		next, err := compiled.GetNextTime("", now)
		if err != nil || next.Nominal.IsZero() {
			break // never fires (again): nothing to space out
		}
		if !last.IsZero() && next.Nominal.Sub(last) < MinEvery {
			return apperr.Field(apperr.InvalidRequest, field, "%s must fire at most once a minute: it fires at %s and again %s later",
				field, last.UTC().Format(time.RFC3339), next.Nominal.Sub(last))
		}
		last, now = next.Nominal, next.Nominal
	}
	return nil
}

// register creates the schedule's Temporal Schedule, or finds it made.
func (s *Service) register(ctx context.Context, sc *models.Schedule) error {
	if s.temporal == nil {
		return apperr.New(apperr.Unavailable, "schedules cannot be made here: no workflow service is configured")
	}
	_, err := s.temporal.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:     workflows.ReportScheduleID(sc.ID),
		Spec:   specOf(sc),
		Paused: sc.Paused,
		Action: &client.ScheduleWorkflowAction{
			ID: workflows.ScheduleDueWorkflowID(sc.ID), Workflow: workflows.WorkflowScheduleDue, TaskQueue: workflows.TaskQueue,
			Args:                  []any{workflows.ScheduleDueInput{OrganizationID: sc.OrganizationID, ScheduleID: sc.ID}},
			TypedSearchAttributes: requests.Attributes(sc.OrganizationID, scheduleKind, "scheduled", nil),
		},
	})
	var invalid *serviceerror.InvalidArgument
	switch {
	case errors.As(err, &invalid) && sc.Cron != nil:
		return apperr.Field(apperr.InvalidRequest, "cron", "cron %q is not a valid cron expression: %s", *sc.Cron, invalid.Message)
	case errors.Is(err, temporal.ErrScheduleAlreadyRunning):
		// An earlier attempt registered it.
	case err != nil:
		return err
	}
	return s.store.Reports().MarkScheduleRegistered(ctx, sc.ID)
}

// specOf is the Temporal Schedule's spec of sc.
func specOf(sc *models.Schedule) client.ScheduleSpec {
	spec := client.ScheduleSpec{TimeZoneName: sc.Timezone}
	if sc.Cron != nil {
		spec.CronExpressions = []string{*sc.Cron}
	} else {
		spec.Intervals = []client.ScheduleIntervalSpec{{Every: time.Duration(*sc.EverySeconds) * time.Second}}
	}
	return spec
}

// registered returns schedule id of the organisation, registering it
// first when an earlier attempt did not get that far.
func (s *Service) registered(ctx context.Context, orgID, id string) (*models.Schedule, error) {
	sc, err := s.store.Reports().GetSchedule(ctx, orgID, id)
	if err != nil || sc.Registered {
		return sc, err
	}
	if err := s.register(ctx, sc); err != nil {
		return nil, err
	}
	return s.store.Reports().GetSchedule(ctx, orgID, id)
}

// GetSchedule returns one of the organisation's schedules.
func (s *Service) GetSchedule(ctx context.Context, orgID, id string) (*models.Schedule, error) {
	return s.store.Reports().GetSchedule(ctx, orgID, id)
}

// ListSchedules returns a page of the organisation's schedules.
func (s *Service) ListSchedules(ctx context.Context, orgID, reportID string, p models.Page) ([]models.Schedule, string, error) {
	return s.store.Reports().ListSchedules(ctx, orgID, reportID, p)
}

// managedSchedule returns schedule id of the organisation when by may
// change its report.
func (s *Service) managedSchedule(ctx context.Context, orgID string, by models.Actor, id string) (*models.Schedule, error) {
	sc, err := s.store.Reports().GetSchedule(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.managed(ctx, orgID, by, sc.ReportID); err != nil && !apperr.Is(err, apperr.NotFound) {
		return nil, err
	}
	return sc, nil
}

// PauseSchedule pauses or resumes a schedule.
func (s *Service) PauseSchedule(ctx context.Context, orgID string, by models.Actor, id string, paused bool) (*models.Schedule, error) {
	if s.temporal == nil {
		return nil, apperr.New(apperr.Unavailable, "schedules cannot be changed here: no workflow service is configured")
	}
	if _, err := s.managedSchedule(ctx, orgID, by, id); err != nil {
		return nil, err
	}
	sc, err := s.registered(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	h := s.temporal.ScheduleClient().GetHandle(ctx, workflows.ReportScheduleID(sc.ID))
	if paused {
		err = h.Pause(ctx, client.SchedulePauseOptions{Note: "paused through the API"})
	} else {
		err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: "resumed through the API"})
	}
	if err != nil {
		return nil, err
	}
	return s.store.Reports().SetSchedulePaused(ctx, orgID, id, paused)
}

// DeleteSchedule deletes a schedule and its Temporal Schedule.
func (s *Service) DeleteSchedule(ctx context.Context, orgID string, by models.Actor, id string) error {
	sc, err := s.managedSchedule(ctx, orgID, by, id)
	if err != nil {
		return err
	}
	if s.temporal == nil {
		return apperr.New(apperr.Unavailable, "schedules cannot be changed here: no workflow service is configured")
	}
	err = s.temporal.ScheduleClient().GetHandle(ctx, workflows.ReportScheduleID(sc.ID)).Delete(ctx)
	var missing *serviceerror.NotFound
	if err != nil && !errors.As(err, &missing) {
		return err
	}
	return s.store.Reports().DeleteSchedule(ctx, orgID, id)
}

// Schedules are the report schedules the reconciler registers.
func (s *Service) Schedules() requests.Owned { return scheduleRegistrar{s} }

type scheduleRegistrar struct{ s *Service }

func (r scheduleRegistrar) Kind() string { return scheduleKind }

// StartUnowned registers the Temporal Schedules of schedules a crash left
// without one.
func (r scheduleRegistrar) StartUnowned(ctx context.Context, olderThan time.Time, batch int) (int, error) {
	scs, err := r.s.store.Reports().UnregisteredSchedules(ctx, olderThan, batch)
	if err != nil {
		return 0, err
	}
	for i := range scs {
		if err := r.s.register(ctx, &scs[i]); err != nil {
			return i, err
		}
	}
	return len(scs), nil
}
