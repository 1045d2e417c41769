package payloadcodec

import (
	"context"
	"errors"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// dataConverter converts with parent and seals with codec, which carries
// where it is used: the SDK passes the workflow and activity through
// WithSerializationContext, and a client call's message through the
// context Interceptor makes (WithContext).
type dataConverter struct {
	parent converter.DataConverter
	codec  *Codec
	// inWorkflow is set for what a workflow decodes (WithWorkflowContext):
	// there a payload sealed under a key the ring lacks panics, which fails
	// the workflow task (retried, shown in the Temporal UI) instead of the
	// workflow: see ForeignKeyError.
	inWorkflow bool
}

var (
	_ converter.DataConverter                         = (*dataConverter)(nil)
	_ converter.ContextAware                          = (*dataConverter)(nil)
	_ converter.DataConverterWithSerializationContext = (*dataConverter)(nil)
)

// Setter is what an argument type implements (by embedding
// workflows.Target) to be told the message its payload was bound to, as it
// is decoded; Bound reads it back.
type Setter interface{ SetPayloadUse(use string) }

// Bound is an Update argument that says which message its payload was
// bound to ("" for none).
type Bound interface{ PayloadUse() string }

// WithSerializationContext binds to the workflow, or to the workflow's
// activity, that the SDK converts for. The message set by WithContext is
// kept: a client call sets it first.
func (d *dataConverter) WithSerializationContext(sc converter.SerializationContext) converter.DataConverter {
	p := d.codec.place()
	switch sc := sc.(type) {
	case converter.WorkflowSerializationContext:
		p.Workflow, p.Activity = sc.WorkflowID, ""
	case converter.ActivitySerializationContext:
		p.Workflow, p.Activity = sc.WorkflowID, sc.ActivityType
	default:
		return d
	}
	return &dataConverter{parent: d.parent, codec: d.codec.placed(p), inWorkflow: d.inWorkflow}
}

// WithContext takes the message a client call sends from ctx.
func (d *dataConverter) WithContext(ctx context.Context) converter.DataConverter {
	u, ok := ctx.Value(useKey{}).(use)
	if !ok {
		return d
	}
	p := d.codec.place()
	p.Use, p.Scheduled = u.name, u.scheduled
	return &dataConverter{parent: d.parent, codec: d.codec.placed(p), inWorkflow: d.inWorkflow}
}

// WithWorkflowContext marks what a workflow decodes (the workflow itself
// is known from the serialization context).
func (d *dataConverter) WithWorkflowContext(converter.WorkflowContext) converter.DataConverter {
	out := *d
	out.inWorkflow = true
	return &out
}

// open is the codec's open, panicking inside a workflow for a payload
// sealed under a key the ring lacks. The SDK turns an error decoding a
// workflow's input into the workflow's failure, and one decoding an
// Update's argument into the Update's refusal; a panic in workflow code
// fails only the workflow task (the worker's default
// WorkflowPanicPolicy, BlockWorkflow), which Temporal retries until a
// worker holding the key takes it.
func (d *dataConverter) open(p *commonpb.Payload) (*commonpb.Payload, string, error) {
	plain, use, err := d.codec.open(p)
	var foreign *ForeignKeyError
	if d.inWorkflow && errors.As(err, &foreign) {
		panic(foreign)
	}
	return plain, use, err
}

func (d *dataConverter) ToPayload(value any) (*commonpb.Payload, error) {
	p, err := d.parent.ToPayload(value)
	if p == nil || err != nil {
		return p, err
	}
	return d.codec.seal(p)
}

func (d *dataConverter) ToPayloads(values ...any) (*commonpb.Payloads, error) {
	ps, err := d.parent.ToPayloads(values...)
	if ps == nil || err != nil {
		return ps, err
	}
	sealed, err := d.codec.Encode(ps.Payloads)
	return &commonpb.Payloads{Payloads: sealed}, err
}

func (d *dataConverter) FromPayload(payload *commonpb.Payload, valuePtr any) error {
	if payload == nil {
		return nil
	}
	plain, use, err := d.open(payload)
	if err != nil {
		return err
	}
	if err := d.parent.FromPayload(plain, valuePtr); err != nil {
		return err
	}
	if s, ok := valuePtr.(Setter); ok {
		s.SetPayloadUse(use)
	}
	return nil
}

func (d *dataConverter) FromPayloads(payloads *commonpb.Payloads, valuePtrs ...any) error {
	if payloads == nil {
		return d.parent.FromPayloads(payloads, valuePtrs...)
	}
	plain := make([]*commonpb.Payload, len(payloads.Payloads))
	uses := make([]string, len(payloads.Payloads))
	for i, p := range payloads.Payloads {
		var err error
		if plain[i], uses[i], err = d.open(p); err != nil {
			return err
		}
	}
	if err := d.parent.FromPayloads(&commonpb.Payloads{Payloads: plain}, valuePtrs...); err != nil {
		return err
	}
	for i := 0; i < len(uses) && i < len(valuePtrs); i++ {
		if s, ok := valuePtrs[i].(Setter); ok {
			s.SetPayloadUse(uses[i])
		}
	}
	return nil
}

func (d *dataConverter) ToString(payload *commonpb.Payload) string {
	plain, _, err := d.codec.open(payload)
	if err != nil {
		return err.Error()
	}
	return d.parent.ToString(plain)
}

func (d *dataConverter) ToStrings(payloads *commonpb.Payloads) []string {
	if payloads == nil {
		return nil
	}
	out := make([]string, len(payloads.Payloads))
	for i, p := range payloads.Payloads {
		out[i] = d.ToString(p)
	}
	return out
}
