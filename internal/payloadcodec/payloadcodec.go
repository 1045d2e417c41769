// Package payloadcodec encrypts every Temporal payload (workflow inputs,
// Update arguments, activity inputs and results, failure messages) under
// the instance secret key, so a client that reaches Temporal without the
// key reads only ciphertext and cannot send an Update the workflows will
// decode.
//
// Each payload is also bound to where it may be used: the workflow it was
// made for, the activity (for activity payloads) and, for what a client
// sends, the message ("update:decide", "start:Approval"). The binding is
// written beside the ciphertext and authenticated as AES-GCM associated
// data, so a payload copied from one workflow or message to another does
// not open there (finding 3 of issue 32). The SDK gives the data converter
// the workflow and activity on both sides (its serialization context), but
// the message name only on the client's side: the worker decodes an
// Update's argument before it knows which Update it is. So the client binds
// the name (Interceptor puts it in the call's context) and the worker's
// interceptor, which knows the Update, compares it with the name the
// payload was bound to (Bound) before the Update is accepted.
package payloadcodec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/assent-hq/assent/internal/secretkey"
)

// Metadata of an encrypted payload. The key id lets keys rotate: histories
// sealed under an older key open while it stays in the ring.
const (
	encodingEncrypted = "binary/encrypted"
	metaEncoding      = converter.MetadataEncoding
	metaKeyID         = "encryption-key-id"
	metaCipher        = "encryption-cipher"
	// metaBinding is the place (JSON) the payload is bound to. Payloads
	// sealed before binding have none: see open.
	metaBinding = "assent-binding"
	cipherName  = "AES-256-GCM"
	purpose     = "temporal-payloads"
	// adPrefix versions the associated data's format.
	adPrefix = "assent temporal payload v2\x00"
)

// ErrNotEncrypted refuses a payload that was not sealed under the ring:
// what a client without the key sends.
var ErrNotEncrypted = errors.New("payload is not encrypted under the instance secret key")

// ErrMisplaced refuses a payload bound to another workflow or activity
// than the one decoding it: a payload copied from elsewhere.
var ErrMisplaced = errors.New("payload was made for another workflow or activity")

// ForeignKeyError is a payload sealed under a key the ring does not hold:
// most likely another Assent instance, with another ASSENT_SECRET_KEY,
// shares this Temporal namespace and task queue, or a key was dropped from
// the ring while histories still need it. Inside a workflow it fails the
// workflow task, never the workflow (see dataConverter.open).
type ForeignKeyError struct {
	// KeyID is the id of the key that sealed the payload.
	KeyID string
}

func (e *ForeignKeyError) Error() string {
	return fmt.Sprintf("temporal payload sealed under key %s, which this process's %s does not hold: "+
		"another Assent instance with another key may share this Temporal namespace and task queue "+
		"(give each instance its own ASSENT_TEMPORAL_NAMESPACE or ASSENT_TEMPORAL_ADDRESS), or the old key was "+
		"dropped from the ring too early", e.KeyID, secretkey.Env)
}

func (e *ForeignKeyError) Unwrap() error { return secretkey.ErrUnknownKey }

// place is where a payload may be used. The zero place is "no context":
// failures, and payloads sealed by a codec used directly.
type place struct {
	Workflow string `json:"workflow,omitempty"`
	// Activity is the activity type, for an activity's input and result.
	Activity string `json:"activity,omitempty"`
	// Use is the message a client sent the payload with (see Interceptor).
	Use string `json:"use,omitempty"`
	// Scheduled marks a Temporal Schedule's workflow input: its runs'
	// workflow ids are Workflow, "-" and the time of the run.
	Scheduled bool `json:"scheduled,omitempty"`
}

func (p place) String() string {
	if p.Activity != "" {
		return fmt.Sprintf("activity %s of workflow %q", p.Activity, p.Workflow)
	}
	return fmt.Sprintf("workflow %q", p.Workflow)
}

// holds reports whether a payload bound to p may be decoded at want.
func (p place) holds(want place) bool {
	sameWorkflow := p.Workflow == want.Workflow ||
		(p.Scheduled && strings.HasPrefix(want.Workflow, p.Workflow+"-"))
	return sameWorkflow && p.Activity == want.Activity
}

