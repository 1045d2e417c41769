package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/payloadcodec"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/reviews"
	assentworker "github.com/assent-hq/assent/worker"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

const historiesDir = "testdata/histories"

// historiesCodec encrypts payloads as serve, worker and dev do, under the
// test-only key recorded beside the histories. strict refuses plain
// payloads (a live worker); otherwise they pass, as in histories recorded
// before payloads were encrypted.
func historiesCodec(t *testing.T, strict bool) (converter.DataConverter, converter.FailureConverter) {
	t.Helper()
	keys, err := secretkey.LoadOrCreate(filepath.Join(historiesDir, "test-only.key"))
	require.NoError(t, err)
	codec := payloadcodec.AcceptingPlain(keys)
	if strict {
		codec = payloadcodec.New(keys)
	}
	return payloadcodec.DataConverter(codec), payloadcodec.FailureConverter(codec)
}

// plainHistories were recorded before payloads were encrypted; every other
// history replays with the strict codec a worker runs.
var plainHistories = []string{
	"approval_approver_removed.json",
	"approval_cancelled.json",
	"approval_emailed_question_answered.json",
	"approval_expired.json",
	"approval_question_correction.json",
	"approval_raw_input_corrected.json",
	"approval_recorded_corrected.json",
	"approval_recorded_expired.json",
}

// TestReplaysSavedHistories replays every history in historiesDir,
// recorded from real runs of each workflow the worker runs, against the
// current code, through the payload codec. A change that would break a
// workflow already in flight (a new, removed or reordered command) fails
// here instead of in production. Histories recorded with encrypted
// payloads (all but plainHistories) replay with the strict codec a worker
// runs.
func TestReplaysSavedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(historiesDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no histories in %s: the test would prove nothing", historiesDir)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := os.Open(file)
			require.NoError(t, err)
			defer f.Close()
			history, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
			require.NoError(t, err)
			strict := !slices.Contains(plainHistories, filepath.Base(file))
			dc, fc := historiesCodec(t, strict)
			replayer, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{DataConverter: dc, FailureConverter: fc})
			require.NoError(t, err)
			// Every workflow the worker runs, under the names it registers
			// (its test checks each has a history here).
			for _, wf := range assentworker.Workflows(app.Workers()) {
				replayer.RegisterWorkflowWithOptions(wf.Func, workflow.RegisterOptions{Name: wf.Name})
			}
			// Bound payloads open only in their workflow: the run's id. A
			// Temporal Schedule's run has an id of its own (the action's id
			// and the time); its start's input is bound to the action's id.
			started := history.Events[0].GetWorkflowExecutionStartedEventAttributes()
			id := started.GetWorkflowId()
			if bound := payloadcodec.BoundWorkflow(started.GetInput().GetPayloads()[0]); bound != "" {
				require.True(t, id == bound || strings.HasPrefix(id, bound+"-"), "run %s started with an input bound to %s", id, bound)
			}
			require.NoError(t, replayer.ReplayWorkflowHistoryWithOptions(nil, history, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: id}}))
		})
	}
}

// recordStep is one Update a recorded scenario sends, in order. A step
// with after set first waits for the workflow to persist that action (a
// timer's: the reminder, the escalation); one with no update only waits.
type recordStep struct {
	update string
	arg    any
	after  string
}

// screened is the scenario whose organisation's model screen is on.
const screened = "approval_screened"

// screenedAtBaseline is the same at the approval's baseline version.
const screenedAtBaseline = "approval_screened_created_in_task"

// persisted is one approval transition the recording's worker wrote.
type persisted struct{ approvalID, action string }

