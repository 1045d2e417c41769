package payloadcodec

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/secretkey"
)

func ring(t *testing.T, keys string) *secretkey.Ring {
	t.Helper()
	r, err := secretkey.Parse(keys)
	require.NoError(t, err)
	return r
}

func TestRoundTripHidesThePayload(t *testing.T) {
	t.Parallel()
	dc := DataConverter(New(ring(t, secretkey.Generate())))
	p, err := dc.ToPayload(map[string]string{"title": "Refund order 42"})
	require.NoError(t, err)
	assert.Equal(t, "binary/encrypted", string(p.Metadata["encoding"]))
	assert.NotEmpty(t, p.Metadata["encryption-key-id"])
	assert.False(t, bytes.Contains(p.Data, []byte("Refund order 42")))

	var back map[string]string
	require.NoError(t, dc.FromPayload(p, &back))
	assert.Equal(t, "Refund order 42", back["title"])
}

func TestRefusesWhatWasNotEncryptedWithTheKey(t *testing.T) {
	t.Parallel()
	dc := DataConverter(New(ring(t, secretkey.Generate())))
	plain, err := converter.GetDefaultDataConverter().ToPayload("forged")
	require.NoError(t, err)
	var s string
	assert.ErrorIs(t, dc.FromPayload(plain, &s), ErrNotEncrypted, "what a client without the key sends")

	other, err := DataConverter(New(ring(t, secretkey.Generate()))).ToPayload("forged")
	require.NoError(t, err)
	assert.ErrorIs(t, dc.FromPayload(other, &s), secretkey.ErrUnknownKey, "encrypted under another key")

	// Only the reader of old histories lets plain payloads through.
	lenient := DataConverter(AcceptingPlain(ring(t, secretkey.Generate())))
	require.NoError(t, lenient.FromPayload(plain, &s))
	assert.Equal(t, "forged", s)
}

func TestOldKeyStillDecodesAfterRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKey := secretkey.Generate(), secretkey.Generate()
	p, err := DataConverter(New(ring(t, oldKey))).ToPayload(42)
	require.NoError(t, err)
	var n int
	require.NoError(t, DataConverter(New(ring(t, newKey+","+oldKey))).FromPayload(p, &n))
	assert.Equal(t, 42, n)
	assert.Error(t, DataConverter(New(ring(t, newKey))).FromPayload(p, &n))
}

func TestFailureMessagesAreEncrypted(t *testing.T) {
	t.Parallel()
	codec := New(ring(t, secretkey.Generate()))
	fc := FailureConverter(codec)
	f := fc.ErrorToFailure(assertErr("only the requester may answer"))
	assert.NotContains(t, f.GetMessage(), "requester")
	assert.Contains(t, fc.FailureToError(f).Error(), "only the requester may answer")
}

type assertErr string

func (e assertErr) Error() string { return string(e) }

// at is dc as the SDK hands it over for a client call sending message use
// to workflow (or, with activity set, for that workflow's activity).
func at(dc converter.DataConverter, workflow, activity, use string) converter.DataConverter {
	if use != "" {
		dc = dc.(converter.ContextAware).WithContext(with(context.Background(), use))
	}
	var sc converter.SerializationContext = converter.WorkflowSerializationContext{Namespace: "default", WorkflowID: workflow}
	if activity != "" {
		sc = converter.ActivitySerializationContext{Namespace: "default", WorkflowID: workflow, ActivityType: activity}
	}
	return converter.WithDataConverterSerializationContext(dc, sc)
}

// arg stands for an Update's argument (workflows.Target).
type arg struct {
	Note string
	use  string
}

func (a *arg) SetPayloadUse(use string) { a.use = use }
func (a arg) PayloadUse() string        { return a.use }

