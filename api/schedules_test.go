package api_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/workflows"
)

// TestSchedules: a living report's schedule is a Temporal Schedule that
// fires schedule.due with the schedule and the report; pause, resume and
// delete reach the Temporal Schedule; refusals name their field.
func TestSchedules(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		living := s.publish(t, `{"title":"Weekly","slug":"team/weekly","living":true,"content":`+jsonString(html("w"))+`}`)
		fixed := s.publish(t, `{"title":"Once","content":`+jsonString(html("o"))+`}`)

		cases := []struct {
			name, body  string
			status      int
			code, field string
		}{
			{"neither", `{"reportId":"team/weekly"}`, 400, "invalid_request", "cron, every"},
			{"both", `{"reportId":"team/weekly","cron":"0 9 * * *","every":"1h"}`, 400, "invalid_request", "cron, every"},
			{"too often", `{"reportId":"team/weekly","every":"30s"}`, 400, "invalid_request", "every"},
			{"not a duration", `{"reportId":"team/weekly","every":"soon"}`, 400, "invalid_request", "every"},
			{"cron of three fields", `{"reportId":"team/weekly","cron":"0 9 *"}`, 400, "invalid_request", "cron"},
			{"cron Temporal refuses", `{"reportId":"team/weekly","cron":"99 99 * * *"}`, 400, "invalid_request", "cron"},
			// Every form is held to the minute, cron's own intervals and
			// second fields too.
			{"cron every second", `{"reportId":"team/weekly","cron":"@every 1s"}`, 400, "invalid_request", "cron"},
			{"cron every 30 seconds", `{"reportId":"team/weekly","cron":"@every 30s"}`, 400, "invalid_request", "cron"},
			{"cron every 59 seconds with an offset", `{"reportId":"team/weekly","cron":"@every 59s/10s"}`, 400, "invalid_request", "cron"},
			{"cron every second with a comment", `{"reportId":"team/weekly","cron":"@every 1s # often"}`, 400, "invalid_request", "cron"},
			{"cron second field", `{"reportId":"team/weekly","cron":"* * * * * * *"}`, 400, "invalid_request", "cron"},
			{"cron two seconds a minute", `{"reportId":"team/weekly","cron":"0,30 * * * * * *"}`, 400, "invalid_request", "cron"},
			{"cron a pair of seconds once a week", `{"reportId":"team/weekly","cron":"0,59 0 9 * * MON *"}`, 400, "invalid_request", "cron"},
			{"every 59 seconds", `{"reportId":"team/weekly","every":59}`, 400, "invalid_request", "every"},
			{"time zone", `{"reportId":"team/weekly","every":"1h","timezone":"Mars/Olympus"}`, 400, "invalid_request", "timezone"},
			{"no such report", `{"reportId":"nope","every":"1h"}`, 400, "invalid_request", "reportId"},
			{"not living", `{"reportId":"` + fixed["id"].(string) + `","every":"1h"}`, 409, "invalid_state", "reportId"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := s.do(t, "POST", "/api/v1/schedules", s.agentKey, c.body, nil)
				require.Equal(t, c.status, r.status, string(r.body))
				assert.Equal(t, c.code, errField(r, "code"))
				assert.Equal(t, c.field, errField(r, "field"))
			})
		}
		// A minute apart or more, in any form, is accepted.
		s.publish(t, `{"title":"Often","slug":"team/often","living":true,"content":`+jsonString(html("f"))+`}`)
		for _, cron := range []string{"@every 1m", "@every 90s/30s", "@hourly", "@daily", "* * * * *", "*/5 * * * *", "0 9 * * MON-FRI", "* * * * * 2099", "30 * * * * * *"} {
			r := s.do(t, "POST", "/api/v1/schedules", s.agentKey, `{"reportId":"team/often","cron":"`+cron+`"}`, nil)
			assert.Equal(t, 201, r.status, "%s: %s", cron, r.body)
		}
		r := s.do(t, "POST", "/api/v1/schedules", s.otherAgent, `{"reportId":"`+living["id"].(string)+`","every":"1h"}`, nil)
		assert.Equal(t, 400, r.status, "another organisation's report is not found")

		created := s.do(t, "POST", "/api/v1/schedules", s.agentKey, `{"reportId":"team/weekly","cron":"0 9 * * MON","timezone":"Europe/Paris","note":"Monday figures"}`, nil)
		require.Equal(t, 201, created.status, string(created.body))
		id := created.decoded["id"].(string)
		assert.Regexp(t, `^sch_`, id)
		assert.Equal(t, living["id"], created.decoded["reportId"])
		assert.Equal(t, "Europe/Paris", created.decoded["timezone"])
		every := s.do(t, "POST", "/api/v1/schedules", s.agentKey, `{"reportId":"team/weekly","every":"24h"}`, nil)
		require.Equal(t, 201, every.status, string(every.body))
		assert.EqualValues(t, 86400, every.decoded["every"])
		assert.Equal(t, "UTC", every.decoded["timezone"])

		h := s.tc.ScheduleClient().GetHandle(ctx, workflows.ReportScheduleID(id))
		desc, err := h.Describe(ctx)
		require.NoError(t, err)
		assert.Equal(t, "Europe/Paris", desc.Schedule.Spec.TimeZoneName)

		// Fire it now: schedule.due arrives once, with the schedule and
		// the report.
		require.NoError(t, h.Trigger(ctx, client.ScheduleTriggerOptions{}))
		var data map[string]any
		require.Eventually(t, func() bool {
			evs, err := s.store.ListEvents(ctx, s.org.ID, id)
			if err != nil || len(evs) == 0 {
				return false
			}
			require.Len(t, evs, 1)
			assert.Equal(t, "schedule.due", evs[0].Kind)
			require.NoError(t, json.Unmarshal(evs[0].Data, &data))
			return true
		}, 20*time.Second, 100*time.Millisecond)
		assert.Equal(t, id, data["schedule"].(map[string]any)["id"])
		assert.Equal(t, "team/weekly", data["report"].(map[string]any)["slug"])
		got := s.do(t, "GET", "/api/v1/schedules/"+id, s.agentKey, "", nil)
		require.Equal(t, 200, got.status)
		assert.NotNil(t, got.decoded["lastDueAt"])

		paused := s.do(t, "POST", "/api/v1/schedules/"+id+"/pause", s.agentKey, "", nil)
		require.Equal(t, 200, paused.status, string(paused.body))
		assert.Equal(t, true, paused.decoded["paused"])
		desc, err = h.Describe(ctx)
		require.NoError(t, err)
		assert.True(t, desc.Schedule.State.Paused)
		resumed := s.do(t, "POST", "/api/v1/schedules/"+id+"/resume", s.agentKey, "", nil)
		require.Equal(t, 200, resumed.status)
		assert.Equal(t, false, resumed.decoded["paused"])

		list := s.do(t, "GET", "/api/v1/schedules?reportId="+living["id"].(string), s.agentKey, "", nil)
		require.Equal(t, 200, list.status)
		assert.Len(t, list.decoded["data"], 2)
		assert.Equal(t, 404, s.do(t, "GET", "/api/v1/schedules/"+id, s.otherAgent, "", nil).status)
		assert.Equal(t, 404, s.do(t, "DELETE", "/api/v1/schedules/"+id, s.otherAgent, "", nil).status)

		require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/schedules/"+id, s.agentKey, "", nil).status)
		assert.Equal(t, 404, s.do(t, "GET", "/api/v1/schedules/"+id, s.agentKey, "", nil).status)
		_, err = h.Describe(ctx)
		assert.Error(t, err, "the Temporal Schedule is deleted too")
	})
}