// TestRecordHistories runs each workflow on an embedded Temporal server
// and saves each run's history for the replay test. It only runs on
// request and only writes histories that do not exist yet, because the
// saved files are meant to stay as they are; see
// testdata/histories/README.md.
func TestRecordHistories(t *testing.T) {
	if os.Getenv("ASSENT_RECORD_HISTORIES") == "" {
		t.Skip("set ASSENT_RECORD_HISTORIES=1 to record the histories in " + historiesDir)
	}
	// As serve, worker and dev dial: payloads bound, Updates checked.
	keys, err := secretkey.LoadOrCreate(filepath.Join(historiesDir, "test-only.key"))
	require.NoError(t, err)
	ts := temporaltest.NewServer(temporaltest.WithT(t),
		temporaltest.WithBaseClientOptions(payloadcodec.ClientOptions(client.Options{}, payloadcodec.New(keys))))
	c := ts.GetDefaultClient()
	// Bounds, so a stuck run fails the recording instead of hanging it:
	// two minutes for the set-up and for each scenario, more for one
	// that waits for its timers.
	bounded := func(t *testing.T, d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		t.Cleanup(cancel)
		return ctx
	}
	ctx := bounded(t, 2*time.Minute)
	// The workflow upserts AssentStatus, which the namespace must know. This
	// is what worker.RegisterSearchAttributes does, without pulling the
	// database packages into this test binary.
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: ts.GetDefaultNamespace(), SearchAttributes: workflows.SearchAttributes()})
	require.NoError(t, err)
	// The collection scenario waits for its reminder before its last reply;
	// the approval scenarios with timers wait for theirs (timerActions).
	reminded := make(chan struct{}, 1)
	timerActions := make(chan persisted, 8)
	// The emails of each report send, by send id.
	var emailedMu sync.Mutex
	emailed := map[string][]string{}
	sendRecipients := []string{"ann@example.com", "ben@example.com"}
	ts.NewWorker(workflows.TaskQueue, func(r worker.Registry) {
		for _, wf := range assentworker.Workflows(app.Workers()) {
			r.RegisterWorkflowWithOptions(wf.Func, workflow.RegisterOptions{Name: wf.Name})
		}
		// A delivery's receiver answers 503 to its first attempt (retried)
		// and 422 to every attempt of dlv_rejected (not retried).
		r.RegisterActivityWithOptions(func(ctx context.Context, id string, _ int) error {
			switch {
			case id == "dlv_rejected":
				return temporal.NewNonRetryableApplicationError("the receiver answered 422", workflows.ErrDeliveryRejected, nil)
			case activity.GetInfo(ctx).Attempt == 1:
				return errors.New("the receiver answered 503")
			}
			return nil
		}, activity.RegisterOptions{Name: workflows.ActivityDeliver})
		r.RegisterActivityWithOptions(func(context.Context, workflows.PublishHoldInput) error { return nil },
			activity.RegisterOptions{Name: workflows.ActivityStartHold})
		r.RegisterActivityWithOptions(func(context.Context, workflows.HoldOutcome) error { return nil },
			activity.RegisterOptions{Name: workflows.ActivityDecideHeld})
		r.RegisterActivityWithOptions(func(context.Context, workflows.ScheduleDueEvent) error { return nil },
			activity.RegisterOptions{Name: workflows.ActivityScheduleDue})
		r.RegisterActivityWithOptions(func(context.Context, workflows.ReportSendInput) error { return nil },
			activity.RegisterOptions{Name: workflows.ActivityStartSend})
		// A send's two recipients: the first attempt emails one and fails
		// on the other; the retry emails only the other, as the real
		// activity does (each email once).
		r.RegisterActivityWithOptions(func(ctx context.Context, in workflows.ReportSendInput) error {
			emailedMu.Lock()
			defer emailedMu.Unlock()
			for _, to := range sendRecipients {
				if slices.Contains(emailed[in.SendID], to) {
					continue
				}
				if to == sendRecipients[1] && activity.GetInfo(ctx).Attempt == 1 {
					return errors.New("smtp: 451 try again later")
				}
				emailed[in.SendID] = append(emailed[in.SendID], to)
			}
			return nil
		}, activity.RegisterOptions{Name: workflows.ActivityEmailSend})
		// Each kind's persist activity says it reached everyone a
		// transition asks by email, as the real one does when the mail
		// server answers.
		r.RegisterActivityWithOptions(func(_ context.Context, tr reviews.Transition) (workflows.Persisted, error) {
			return workflows.Persisted{Emailed: tr.AskByEmail}, nil
		}, activity.RegisterOptions{Name: reviews.ActivityPersist})
		r.RegisterActivityWithOptions(func(context.Context, reviews.EmailReviewersInput) error { return nil },
			activity.RegisterOptions{Name: reviews.ActivityEmailReviewers})
		r.RegisterActivityWithOptions(func(_ context.Context, tr collections.Transition) (workflows.Persisted, error) {
			if tr.Action == workflows.ActionReminded {
				select {
				case reminded <- struct{}{}:
				default:
				}
			}
			return workflows.Persisted{Emailed: tr.AskByEmail}, nil
		}, activity.RegisterOptions{Name: collections.ActivityPersist})
		r.RegisterActivityWithOptions(func(context.Context, collections.EmailRespondentsInput) error { return nil },
			activity.RegisterOptions{Name: collections.ActivityEmailRespondents})
		// The history records the activity's result, so a no-op is enough;
		// it only tells the scenarios when a timer acted.
		r.RegisterActivityWithOptions(func(_ context.Context, tr approvals.Transition) (workflows.Persisted, error) {
			if tr.Action == workflows.ActionReminded || tr.Action == workflows.ActionEscalated {
				timerActions <- persisted{tr.RequestID, tr.Action}
			}
			return workflows.Persisted{Emailed: tr.AskByEmail}, nil
		}, activity.RegisterOptions{Name: approvals.ActivityPersist})
		r.RegisterActivityWithOptions(func(context.Context, approvals.EmailApproversInput) error { return nil },
			activity.RegisterOptions{Name: approvals.ActivityEmailApprovers})
		// The model screen fails once (retried), then raises a concern.
		r.RegisterActivityWithOptions(func(ctx context.Context, _ approvals.ScreenInput) (approvals.ScreenResult, error) {
			if activity.GetInfo(ctx).Attempt == 1 {
				return approvals.ScreenResult{}, errors.New("the endpoint answered 503")
			}
			return approvals.ScreenResult{Concerns: []approvals.ScreenConcern{{Principle: "Privacy", Concern: "names a customer"}}}, nil
		}, activity.RegisterOptions{Name: approvals.ActivityScreen})
		r.RegisterActivityWithOptions(func(context.Context, approvals.EmailAnswerInput) error { return nil },
			activity.RegisterOptions{Name: approvals.ActivityEmailAnswer})
		// The escalation's person, Esme, is away: Eli stands in for her.
		r.RegisterActivityWithOptions(func(_ context.Context, in approvals.StandInsInput) (approvals.StandInsResult, error) {
			var out approvals.StandInsResult
			if slices.Contains(in.PersonIDs, "mem_esc") {
				out.StandIns = append(out.StandIns, workflows.AddDelegateRequest{DelegatorID: "mem_esc", DelegatorName: "Esme",
					DelegateID: "mem_eli", DelegateName: "Eli"})
			}
			return out, nil
		}, activity.RegisterOptions{Name: workflows.ActivityStandIns})
	})

	scenarios := []struct {
		name      string
		expiresIn time.Duration
		// escalateIn, when set, escalates to mem_esc that long after the
		// start, as a rule's escalation.after does.
		escalateIn time.Duration
		steps      []recordStep
		status     string
	}{
		{"approval_question_correction", 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateAsk, arg: approvals.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"}},
			{update: approvals.UpdateAnswer, arg: approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme Ltd"}},
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionApprove,
				Note: "capped", Corrections: workflowtest.Raw(`{"amount":80}`)}},
		}, states.Approved},
		{"approval_cancelled", 24 * time.Hour, 0, []recordStep{
			{update: workflows.UpdateCancel, arg: workflows.CancelRequest{ActorID: "mem_req", ActorName: "Requester"}},
		}, states.Cancelled},
		// Recorded after approvers and askers were emailed (emailChange).
		{"approval_emailed_question_answered", 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateAsk, arg: approvals.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"}},
			{update: approvals.UpdateAnswer, arg: approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme Ltd"}},
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionReject, Note: "no"}},
		}, states.Rejected},
		// Recorded after approvedInput was computed in the workflow from
		// the raw input (exact numbers; no version marker: no command
		// changed, which the older histories' replay proves).
		// Recorded after the model screen: screened before "created", its
		// concern then asking the approver for a reason (screened below).
		{"approval_screened", 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionApprove,
				Reason: "the customer agreed"}},
		}, states.Approved},
		// At the baseline, the model screen on: "created" written in the
		// task after the screen's, which raised a concern.
		{screenedAtBaseline, 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionApprove,
				Reason: "the customer agreed"}},
		}, states.Approved},
		{"approval_raw_input_corrected", 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionApprove,
				Corrections: workflowtest.Raw(`{"amount":80.50}`)}},
		}, states.Approved},
		// No updates: the expiry timer fires and settles the approval.
		{"approval_expired", 2 * time.Second, 0, nil, states.Expired},
		// Recorded after transitions were written by a regular activity
		// (persistChange): ask, answer, approve with a correction; and
		// an expiry.
		{"approval_recorded_corrected", 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateAsk, arg: approvals.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"}},
			{update: approvals.UpdateAnswer, arg: approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme Ltd"}},
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionApprove,
				Corrections: workflowtest.Raw(`{"amount":80.50}`)}},
		}, states.Approved},
		{"approval_recorded_expired", 2 * time.Second, 0, nil, states.Expired},
		// Recorded with every payload encrypted (the payload codec).
		{"approval_encrypted_corrected", 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateAsk, arg: approvals.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"}},
			{update: approvals.UpdateAnswer, arg: approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme Ltd"}},
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionApprove,
				Corrections: workflowtest.Raw(`{"amount":80.50}`)}},
		}, states.Approved},
		// Recorded with every payload bound to its workflow, activity and
		// message (finding 3 of issue 32), each Update naming its approval.
		{"approval_bound_corrected", 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateAsk, arg: approvals.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"}},
			{update: approvals.UpdateAnswer, arg: approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme Ltd"}},
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionApprove,
				Corrections: workflowtest.Raw(`{"amount":80.50}`)}},
		}, states.Approved},
		// Recorded after removeApprover: both approvers removed, so the
		// defaults join and are emailed; one of them rejects.
		{"approval_approver_removed", 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateRemoveApprover, arg: workflows.RemoveAskedRequest{PersonID: "mem_a", PersonName: "Ann",
				Defaults: []string{"mem_owner"}, ActorID: "key_admin", ActorName: "admin key"}},
			{update: approvals.UpdateRemoveApprover, arg: workflows.RemoveAskedRequest{PersonID: "mem_b", PersonName: "Ben",
				Defaults: []string{"mem_owner"}, ActorID: "key_admin", ActorName: "admin key"}},
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_owner", ActorName: "Olivia", Decision: approvals.DecisionReject}},
		}, states.Rejected},
		// Recorded after approval-timers (timersChange): an escalation due
		// in 3 seconds and no reminder (the expiry is under two hours
		// away); the escalation fires, mem_esc joins, is emailed and
		// approves.
		{"approval_escalated_approved", 10 * time.Minute, 3 * time.Second, []recordStep{
			{after: workflows.ActionEscalated},
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_esc", ActorName: "Esme", Decision: approvals.DecisionApprove}},
		}, states.Approved},
		// After approval-timers, both timers fire: the reminder halfway to
		// an expiry a little over two hours away (an approval's reminder
		// comes an hour after creation at the earliest, so this takes an
		// hour of real time), then the escalation half a minute later;
		// the escalation's person rejects.
		{"approval_reminded_escalated_rejected", 2*time.Hour + 20*time.Second, time.Hour + 40*time.Second, []recordStep{
			{after: workflows.ActionReminded},
			{after: workflows.ActionEscalated},
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_esc", ActorName: "Esme", Decision: approvals.DecisionReject, Note: "too late"}},
		}, states.Rejected},
		// After addDelegate: Ann's delegation to Dee starts while the
		// approval waits on her; Dee joins, is emailed, and approves on
		// her behalf.
		{"approval_delegated_approved", 24 * time.Hour, 0, []recordStep{
			{update: workflows.UpdateAddDelegate, arg: workflows.AddDelegateRequest{DelegatorID: "mem_a", DelegatorName: "Ann",
				DelegateID: "mem_d", DelegateName: "Dee"}},
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_d", ActorName: "Dee", Decision: approvals.DecisionApprove}},
		}, states.Approved},
		// After escalation-stand-ins: the escalation fires while its
		// person, Esme, is away; Eli, who stands in for her (read then),
		// joins instead, is emailed and approves on her behalf.
		{"approval_escalated_delegated", 10 * time.Minute, 3 * time.Second, []recordStep{
			{after: workflows.ActionEscalated},
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_eli", ActorName: "Eli", Decision: approvals.DecisionApprove}},
		}, states.Approved},
		// After approval-timers, settled before either timer: the
		// reminder and the escalation never fire.
		{"approval_timers_cancelled", 24 * time.Hour, 12 * time.Hour, []recordStep{
			{update: workflows.UpdateCancel, arg: workflows.CancelRequest{ActorID: "mem_req", ActorName: "Requester"}},
		}, states.Cancelled},
		// After email-with-created: the "created" write emails the
		// approvers and says it reached them all, so no email activity
		// follows; an approval.
		{"approval_emailed_with_created", 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionApprove}},
		}, states.Approved},
		// After email-with-created's second version: "created" is
		// written, and the approvers emailed, inside the first workflow
		// task (a local activity); approved.
		{"approval_created_in_task", 24 * time.Hour, 0, []recordStep{
			{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionApprove}},
		}, states.Approved},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			file := filepath.Join(historiesDir, sc.name+".json")
			// An existing history stands for workflows already running on
			// older code: never overwrite it by accident.
			if _, err := os.Stat(file); err == nil {
				t.Skipf("%s exists; delete it first to record it again", file)
			}
			bound := 2 * time.Minute
			if slices.ContainsFunc(sc.steps, func(s recordStep) bool { return s.after != "" }) {
				bound += sc.escalateIn // the last timer waited for
			}
			ctx := bounded(t, bound)
			in := recordedApproval()
			in.ApprovalID, in.ExpiresAt = "apr_"+sc.name, time.Now().Add(sc.expiresIn)
			if sc.escalateIn > 0 {
				in.Escalation = &approvals.ScheduledEscalation{At: time.Now().Add(sc.escalateIn), ApproverIDs: []string{"mem_esc"}}
			}
			in.Screen = sc.name == screened || sc.name == screenedAtBaseline
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
				ID: approvals.WorkflowID(in.ApprovalID), TaskQueue: workflows.TaskQueue}, approvals.WorkflowType, in)
			require.NoError(t, err)
			for i, step := range sc.steps {
				for step.after != "" {
					select {
					case p := <-timerActions:
						if p.approvalID == in.ApprovalID && p.action == step.after {
							step.after = ""
						}
					case <-ctx.Done():
						t.Fatalf("the workflow never persisted %q", step.after)
					}
				}
				if step.update == "" {
					continue
				}
				h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
					WorkflowID: run.GetID(), RunID: run.GetRunID(), UpdateID: fmt.Sprintf("%s-%d", step.update, i+1),
					UpdateName: step.update, Args: []any{workflowtest.Addressed(in.ApprovalID, step.arg)}, WaitForStage: client.WorkflowUpdateStageCompleted})
				require.NoError(t, err)
				require.NoError(t, h.Get(ctx, nil), "update %s", step.update)
			}
			var final approvals.State
			require.NoError(t, run.Get(ctx, &final))
			require.Equal(t, sc.status, final.Status)
			saveHistory(ctx, t, c, run, file)
		})
	}

	// A collection: created with a due time 4 seconds out, so its one
	// reminder fires after 2; one of the two replies it needs comes
	// before the reminder, the completing one after.
	t.Run("collection_reminded_complete", func(t *testing.T) {
		file := filepath.Join(historiesDir, "collection_reminded_complete.json")
		if _, err := os.Stat(file); err == nil {
			t.Skipf("%s exists; delete it first to record it again", file)
		}
		ctx := bounded(t, 2*time.Minute)
		in := recordedCollection(t)
		due := time.Now().Add(4 * time.Second)
		in.CollectionID, in.DueAt, in.ExpiresAt = "col_reminded_complete", &due, time.Now().Add(time.Hour)
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: collections.WorkflowID(in.CollectionID), TaskQueue: workflows.TaskQueue}, collections.WorkflowType, in)
		require.NoError(t, err)
		submit := func(id string, r collections.SubmitReplyRequest) {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
				UpdateID: id, UpdateName: collections.UpdateSubmitReply, Args: []any{workflowtest.Addressed(in.CollectionID, r)}, WaitForStage: client.WorkflowUpdateStageCompleted})
			require.NoError(t, err)
			require.NoError(t, h.Get(ctx, nil), "reply %s", id)
		}
		submit("reply-a", recordedReply("mem_a", `{"budget":12345678901234567890,"vendor":"Acme","notes":"before the reminder"}`))
		select {
		case <-reminded:
		case <-ctx.Done():
			t.Fatal("the reminder never fired")
		}
		submit("reply-b", recordedReply("mem_b", `{"budget":3,"vendor":"Globex"}`))
		var final collections.State
		require.NoError(t, run.Get(ctx, &final))
		require.Equal(t, states.Complete, final.Status)
		require.NotNil(t, final.RemindedAt)
		saveHistory(ctx, t, c, run, file)
	})

	// After removeRespondent: all three of three replies needed; two
	// reply, then the third is removed, which lowers what completes it to
	// two and completes it.
	t.Run("collection_respondent_removed", func(t *testing.T) {
		file := filepath.Join(historiesDir, "collection_respondent_removed.json")
		if _, err := os.Stat(file); err == nil {
			t.Skipf("%s exists; delete it first to record it again", file)
		}
		ctx := bounded(t, 2*time.Minute)
		in := recordedCollection(t)
		in.CollectionID, in.RequiredResponses, in.ExpiresAt = "col_respondent_removed", 3, time.Now().Add(time.Hour)
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: collections.WorkflowID(in.CollectionID), TaskQueue: workflows.TaskQueue}, collections.WorkflowType, in)
		require.NoError(t, err)
		send := func(id, name string, arg any) {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
				UpdateID: id, UpdateName: name, Args: []any{workflowtest.Addressed(in.CollectionID, arg)}, WaitForStage: client.WorkflowUpdateStageCompleted})
			require.NoError(t, err)
			require.NoError(t, h.Get(ctx, nil), "update %s", id)
		}
		send("reply-a", collections.UpdateSubmitReply, recordedReply("mem_a", `{"budget":1,"vendor":"Acme"}`))
		send("reply-b", collections.UpdateSubmitReply, recordedReply("mem_b", `{"budget":2,"vendor":"Globex"}`))
		send("remove-c", collections.UpdateRemoveRespondent, workflows.RemoveAskedRequest{PersonID: "mem_c",
			PersonName: "Guest C", ActorID: "key_admin", ActorName: "admin key"})
		var final collections.State
		require.NoError(t, run.Get(ctx, &final))
		require.Equal(t, states.Complete, final.Status)
		require.Equal(t, 2, final.RequiredResponses)
		saveHistory(ctx, t, c, run, file)
	})

	// Reviews: one approved by two distinct reviewers after a verdict
	// refused as a repeat; one settled by a single changes_requested; one
	// that expires.
	for _, sc := range []struct {
		name, status string
		expiresIn    time.Duration
		verdicts     []reviews.VerdictRequest
	}{
		{"review_approved", states.Approved, time.Hour, []reviews.VerdictRequest{
			{ReviewerID: "mem_a", ReviewerName: "Ann", Verdict: reviews.VerdictApproved, Note: "reads well"},
			{ReviewerID: "mem_b", ReviewerName: "Ben", Verdict: reviews.VerdictApproved}}},
		{"review_changes_requested", states.ChangesRequested, time.Hour, []reviews.VerdictRequest{
			{ReviewerID: "mem_a", ReviewerName: "Ann", Verdict: reviews.VerdictApproved},
			{ReviewerID: "mem_c", ReviewerName: "Cy", Verdict: reviews.VerdictChangesRequested, Note: "EMEA is off"}}},
		{"review_expired", states.Expired, 2 * time.Second, nil},
		// After email-with-created's version 2: "created" written in the
		// first workflow task; two approvals settle it.
		{"review_created_in_task", states.Approved, time.Hour, []reviews.VerdictRequest{
			{ReviewerID: "mem_a", ReviewerName: "Ann", Verdict: reviews.VerdictApproved},
			{ReviewerID: "mem_b", ReviewerName: "Ben", Verdict: reviews.VerdictApproved}}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			file := filepath.Join(historiesDir, sc.name+".json")
			if _, err := os.Stat(file); err == nil {
				t.Skipf("%s exists; delete it first to record it again", file)
			}
			ctx := bounded(t, 2*time.Minute)
			in := reviews.WorkflowInput{
				RequestInput:      workflows.RequestInput{OrganizationID: "org_1", Requester: "key_1", ExpiresAt: time.Now().Add(sc.expiresIn)},
				ReviewID:          "rev_" + sc.name,
				ReviewerIDs:       []string{"mem_a", "mem_b", "mem_c"},
				RequiredApprovals: 2,
			}
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
				ID: reviews.WorkflowID(in.ReviewID), TaskQueue: workflows.TaskQueue}, reviews.WorkflowType, in)
			require.NoError(t, err)
			for i, v := range sc.verdicts {
				h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
					UpdateID: fmt.Sprintf("verdict-%d", i+1), UpdateName: reviews.UpdateVerdict, Args: []any{workflowtest.Addressed(in.ReviewID, v)},
					WaitForStage: client.WorkflowUpdateStageCompleted})
				require.NoError(t, err)
				require.NoError(t, h.Get(ctx, nil), "verdict %d", i+1)
				if i == 0 {
					// A repeat from the same reviewer is refused by the
					// validator and leaves no trace in the history.
					again, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
						UpdateID: "verdict-again", UpdateName: reviews.UpdateVerdict, Args: []any{workflowtest.Addressed(in.ReviewID, v)},
						WaitForStage: client.WorkflowUpdateStageCompleted})
					require.NoError(t, err)
					require.Error(t, again.Get(ctx, nil))
				}
			}
			var final reviews.State
			require.NoError(t, run.Get(ctx, &final))
			require.Equal(t, sc.status, final.Status)
			saveHistory(ctx, t, c, run, file)
		})
	}

	// After removeReviewer: three reviewers, two approvals needed. Ann
	// approves; removing her is refused by the validator (her verdict
	// stands; no trace); removing Ben leaves Cy able to give the other
	// approval, so nobody joins; removing Cy leaves nobody who can, so the
	// default reviewer joins (emailed) and approves.
	t.Run("review_reviewer_removed", func(t *testing.T) {
		file := filepath.Join(historiesDir, "review_reviewer_removed.json")
		if _, err := os.Stat(file); err == nil {
			t.Skipf("%s exists; delete it first to record it again", file)
		}
		ctx := bounded(t, 2*time.Minute)
		in := reviews.WorkflowInput{
			RequestInput:      workflows.RequestInput{OrganizationID: "org_1", Requester: "key_1", ExpiresAt: time.Now().Add(time.Hour)},
			ReviewID:          "rev_reviewer_removed",
			ReviewerIDs:       []string{"mem_a", "mem_b", "mem_c"},
			RequiredApprovals: 2,
		}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: reviews.WorkflowID(in.ReviewID), TaskQueue: workflows.TaskQueue}, reviews.WorkflowType, in)
		require.NoError(t, err)
		send := func(id, name string, arg any) error {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
				UpdateID: id, UpdateName: name, Args: []any{workflowtest.Addressed(in.ReviewID, arg)}, WaitForStage: client.WorkflowUpdateStageCompleted})
			require.NoError(t, err)
			return h.Get(ctx, nil)
		}
		remove := func(personID, name string) workflows.RemoveAskedRequest {
			return workflows.RemoveAskedRequest{PersonID: personID, PersonName: name, Defaults: []string{"mem_owner"},
				ActorID: "key_admin", ActorName: "admin key"}
		}
		require.NoError(t, send("verdict-a", reviews.UpdateVerdict, reviews.VerdictRequest{ReviewerID: "mem_a", ReviewerName: "Ann",
			Verdict: reviews.VerdictApproved}))
		require.Error(t, send("remove-a", reviews.UpdateRemoveReviewer, remove("mem_a", "Ann")))
		require.NoError(t, send("remove-b", reviews.UpdateRemoveReviewer, remove("mem_b", "Ben")))
		require.NoError(t, send("remove-c", reviews.UpdateRemoveReviewer, remove("mem_c", "Cy")))
		require.NoError(t, send("verdict-owner", reviews.UpdateVerdict, reviews.VerdictRequest{ReviewerID: "mem_owner",
			ReviewerName: "Olivia", Verdict: reviews.VerdictApproved}))
		var final reviews.State
		require.NoError(t, run.Get(ctx, &final))
		require.Equal(t, states.Approved, final.Status)
		require.Equal(t, []string{"mem_a", "mem_owner"}, final.ReviewerIDs)
		saveHistory(ctx, t, c, run, file)
	})

	// After addDelegate, for the other kinds: Ann's delegate joins a
	// collection and a review still waiting on her, and acts on her
	// behalf.
	t.Run("collection_delegated", func(t *testing.T) {
		file := filepath.Join(historiesDir, "collection_delegated.json")
		if _, err := os.Stat(file); err == nil {
			t.Skipf("%s exists; delete it first to record it again", file)
		}
		ctx := bounded(t, 2*time.Minute)
		in := recordedCollection(t)
		in.CollectionID, in.RequiredResponses, in.ExpiresAt = "col_delegated", 1, time.Now().Add(time.Hour)
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: collections.WorkflowID(in.CollectionID), TaskQueue: workflows.TaskQueue}, collections.WorkflowType, in)
		require.NoError(t, err)
		for _, step := range []struct {
			id, name string
			arg      any
		}{
			{"delegate", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_a", DelegatorName: "Ann", DelegateID: "mem_d", DelegateName: "Dee"}},
			{"reply-d", collections.UpdateSubmitReply, recordedReply("mem_d", `{"budget":1,"vendor":"Acme"}`)},
		} {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
				UpdateID: step.id, UpdateName: step.name, Args: []any{workflowtest.Addressed(in.CollectionID, step.arg)}, WaitForStage: client.WorkflowUpdateStageCompleted})
			require.NoError(t, err)
			require.NoError(t, h.Get(ctx, nil), "update %s", step.id)
		}
		var final collections.State
		require.NoError(t, run.Get(ctx, &final))
		require.Equal(t, states.Complete, final.Status)
		require.NotNil(t, final.Replies[0].OnBehalfOf)
		saveHistory(ctx, t, c, run, file)
	})
	t.Run("review_delegated", func(t *testing.T) {
		file := filepath.Join(historiesDir, "review_delegated.json")
		if _, err := os.Stat(file); err == nil {
			t.Skipf("%s exists; delete it first to record it again", file)
		}
		ctx := bounded(t, 2*time.Minute)
		in := reviews.WorkflowInput{
			RequestInput:      workflows.RequestInput{OrganizationID: "org_1", Requester: "key_1", ExpiresAt: time.Now().Add(time.Hour)},
			ReviewID:          "rev_delegated",
			ReviewerIDs:       []string{"mem_a", "mem_b"},
			RequiredApprovals: 1,
		}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: reviews.WorkflowID(in.ReviewID), TaskQueue: workflows.TaskQueue}, reviews.WorkflowType, in)
		require.NoError(t, err)
		for _, step := range []struct {
			id, name string
			arg      any
		}{
			{"delegate", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_a", DelegatorName: "Ann", DelegateID: "mem_d", DelegateName: "Dee"}},
			{"verdict-d", reviews.UpdateVerdict, reviews.VerdictRequest{ReviewerID: "mem_d", ReviewerName: "Dee", Verdict: reviews.VerdictApproved}},
		} {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
				UpdateID: step.id, UpdateName: step.name, Args: []any{workflowtest.Addressed(in.ReviewID, step.arg)}, WaitForStage: client.WorkflowUpdateStageCompleted})
			require.NoError(t, err)
			require.NoError(t, h.Get(ctx, nil), "update %s", step.id)
		}
		var final reviews.State
		require.NoError(t, run.Get(ctx, &final))
		require.Equal(t, states.Approved, final.Status)
		require.NotNil(t, final.Verdicts[0].OnBehalfOf)
		saveHistory(ctx, t, c, run, file)
	})

	recordOtherWorkflows(t, c, bounded, func(sendID string) []string {
		emailedMu.Lock()
		defer emailedMu.Unlock()
		return slices.Clone(emailed[sendID])
	}, sendRecipients)
}

