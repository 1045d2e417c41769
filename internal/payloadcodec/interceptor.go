package payloadcodec

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
)

// useKey holds, in a client call's context, the message its payloads are
// for.
type useKey struct{}

type use struct {
	name      string
	scheduled bool
}

// Use names the message an Update's argument is bound to.
func Use(update string) string { return "update:" + update }

// Interceptor binds what a client sends to its message and, on the
// worker's side, refuses a new Update whose argument was not bound to that
// Update. Set it on the client (ClientOptions does); workers made from the
// client take it up too.
func Interceptor() interceptor.Interceptor { return &bindMessages{} }

// ClientOptions sets o to encrypt and bind every payload with c.
func ClientOptions(o client.Options, c *Codec) client.Options {
	o.DataConverter = DataConverter(c)
	o.FailureConverter = FailureConverter(c)
	o.Interceptors = append(o.Interceptors, Interceptor())
	return o
}

type bindMessages struct{ interceptor.InterceptorBase }

func (*bindMessages) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &clientOut{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}}
}

func (*bindMessages) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &workflowIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

func with(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, useKey{}, use{name: name})
}

type clientOut struct {
	interceptor.ClientOutboundInterceptorBase
}

func (o *clientOut) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	return o.Next.ExecuteWorkflow(with(ctx, "start:"+in.WorkflowType), in)
}

func (o *clientOut) CreateSchedule(ctx context.Context, in *interceptor.ScheduleClientCreateInput) (client.ScheduleHandle, error) {
	name := "schedule"
	if a, ok := in.Options.Action.(*client.ScheduleWorkflowAction); ok {
		if wf, ok := a.Workflow.(string); ok {
			name = "start:" + wf
		}
	}
	return o.Next.CreateSchedule(context.WithValue(ctx, useKey{}, use{name: name, scheduled: true}), in)
}

func (o *clientOut) SignalWorkflow(ctx context.Context, in *interceptor.ClientSignalWorkflowInput) error {
	return o.Next.SignalWorkflow(with(ctx, "signal:"+in.SignalName), in)
}

func (o *clientOut) QueryWorkflow(ctx context.Context, in *interceptor.ClientQueryWorkflowInput) (converter.EncodedValue, error) {
	return o.Next.QueryWorkflow(with(ctx, "query:"+in.QueryType), in)
}

func (o *clientOut) UpdateWorkflow(ctx context.Context, in *interceptor.ClientUpdateWorkflowInput) (client.WorkflowUpdateHandle, error) {
	return o.Next.UpdateWorkflow(with(ctx, Use(in.UpdateName)), in)
}

type workflowIn struct {
	interceptor.WorkflowInboundInterceptorBase
}

// ValidateUpdate refuses an argument whose payload was bound to another
// message, or to none (sealed before binding, or by a client without this
// interceptor). The SDK validates only new Updates, never on replay, so
// Updates already in a history replay whatever they were bound to.
func (w *workflowIn) ValidateUpdate(ctx workflow.Context, in *interceptor.UpdateInput) error {
	for _, arg := range in.Args {
		b, ok := arg.(Bound)
		if !ok {
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the argument of Update %q cannot say what it was sent for (%T embeds no workflows.Target)", in.Name, arg),
				apperr.Forbidden, nil)
		}
		if got := b.PayloadUse(); got != Use(in.Name) {
			if got == "" {
				got = "no message"
			}
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the argument of Update %q was sent for %s", in.Name, got), apperr.Forbidden, nil)
		}
	}
	return w.Next.ValidateUpdate(ctx, in)
}