// Codec encrypts and decrypts payloads.
type Codec struct {
	ring *secretkey.Ring
	// acceptPlain lets unencrypted payloads through on decode: for reading
	// histories written before encryption, never for a live worker by
	// default (it would accept forged Updates).
	acceptPlain bool
	// at, when set, is where this codec is used: new payloads are bound to
	// it and decoded ones must have been bound to it. Unset, any binding
	// decodes (the Temporal UI's codec endpoint, failures).
	at *place
}

// New is the strict codec every worker and client uses.
func New(ring *secretkey.Ring) *Codec { return &Codec{ring: ring} }

// AcceptingPlain also decodes unencrypted payloads as they are.
func AcceptingPlain(ring *secretkey.Ring) *Codec { return &Codec{ring: ring, acceptPlain: true} }

// placed returns a copy of c used at p.
func (c *Codec) placed(p place) *Codec {
	out := *c
	out.at = &p
	return &out
}

func (c *Codec) place() place {
	if c.at == nil {
		return place{}
	}
	return *c.at
}

func associated(binding []byte) []byte { return append([]byte(adPrefix), binding...) }

// seal encrypts p bound to where c is used.
func (c *Codec) seal(p *commonpb.Payload) (*commonpb.Payload, error) {
	plain, err := proto.Marshal(p)
	if err != nil {
		return nil, err
	}
	binding, err := json.Marshal(c.place())
	if err != nil {
		return nil, err
	}
	id, sealed := c.ring.EncryptBound(purpose, plain, associated(binding))
	return &commonpb.Payload{
		Metadata: map[string][]byte{metaEncoding: []byte(encodingEncrypted), metaKeyID: []byte(id),
			metaCipher: []byte(cipherName), metaBinding: binding},
		Data: sealed,
	}, nil
}

// open decrypts p and returns the message it was bound to ("" for none).
// A payload sealed before binding (no binding in its metadata) still opens
// anywhere: running histories hold such payloads and must replay. It is
// bound to no message, so the interceptor refuses it as a new Update's
// argument.
func (c *Codec) open(p *commonpb.Payload) (*commonpb.Payload, string, error) {
	if string(p.GetMetadata()[metaEncoding]) != encodingEncrypted {
		if !c.acceptPlain {
			return nil, "", ErrNotEncrypted
		}
		return p, "", nil
	}
	var ad []byte
	var bound place
	if binding, ok := p.Metadata[metaBinding]; ok {
		if err := json.Unmarshal(binding, &bound); err != nil {
			return nil, "", fmt.Errorf("temporal payload: its binding cannot be read: %w", err)
		}
		ad = associated(binding)
	}
	keyID := string(p.Metadata[metaKeyID])
	plain, err := c.ring.DecryptBound(purpose, keyID, p.Data, ad)
	if errors.Is(err, secretkey.ErrUnknownKey) {
		return nil, "", &ForeignKeyError{KeyID: keyID}
	}
	if err != nil {
		return nil, "", fmt.Errorf("temporal payload: %w", err)
	}
	if _, ok := p.Metadata[metaBinding]; ok && c.at != nil && !bound.holds(*c.at) {
		return nil, "", fmt.Errorf("temporal payload for %s, decoded for %s: %w", bound, c.at, ErrMisplaced)
	}
	out := &commonpb.Payload{}
	if err := proto.Unmarshal(plain, out); err != nil {
		return nil, "", fmt.Errorf("temporal payload: %w", err)
	}
	return out, bound.Use, nil
}

// Encode implements converter.PayloadCodec.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		var err error
		if out[i], err = c.seal(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Decode implements converter.PayloadCodec.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		var err error
		if out[i], _, err = c.open(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DataConverter is the default converter with c after it, binding each
// payload to where the SDK says it is used.
func DataConverter(c *Codec) converter.DataConverter {
	return &dataConverter{parent: converter.GetDefaultDataConverter(), codec: c}
}

// FailureConverter encrypts failure messages and stack traces too, which
// would otherwise stay in clear in histories. The SDK converts failures
// without context, so they are bound to none.
func FailureConverter(c *Codec) converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter: DataConverter(c), EncodeCommonAttributes: true})
}

// BoundWorkflow is the workflow id p is bound to ("" for none), read from
// its metadata: a history's replayer must run under it for the history's
// payloads to open.
func BoundWorkflow(p *commonpb.Payload) string {
	var bound place
	_ = json.Unmarshal(p.GetMetadata()[metaBinding], &bound)
	return bound.Workflow
}