// recordOtherWorkflows records the workflows that are not requests:
// deliveries, publish holds, a schedule's run and a report send.
func recordOtherWorkflows(t *testing.T, c client.Client, bounded func(*testing.T, time.Duration) context.Context,
	emailed func(sendID string) []string, recipients []string) {
	// record skips a history that exists, else runs its scenario with a
	// bound of d and saves the run the scenario returns.
	record := func(name string, d time.Duration, scenario func(ctx context.Context, t *testing.T) client.WorkflowRun) {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(historiesDir, name+".json")
			if _, err := os.Stat(file); err == nil {
				t.Skipf("%s exists; delete it first to record it again", file)
			}
			ctx := bounded(t, d)
			saveHistory(ctx, t, c, scenario(ctx, t), file)
		})
	}

	// A delivery whose first attempt fails (503) and whose retry, one
	// retry unit later, succeeds; and one the receiver rejects (422), which
	// is not retried and fails the workflow.
	record("delivery_retried_delivered", 2*time.Minute, func(ctx context.Context, t *testing.T) client.WorkflowRun {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.DeliveryWorkflowID("dlv_retried", 0), TaskQueue: workflows.TaskQueue},
			workflows.Delivery, workflows.DeliveryInput{DeliveryID: "dlv_retried", RetryUnit: time.Second, FirstAttempt: 1})
		require.NoError(t, err)
		require.NoError(t, run.Get(ctx, nil))
		return run
	})
	record("delivery_rejected", 2*time.Minute, func(ctx context.Context, t *testing.T) client.WorkflowRun {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.DeliveryWorkflowID("dlv_rejected", 1), TaskQueue: workflows.TaskQueue},
			workflows.Delivery, workflows.DeliveryInput{DeliveryID: "dlv_rejected", RetryUnit: time.Second, FirstAttempt: 3})
		require.NoError(t, err)
		var app *temporal.ApplicationError
		require.ErrorAs(t, run.Get(ctx, nil), &app)
		require.Equal(t, workflows.ErrDeliveryRejected, app.Type())
		return run
	})

	// A held version released by an administrator after a decision that
	// is neither refused by the validator (no trace; a second decision
	// would find the workflow completed); and one nobody decides, held 7
	// days less 3 seconds before the workflow started (as when the
	// reconciler starts it late), so its timeout declines it.
	record("hold_released", 2*time.Minute, func(ctx context.Context, t *testing.T) client.WorkflowRun {
		in := workflows.PublishHoldInput{OrganizationID: "org_1", VersionID: "ver_released", HeldAt: time.Now()}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.HoldWorkflowID(in.VersionID), TaskQueue: workflows.TaskQueue},
			workflows.PublishHold, in)
		require.NoError(t, err)
		decide := func(id string, d workflows.HoldDecision) error {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(), UpdateID: id,
				UpdateName: workflows.UpdateDecideHold, Args: []any{workflowtest.Addressed(in.VersionID, d)}, WaitForStage: client.WorkflowUpdateStageCompleted})
			require.NoError(t, err)
			return h.Get(ctx, nil)
		}
		require.Error(t, decide("publish", workflows.HoldDecision{Decision: "publish", ActorID: "mem_b", ActorName: "Bo"}))
		require.NoError(t, decide("release", workflows.HoldDecision{Decision: workflows.HoldRelease, ActorID: "mem_a", ActorName: "Ada"}))
		var out workflows.HoldOutcome
		require.NoError(t, run.Get(ctx, &out))
		require.Equal(t, workflows.HoldRelease, out.Decision)
		require.False(t, out.Timeout)
		return run
	})
	record("hold_timed_out", 2*time.Minute, func(ctx context.Context, t *testing.T) client.WorkflowRun {
		in := workflows.PublishHoldInput{OrganizationID: "org_1", VersionID: "ver_timed_out", HeldAt: time.Now().Add(3*time.Second - workflows.HoldTimeout)}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.HoldWorkflowID(in.VersionID), TaskQueue: workflows.TaskQueue},
			workflows.PublishHold, in)
		require.NoError(t, err)
		var out workflows.HoldOutcome
		require.NoError(t, run.Get(ctx, &out))
		require.Equal(t, workflows.HoldDecline, out.Decision)
		require.True(t, out.Timeout)
		return run
	})

	// One run of a report schedule, started as in production by its
	// Temporal Schedule (triggered now, so the spec never has to come
	// due): its input is bound to the action's id, the run's id adds the
	// time.
	record("schedule_due", 2*time.Minute, func(ctx context.Context, t *testing.T) client.WorkflowRun {
		in := workflows.ScheduleDueInput{OrganizationID: "org_1", ScheduleID: "sch_due"}
		h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
			ID: workflows.ReportScheduleID(in.ScheduleID), Paused: true,
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 24 * time.Hour}}},
			Action: &client.ScheduleWorkflowAction{ID: workflows.ScheduleDueWorkflowID(in.ScheduleID), Workflow: workflows.WorkflowScheduleDue,
				TaskQueue: workflows.TaskQueue, Args: []any{in}},
		})
		require.NoError(t, err)
		t.Cleanup(func() { _ = h.Delete(context.Background()) })
		require.NoError(t, h.Trigger(ctx, client.ScheduleTriggerOptions{}))
		var started *client.ScheduleWorkflowExecution
		for started == nil {
			d, err := h.Describe(ctx)
			require.NoError(t, err)
			if len(d.Info.RecentActions) > 0 {
				started = d.Info.RecentActions[0].StartWorkflowResult
				break
			}
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				t.Fatal("the schedule never started its run")
			}
		}
		run := c.GetWorkflow(ctx, started.WorkflowID, started.FirstExecutionRunID)
		require.NoError(t, run.Get(ctx, nil))
		return run
	})

	// A report send to two recipients: the first attempt emails one and
	// fails on the other, the retry (a minute later, the email schedule)
	// emails only the other.
	record("report_send_two_recipients", 3*time.Minute, func(ctx context.Context, t *testing.T) client.WorkflowRun {
		in := workflows.ReportSendInput{OrganizationID: "org_1", SendID: "snd_two_recipients"}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.SendWorkflowID(in.SendID), TaskQueue: workflows.TaskQueue},
			workflows.ReportSend, in)
		require.NoError(t, err)
		require.NoError(t, run.Get(ctx, nil))
		require.Equal(t, recipients, emailed(in.SendID))
		return run
	})
}