// TestSchedulesBelowTheMinimumAreMended: schedules an earlier version
// saved to fire more often than once a minute (a seconds field, @every
// under a minute, an interval under one) are brought to the minimum, in
// their Temporal Schedules and rows, each note saying so; others are left
// alone, and a second run changes nothing.
func TestSchedulesBelowTheMinimumAreMended(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		s.publish(t, `{"title":"Weekly","slug":"team/weekly","living":true,"content":`+jsonString(html("w"))+`}`)
		create := func(body string) string {
			r := s.do(t, "POST", "/api/v1/schedules", s.agentKey, body, nil)
			require.Equal(t, 201, r.status, string(r.body))
			return r.decoded["id"].(string)
		}
		seconds := create(`{"reportId":"team/weekly","cron":"30 * * * * * *","note":"figures"}`)
		every := create(`{"reportId":"team/weekly","cron":"@every 1m"}`)
		interval := create(`{"reportId":"team/weekly","every":"1h"}`)
		weekly := create(`{"reportId":"team/weekly","cron":"0 9 * * MON","note":"untouched"}`)
		// As an earlier version saved them, rows and Temporal Schedules.
		earlier := func(id string, cron *string, everySeconds *int64) {
			require.NoError(t, db.Table("schedules").Where("id = ?", id).
				Updates(map[string]any{"cron": cron, "every_seconds": everySeconds}).Error)
			spec := client.ScheduleSpec{TimeZoneName: "UTC"}
			if cron != nil {
				spec.CronExpressions = []string{*cron}
			} else {
				spec.Intervals = []client.ScheduleIntervalSpec{{Every: time.Duration(*everySeconds) * time.Second}}
			}
			require.NoError(t, s.tc.ScheduleClient().GetHandle(ctx, workflows.ReportScheduleID(id)).Update(ctx, client.ScheduleUpdateOptions{
				DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
					in.Description.Schedule.Spec = &spec
					return &client.ScheduleUpdate{Schedule: &in.Description.Schedule}, nil
				}}))
		}
		thirty := int64(30)
		earlier(seconds, new("*/10 * * * * * *"), nil)
		earlier(every, new("@every 10s # fast"), nil)
		earlier(interval, nil, &thirty)

		n, err := s.services.Reports.MendSchedules(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		for id, want := range map[string]struct {
			cron  any
			every any
		}{seconds: {"0 * * * * * *", nil}, every: {"@every 1m # fast", nil}, interval: {nil, float64(60)}} {
			got := s.do(t, "GET", "/api/v1/schedules/"+id, s.agentKey, "", nil)
			require.Equal(t, 200, got.status, string(got.body))
			assert.Equal(t, want.cron, got.decoded["cron"], id)
			assert.Equal(t, want.every, got.decoded["every"], id)
			assert.Contains(t, got.decoded["note"], "Assent brought this schedule to its minimum of once a minute", id)
			desc, err := s.tc.ScheduleClient().GetHandle(ctx, workflows.ReportScheduleID(id)).Describe(ctx)
			require.NoError(t, err)
			assert.Contains(t, desc.Schedule.State.Note, "to its minimum of once a minute", id)
			next := desc.Info.NextActionTimes
			require.GreaterOrEqual(t, len(next), 2, id)
			for i := 1; i < len(next); i++ {
				assert.GreaterOrEqual(t, next[i].Sub(next[i-1]), time.Minute, "%s fires at most once a minute: %v", id, next)
			}
		}
		got := s.do(t, "GET", "/api/v1/schedules/"+seconds, s.agentKey, "", nil)
		assert.Regexp(t, `^figures\n\n\d{4}-\d\d-\d\d: Assent brought this schedule to its minimum of once a minute: cron "\*/10 \* \* \* \* \* \*" became cron "0 \* \* \* \* \* \*"\.$`, got.decoded["note"])
		untouched := s.do(t, "GET", "/api/v1/schedules/"+weekly, s.agentKey, "", nil)
		assert.Equal(t, "untouched", untouched.decoded["note"])
		assert.Equal(t, "0 9 * * MON", untouched.decoded["cron"])

		n, err = s.services.Reports.MendSchedules(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "nothing left to mend")
	})
}

