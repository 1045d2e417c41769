// Package workflowtest runs one request kind's workflow in Temporal's test
// environment, for the workflow tests of the core and of each kind.
package workflowtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/workflows"
)

// Start is when every harness's workflow starts.
var Start = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// Harness runs one request kind's workflow (its state S), recording what
// its persistence activity writes and what each Update answered. Each
// kind's tests embed it and record their own emails.
type Harness[S workflows.RequestState] struct {
	T   *testing.T
	Env *testsuite.TestWorkflowEnvironment
	// Mu guards what activities record: the transitions, and what each
	// kind's tests record (its emails).
	Mu          sync.Mutex
	Transitions []workflows.Transition[S]
	// Results are what each Update answered, by key.
	Results map[string]Result[S]
	// EmailedOnPersist has the persistence activity say it reached
	// everyone a transition asks by email (workflows.Persisted), as the
	// real one does when the mail server answers; unset, the email
	// activity follows as after a failure.
	EmailedOnPersist bool
	workflow         any
	// id is the request RunAs runs, which Updates are addressed to.
	id string
}

// Result is what one Update answered: refused by its validator, or run
// with its error or the state it returned.
type Result[S any] struct {
	State   S
	Err     error
	Refused bool
}

// New registers workflow and a persistence activity named persist that
// records each transition.
func New[S workflows.RequestState](t *testing.T, workflow any, persist string) *Harness[S] {
	var suite testsuite.WorkflowTestSuite
	h := &Harness[S]{T: t, Env: suite.NewTestWorkflowEnvironment(), Results: map[string]Result[S]{}, workflow: workflow}
	h.Env.SetStartTime(Start)
	h.Env.RegisterWorkflow(workflow)
	h.Env.RegisterActivityWithOptions(func(_ context.Context, tr workflows.Transition[S]) (workflows.Persisted, error) {
		h.Mu.Lock()
		defer h.Mu.Unlock()
		h.Transitions = append(h.Transitions, tr)
		return workflows.Persisted{Emailed: tr.AskByEmail && h.EmailedOnPersist}, nil
	}, activity.RegisterOptions{Name: persist})
	return h
}

// Update sends an update at offset after the start and records its result
// under key.
func (h *Harness[S]) Update(offset time.Duration, key, name string, args ...any) {
	h.Env.RegisterDelayedCallback(func() {
		h.Env.UpdateWorkflow(name, key, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { h.Results[key] = Result[S]{Err: err, Refused: true} },
			OnComplete: func(v any, err error) {
				r := Result[S]{Err: err}
				if s, ok := v.(S); ok {
					r.State = s
				}
				h.Results[key] = r
			},
		}, AddressedAll(h.id, args)...)
	}, offset)
}

// RunAs runs the workflow with in, for request id, to its end, and returns
// its final state.
func (h *Harness[S]) RunAs(id string, in any) S {
	h.id = id
	h.Env.ExecuteWorkflow(h.workflow, in)
	require.True(h.T, h.Env.IsWorkflowCompleted())
	require.NoError(h.T, h.Env.GetWorkflowError())
	var s S
	require.NoError(h.T, h.Env.GetWorkflowResult(&s))
	return s
}

// RefusedWith requires the Update under key to have been refused with
// code, and returns the refusal.
func (h *Harness[S]) RefusedWith(key, code string) *temporal.ApplicationError {
	h.T.Helper()
	r, ok := h.Results[key]
	require.True(h.T, ok, "update %s never ran", key)
	require.Error(h.T, r.Err, "update %s should be refused", key)
	assert.Equal(h.T, code, ErrType(r.Err), "update %s: %v", key, r.Err)
	var app *temporal.ApplicationError
	errors.As(r.Err, &app)
	return app
}

// Sent is an Update a test sends: its name and argument.
type Sent struct {
	Name string
	Arg  any
}

// RefusesOtherRequests sends every Update the kind takes, addressed to
// another request (Other) and then to none (None), an hour apart, and
// requires each to be refused by its validator with Forbidden, so none
// reaches the history: own(target) are the kind's own Updates by key,
// removal is its removal's Update name, and the core's cancel, removal
// and addDelegate join them.
func (h *Harness[S]) RefusesOtherRequests(removal string, own func(target workflows.Target) map[string]Sent) {
	for i, target := range []workflows.Target{Other, None} {
		at := time.Duration(i+1) * time.Hour
		// Update ids are unique in a workflow: each round's are its own.
		key := func(name string) string { return fmt.Sprintf("%s-%d", name, i) }
		sent := own(target)
		sent["cancel"] = Sent{workflows.UpdateCancel, workflows.CancelRequest{Target: target, ActorID: "mem_x", Administrator: true}}
		sent["remove"] = Sent{removal, workflows.RemoveAskedRequest{Target: target, PersonID: "mem_b"}}
		sent["delegate"] = Sent{workflows.UpdateAddDelegate, workflows.AddDelegateRequest{Target: target, DelegatorID: "mem_a", DelegateID: "mem_d"}}
		names := slices.Sorted(maps.Keys(sent))
		for j, name := range names {
			h.Update(at+time.Duration(j)*time.Minute, key(name), sent[name].Name, sent[name].Arg)
		}
		h.Env.RegisterDelayedCallback(func() {
			for _, name := range names {
				h.RefusedWith(key(name), apperr.Forbidden)
				assert.True(h.T, h.Results[key(name)].Refused, "%s was refused by the validator, before it reached the history", key(name))
			}
		}, at+time.Duration(len(names))*time.Minute)
	}
}

// Actions are the transitions' actions, in order.
func (h *Harness[S]) Actions() []string {
	var out []string
	for _, t := range h.Transitions {
		out = append(out, t.Action)
	}
	return out
}

// ErrType is the application error type (an apperr code) err carries.
func ErrType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type()
	}
	return ""
}

// AnnAway is Ann's delegation to Dee starting while a request waits on
// her.
var AnnAway = workflows.AddDelegateRequest{DelegatorID: "mem_a", DelegatorName: "Ann", DelegateID: "mem_d", DelegateName: "Dee"}

// OlderClient, as an argument's RequestID, has Addressed send it naming
// no request, as a client from before arguments named theirs did.
const OlderClient = "(an older client's: none)"

// Other and None are the two ways an argument can be for another request
// than the one it reaches: copied from another's Update, or from a client
// older than request ids in arguments (whose Updates in flight are already
// in histories, and replay without validators).
var (
	Other = workflows.Target{RequestID: "req_other"}
	None  = workflows.Target{RequestID: OlderClient}
)

// Addressed returns arg, an Update's argument, addressed to request id as
// requests.Records.Update sends it, unless it already names a request.
func Addressed(id string, arg any) any {
	v := reflect.New(reflect.TypeOf(arg))
	v.Elem().Set(reflect.ValueOf(arg))
	switch field := v.Elem().FieldByName("RequestID"); field.String() {
	case "":
		v.Interface().(workflows.Argument).For(id)
	case OlderClient:
		field.SetString("")
	}
	return v.Elem().Interface()
}

// AddressedAll addresses each of args to request id.
func AddressedAll(id string, args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = Addressed(id, a)
	}
	return out
}

// Raw decodes object, a JSON object written in a test, into its members
// (corrections, answers).
func Raw(object string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(object), &out); err != nil {
		panic(err)
	}
	return out
}