// saveHistory writes the full history of run to file.
func saveHistory(ctx context.Context, t *testing.T, c client.Client, run client.WorkflowRun, file string) {
	history := &historypb.History{}
	iter := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		event, err := iter.Next()
		require.NoError(t, err)
		history.Events = append(history.Events, event)
	}
	// The same encoding as `temporal workflow show --output json`, which
	// client.HistoryFromJSON reads.
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(history)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(historiesDir, 0o755))
	require.NoError(t, os.WriteFile(file, append(b, '\n'), 0o644))
}

// recordedApproval is the input of the recorded approvals: two approvers,
// one approval needed, three editable fields of an input with a number
// beyond float64. It and the collections' below are copies of the kinds'
// unit-test fixtures on purpose: the saved histories hold these inputs, so
// a fixture may change without a history recorded again differing.
func recordedApproval() approvals.WorkflowInput {
	return approvals.WorkflowInput{
		RequestInput:      workflows.RequestInput{OrganizationID: "org_1", ExpiresAt: workflowtest.Start.Add(24 * time.Hour), Requester: "mem_req"},
		ApprovalID:        "apr_1",
		Risk:              "medium",
		RequiredApprovals: 1,
		ApproverIDs:       []string{"mem_a", "mem_b"},
		RequesterMemberID: "mem_req",
		Input:             json.RawMessage(`{"amount":100,"currency":"EUR","urgent":false,"memo":"x","big":12345678901234567890}`),
		EditableFields:    []string{"amount", "urgent", "memo"},
	}
}

