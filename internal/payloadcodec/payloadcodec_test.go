package payloadcodec

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/assent-hq/assent/internal/secretkey"
)

func ring(t *testing.T, keys string) *secretkey.Ring {
	t.Helper()
	r, err := secretkey.Parse(keys)
	require.NoError(t, err)
	return r
}

func TestRoundTripHidesThePayload(t *testing.T) {
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
	oldKey, newKey := secretkey.Generate(), secretkey.Generate()
	p, err := DataConverter(New(ring(t, oldKey))).ToPayload(42)
	require.NoError(t, err)
	var n int
	require.NoError(t, DataConverter(New(ring(t, newKey+","+oldKey))).FromPayload(p, &n))
	assert.Equal(t, 42, n)
	assert.Error(t, DataConverter(New(ring(t, newKey))).FromPayload(p, &n))
}

func TestFailureMessagesAreEncrypted(t *testing.T) {
	codec := New(ring(t, secretkey.Generate()))
	fc := FailureConverter(codec)
	f := fc.ErrorToFailure(assertErr("only the requester may answer"))
	assert.NotContains(t, f.GetMessage(), "requester")
	assert.Contains(t, fc.FailureToError(f).Error(), "only the requester may answer")
}

type assertErr string

func (e assertErr) Error() string { return string(e) }
