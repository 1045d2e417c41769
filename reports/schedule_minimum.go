package reports

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// mendBatch is how many schedules MendSchedules reads at once.
const mendBatch = 100

// MendSchedules brings every schedule saved before MinEvery held for each
// form (a cron with a seconds field, @every under a minute) to fire at
// most once a minute: its Temporal Schedule first, then its row, whose
// note says what changed and when, as the Temporal Schedule's note does.
// A worker runs it as it starts; one a crash left half done is taken
// again, the update being the same. It returns how many it changed.
func (s *Service) MendSchedules(ctx context.Context) (int, error) {
	if s.temporal == nil {
		return 0, nil
	}
	now := time.Now()
	n, after := 0, ""
	for {
		scs, err := s.store.Reports().SchedulesAfter(ctx, after, mendBatch)
		if err != nil || len(scs) == 0 {
			return n, err
		}
		for i := range scs {
			sc := &scs[i]
			after = sc.ID
			if oftenEnough(formOf(sc), sc, now) == nil {
				continue
			}
			was := describeSpec(sc)
			if !atMinimum(sc) || oftenEnough(formOf(sc), sc, now) != nil {
				s.log.Error("a schedule fires more than once a minute and cannot be brought to the minimum: delete it", "schedule", sc.ID, "spec", was)
				continue
			}
			said := fmt.Sprintf("%s: Assent brought this schedule to its minimum of once a minute: %s became %s.",
				now.UTC().Format(time.DateOnly), was, describeSpec(sc))
			if err := s.respec(ctx, sc, said); err != nil {
				return n, err
			}
			if err := s.store.Reports().SetScheduleSpec(ctx, sc.ID, sc.Cron, sc.EverySeconds, strings.TrimSpace(sc.Note+"\n\n"+said)); err != nil {
				return n, err
			}
			s.log.Warn("brought a schedule to its minimum of once a minute", "schedule", sc.ID, "was", was, "now", describeSpec(sc))
			n++
		}
	}
}

// formOf names the field sc's spec is in.
func formOf(sc *models.Schedule) string {
	if sc.Cron != nil {
		return "cron"
	}
	return "every"
}

// describeSpec is sc's spec as a person reads it in a note.
func describeSpec(sc *models.Schedule) string {
	if sc.Cron != nil {
		return "cron " + strconv.Quote(*sc.Cron)
	}
	return "every " + (time.Duration(*sc.EverySeconds) * time.Second).String()
}

// atMinimum changes sc's spec to the nearest that fires at most once a
// minute: an interval of a minute, a seconds field of 0; false when its
// form has no such change.
func atMinimum(sc *models.Schedule) bool {
	if sc.Cron == nil {
		if *sc.EverySeconds >= int64(MinEvery/time.Second) {
			return false
		}
		every := int64(MinEvery / time.Second)
		sc.EverySeconds = &every
		return true
	}
	// As Temporal reads a cron: a time zone first, a comment after #.
	zone, spec := "", strings.TrimSpace(*sc.Cron)
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		tz, rest, _ := strings.Cut(spec, " ")
		zone, spec = tz+" ", rest
	}
	spec, comment, commented := strings.Cut(spec, "#")
	fields := strings.Fields(spec)
	switch {
	case len(fields) > 0 && fields[0] == "@every":
		fields = []string{"@every", "1m"}
	case len(fields) == 7:
		fields[0] = "0" // the seconds field
	default:
		return false
	}
	cron := zone + strings.Join(fields, " ")
	if commented {
		cron += " #" + comment
	}
	sc.Cron = &cron
	return true
}

// respec gives sc's Temporal Schedule sc's spec and the note said. One
// not found has nothing to change: one never registered gets the spec
// when the reconciler registers it.
func (s *Service) respec(ctx context.Context, sc *models.Schedule, said string) error {
	h := s.temporal.ScheduleClient().GetHandle(ctx, workflows.ReportScheduleID(sc.ID))
	err := h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
		schedule := in.Description.Schedule
		spec := specOf(sc)
		schedule.Spec = &spec
		if schedule.State != nil {
			schedule.State.Note = said
		}
		return &client.ScheduleUpdate{Schedule: &schedule}, nil
	}})
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) {
		return nil
	}
	return err
}