// recordedCollection is the input of the recorded collections: three
// respondents, two replies required, three questions.
func recordedCollection(t *testing.T) collections.WorkflowInput {
	qs, err := questions.Define([]questions.Input{
		{ID: "budget", Prompt: "Budget", Kind: questions.Number},
		{ID: "vendor", Prompt: "Vendor", Kind: questions.Choice, Options: []string{"Acme", "Globex"}},
		{ID: "notes", Prompt: "Notes", Kind: questions.LongText, Required: new(bool)},
	})
	require.NoError(t, err)
	return collections.WorkflowInput{
		RequestInput:      workflows.RequestInput{OrganizationID: "org_1", Requester: "key_1", ExpiresAt: workflowtest.Start.Add(7 * 24 * time.Hour)},
		CollectionID:      "col_1",
		Questions:         qs,
		RespondentIDs:     []string{"mem_a", "mem_b", "mem_c"},
		RequiredResponses: 2,
	}
}

// recordedReply is respondent id's reply with answers, a JSON object.
func recordedReply(id string, answers string) collections.SubmitReplyRequest {
	return collections.SubmitReplyRequest{RespondentID: id, RespondentName: "Person " + id, Answers: workflowtest.Raw(answers)}
}

// TestAnOlderBuildRefusesARunAtTheBaseline: an approval begun at its
// baseline (version 2 of persist-after-record) fails an older build's
// workflow task at once, whose first question is that change with 1 at
// most, rather than letting it take the run down paths it lacks.
func TestAnOlderBuildRefusesARunAtTheBaseline(t *testing.T) {
	f, err := os.Open(filepath.Join(historiesDir, "approval_created_in_task.json"))
	require.NoError(t, err)
	defer f.Close()
	history, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	dc, fc := historiesCodec(t, true)
	replayer, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{DataConverter: dc, FailureConverter: fc})
	require.NoError(t, err)
	older := func(ctx workflow.Context, _ approvals.WorkflowInput) (approvals.State, error) {
		workflow.GetVersion(ctx, "persist-after-record", workflow.DefaultVersion, 1)
		return approvals.State{}, workflow.Await(ctx, func() bool { return false })
	}
	replayer.RegisterWorkflowWithOptions(older, workflow.RegisterOptions{Name: approvals.WorkflowType})
	id := history.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowId()
	err = replayer.ReplayWorkflowHistoryWithOptions(nil, history, worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id}})
	require.ErrorContains(t, err, "too old to support version 2")
}
