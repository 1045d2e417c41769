// Package payloadcodec encrypts every Temporal payload (workflow inputs,
// Update arguments, activity results, failure messages) under the instance
// secret key, so a client that reaches Temporal without the key reads only
// ciphertext and cannot send an Update the workflows will decode.
package payloadcodec

import (
	"errors"
	"fmt"

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
	cipherName        = "AES-256-GCM"
	purpose           = "temporal-payloads"
)

// ErrNotEncrypted refuses a payload that was not sealed under the ring:
// what a client without the key sends.
var ErrNotEncrypted = errors.New("payload is not encrypted under the instance secret key")

// Codec encrypts and decrypts payloads.
type Codec struct {
	ring *secretkey.Ring
	// acceptPlain lets unencrypted payloads through on decode: for reading
	// histories written before encryption, never for a live worker by
	// default (it would accept forged Updates).
	acceptPlain bool
}

// New is the strict codec every worker and client uses.
func New(ring *secretkey.Ring) *Codec { return &Codec{ring: ring} }

// AcceptingPlain also decodes unencrypted payloads as they are.
func AcceptingPlain(ring *secretkey.Ring) *Codec { return &Codec{ring: ring, acceptPlain: true} }

// Encode implements converter.PayloadCodec.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		id, sealed := c.ring.Encrypt(purpose, plain)
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{metaEncoding: []byte(encodingEncrypted), metaKeyID: []byte(id), metaCipher: []byte(cipherName)},
			Data:     sealed,
		}
	}
	return out, nil
}

// Decode implements converter.PayloadCodec.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[metaEncoding]) != encodingEncrypted {
			if !c.acceptPlain {
				return nil, ErrNotEncrypted
			}
			out[i] = p
			continue
		}
		plain, err := c.ring.Decrypt(purpose, string(p.Metadata[metaKeyID]), p.Data)
		if err != nil {
			return nil, fmt.Errorf("temporal payload: %w", err)
		}
		out[i] = &commonpb.Payload{}
		if err := proto.Unmarshal(plain, out[i]); err != nil {
			return nil, fmt.Errorf("temporal payload: %w", err)
		}
	}
	return out, nil
}

// DataConverter is the default converter with c after it.
func DataConverter(c *Codec) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// FailureConverter encrypts failure messages and stack traces too, which
// would otherwise stay in clear in histories.
func FailureConverter(c *Codec) converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter: DataConverter(c), EncodeCommonAttributes: true})
}