func TestPayloadsOpenOnlyWhereTheyWereMadeFor(t *testing.T) {
	t.Parallel()
	dc := DataConverter(New(ring(t, secretkey.Generate())))
	decide := at(dc, "approval/apr_A", "", Use("decide"))
	p, err := decide.ToPayload(arg{Note: "ok"})
	require.NoError(t, err)

	// The worker of approval A reads it, and learns which message it was.
	var got arg
	require.NoError(t, at(dc, "approval/apr_A", "", "").FromPayload(p, &got))
	assert.Equal(t, "ok", got.Note)
	assert.Equal(t, "update:decide", got.use)

	// Copied onto approval B, it does not open.
	assert.ErrorIs(t, at(dc, "approval/apr_B", "", "").FromPayload(p, &got), ErrMisplaced)
	// Nor as an activity's input or result of approval A.
	assert.ErrorIs(t, at(dc, "approval/apr_A", "PersistApproval", "").FromPayload(p, &got), ErrMisplaced)

	// Rewriting what it is bound to breaks the seal.
	for _, forged := range []string{
		`{"workflow":"approval/apr_B","use":"update:decide"}`,
		`{"workflow":"approval/apr_A","use":"update:cancel"}`,
		`{}`,
	} {
		q := proto.Clone(p).(*commonpb.Payload)
		q.Metadata[metaBinding] = []byte(forged)
		assert.ErrorContains(t, at(dc, "approval/apr_B", "", "").FromPayload(q, &got), "does not open", forged)
		assert.ErrorContains(t, at(dc, "approval/apr_A", "", "").FromPayload(q, &got), "does not open", forged)
	}
	q := proto.Clone(p).(*commonpb.Payload)
	delete(q.Metadata, metaBinding)
	assert.ErrorContains(t, at(dc, "approval/apr_A", "", "").FromPayload(q, &got), "does not open", "dropping the binding")

	// Activity payloads are bound to their workflow and activity type.
	act, err := at(dc, "approval/apr_A", "PersistApproval", "").ToPayload("transition")
	require.NoError(t, err)
	var s string
	require.NoError(t, at(dc, "approval/apr_A", "PersistApproval", "").FromPayload(act, &s))
	assert.ErrorIs(t, at(dc, "approval/apr_A", "EmailApprovers", "").FromPayload(act, &s), ErrMisplaced)
	assert.ErrorIs(t, at(dc, "approval/apr_B", "PersistApproval", "").FromPayload(act, &s), ErrMisplaced)
	assert.ErrorIs(t, at(dc, "approval/apr_A", "", "").FromPayload(act, &s), ErrMisplaced)

	// The Temporal UI's codec endpoint decodes for operators whatever the
	// binding.
	plain, err := New(dc.(*dataConverter).codec.ring).Decode([]*commonpb.Payload{p, act})
	require.NoError(t, err)
	assert.Contains(t, string(plain[0].Data), `"Note":"ok"`)
	assert.Equal(t, `"transition"`, string(plain[1].Data))
}

// Payloads sealed before binding are in running histories: they still
// open (replay, queries, the UI), bound to no message.
func TestPayloadsSealedBeforeBindingStillOpen(t *testing.T) {
	t.Parallel()
	r := ring(t, secretkey.Generate())
	inner, err := converter.GetDefaultDataConverter().ToPayload(arg{Note: "old"})
	require.NoError(t, err)
	b, err := proto.Marshal(inner)
	require.NoError(t, err)
	id, sealed := r.Encrypt(purpose, b) // as the codec sealed before binding
	old := &commonpb.Payload{Metadata: map[string][]byte{metaEncoding: []byte(encodingEncrypted), metaKeyID: []byte(id),
		metaCipher: []byte(cipherName)}, Data: sealed}

	var got arg
	require.NoError(t, at(DataConverter(New(r)), "approval/apr_A", "", "").FromPayload(old, &got))
	assert.Equal(t, "old", got.Note)
	assert.Empty(t, got.use, "bound to no message: no new Update takes it")
}

func TestScheduledRunsOpenTheirSchedulesInput(t *testing.T) {
	t.Parallel()
	dc := DataConverter(New(ring(t, secretkey.Generate())))
	scheduled := converter.WithDataConverterSerializationContext(
		dc.(converter.ContextAware).WithContext(context.WithValue(context.Background(), useKey{}, use{name: "start:ScheduleDue", scheduled: true})),
		converter.WorkflowSerializationContext{WorkflowID: "schedule-due/sch_1"})
	p, err := scheduled.ToPayload("due")
	require.NoError(t, err)
	var s string
	require.NoError(t, at(dc, "schedule-due/sch_1-2026-11-25T22:00:00Z", "", "").FromPayload(p, &s))
	assert.ErrorIs(t, at(dc, "schedule-due/sch_2-2026-11-25T22:00:00Z", "", "").FromPayload(p, &s), ErrMisplaced)

	// Only a schedule's input opens under its runs' ids.
	started, err := at(dc, "approval/apr_A", "", "start:Approval").ToPayload("in")
	require.NoError(t, err)
	assert.ErrorIs(t, at(dc, "approval/apr_A-2026-11-25T22:00:00Z", "", "").FromPayload(started, &s), ErrMisplaced)
}

type next struct {
	interceptor.WorkflowInboundInterceptorBase
	called bool
}

func (n *next) ValidateUpdate(workflow.Context, *interceptor.UpdateInput) error {
	n.called = true
	return nil
}

func TestNewUpdatesTakeOnlyArgumentsBoundToThem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		update string
		arg    any
		ok     bool
	}{
		{"bound to it", "decide", arg{use: "update:decide"}, true},
		{"bound to another Update", "cancel", arg{use: "update:decide"}, false},
		{"bound to the workflow's start", "decide", arg{use: "start:Approval"}, false},
		{"bound to nothing (before binding, or no interceptor)", "decide", arg{}, false},
		{"an argument that cannot say", "decide", "text", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &next{}
			in := &workflowIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: n}}
			err := in.ValidateUpdate(nil, &interceptor.UpdateInput{Name: tc.update, Args: []any{tc.arg}})
			assert.Equal(t, tc.ok, err == nil, "%v", err)
			assert.Equal(t, tc.ok, n.called, "the workflow's own validator runs only after")
			if err != nil {
				var app *temporal.ApplicationError
				require.ErrorAs(t, err, &app)
				assert.Equal(t, apperr.Forbidden, app.Type())
			}
		})
	}
}