// flakySchedules fails the next busy registrations of a Temporal Schedule
// as a busy server does, and refuses the next refused as invalid.
type flakySchedules struct {
	client.Client
	busy, refused *atomic.Int32
}

func (c flakySchedules) ScheduleClient() client.ScheduleClient {
	return flakyScheduleClient{c.Client.ScheduleClient(), c}
}

type flakyScheduleClient struct {
	client.ScheduleClient
	c flakySchedules
}

func (c flakyScheduleClient) Create(ctx context.Context, o client.ScheduleOptions) (client.ScheduleHandle, error) {
	switch {
	case c.c.busy.Add(-1) >= 0:
		return nil, serviceerror.NewUnavailable("the history service is busy")
	case c.c.refused.Add(-1) >= 0:
		return nil, serviceerror.NewInvalidArgument("invalid cron string")
	}
	return c.ScheduleClient.Create(ctx, o)
}

// TestScheduleRetriedWithItsKey: a schedule whose registration failed
// stays bound to its Idempotency-Key, and the key's retry registers it;
// one Temporal refused is taken back with its claim, so the key may send
// a corrected schedule.
func TestScheduleRetriedWithItsKey(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		busy, refused := &atomic.Int32{}, &atomic.Int32{}
		f := newFixtureWith(t, db, flakySchedules{s.tc, busy, refused})
		f.publish(t, `{"title":"Weekly","slug":"team/weekly","living":true,"content":`+jsonString(html("w"))+`}`)
		post := func(key, body string) response {
			return f.do(t, "POST", "/api/v1/schedules", f.agentKey, body, map[string]string{"Idempotency-Key": key})
		}

		busy.Store(1)
		r := post("weekly-1", `{"reportId":"team/weekly","every":"24h"}`)
		require.Equal(t, 503, r.status, string(r.body))
		r = post("weekly-1", `{"reportId":"team/weekly","every":"24h"}`)
		require.Equal(t, 201, r.status, "the key's retry registers the schedule its first attempt made: %s", r.body)
		id := r.decoded["id"].(string)
		_, err := s.tc.ScheduleClient().GetHandle(context.Background(), workflows.ReportScheduleID(id)).Describe(context.Background())
		require.NoError(t, err, "registered with Temporal")
		list := f.do(t, "GET", "/api/v1/schedules", f.agentKey, "", nil)
		require.Len(t, list.decoded["data"], 1, "one schedule for the key")

		refused.Store(1)
		r = post("weekly-2", `{"reportId":"team/weekly","cron":"0 9 * * MON"}`)
		require.Equal(t, 400, r.status, string(r.body))
		assert.Equal(t, "cron", errField(r, "field"))
		r = post("weekly-2", `{"reportId":"team/weekly","cron":"0 9 * * MON"}`)
		require.Equal(t, 201, r.status, "a refused schedule frees its key: %s", r.body)
		assert.Len(t, f.do(t, "GET", "/api/v1/schedules", f.agentKey, "", nil).decoded["data"], 2, "the refused one was taken back")
	})
}
