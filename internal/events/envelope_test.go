package events

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/sdk/go/webhook"
)

func TestWebhookBodyJSON(t *testing.T) {
	sent := time.Date(2026, 1, 2, 4, 4, 5, 123456789, time.FixedZone("x", 3600))
	b, err := NewWebhookBody(ApprovalApproved, map[string]any{"id": "apr_1"}, sent)
	require.NoError(t, err)
	out, err := json.Marshal(b)
	require.NoError(t, err)
	// UTC, microseconds, camelCase, no test field unless set.
	assert.JSONEq(t, `{"event":"approval.approved","sentAt":"2026-01-02T03:04:05.123456Z","data":{"id":"apr_1"}}`, string(out))
	assert.Contains(t, string(out), `"sentAt":"2026-01-02T03:04:05.123456Z"`)

	b.Test = true
	out, err = json.Marshal(b)
	require.NoError(t, err)
	assert.JSONEq(t, `{"event":"approval.approved","sentAt":"2026-01-02T03:04:05.123456Z","data":{"id":"apr_1"},"test":true}`, string(out))

	// A receiver's round trip.
	var back WebhookBody
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, "approval.approved", back.Event)
	assert.True(t, back.Test)
	assert.True(t, back.SentAt.Time().Equal(sent.Truncate(time.Microsecond)))
}

func TestCallbackBodyJSON(t *testing.T) {
	sent := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b, err := NewCallbackBody(RequestReview, "rev_1", ReviewChangesRequested, json.RawMessage(` {"id": "rev_1"} `), sent)
	require.NoError(t, err)
	out, err := json.Marshal(b)
	require.NoError(t, err)
	assert.Equal(t, `{"event":"review.changes_requested","sentAt":"2026-01-02T03:04:05.000000Z","requestType":"review","requestId":"rev_1","data":{"id":"rev_1"}}`, string(out))

	_, err = NewCallbackBody(RequestReview, "rev_1", ReviewRequested, nil, sent)
	assert.Error(t, err, "review.requested is not sent to callbacks")
}

func TestEnvelopeData(t *testing.T) {
	sent := time.Unix(0, 0)
	_, err := NewWebhookBody("approval.maybe", nil, sent)
	assert.Error(t, err)
	_, err = NewWebhookBody(ApprovalApproved, []int{1}, sent)
	assert.Error(t, err, "data must be an object")
	_, err = NewWebhookBody(ApprovalApproved, func() {}, sent)
	assert.Error(t, err)

	// Missing data is {}, never null, however it is missing.
	for _, d := range []any{nil, json.RawMessage(nil), json.RawMessage("null")} {
		b, err := NewWebhookBody(ApprovalApproved, d, sent)
		require.NoError(t, err)
		out, err := json.Marshal(b)
		require.NoError(t, err)
		assert.Contains(t, string(out), `"data":{}`)
	}
	out, err := json.Marshal(CallbackBody{Event: ApprovalExpired})
	require.NoError(t, err)
	assert.Contains(t, string(out), `"data":{}`)
}

func TestDeliveryHeaders(t *testing.T) {
	now := time.Unix(1767225600, 0)
	body := []byte(`{"event":"approval.requested"}`)
	h := DeliveryHeaders(ApprovalRequested, "dlv_1", 3, now, body, "s")
	assert.Equal(t, "approval.requested", h.Get("Assent-Event"))
	assert.Equal(t, "dlv_1", h.Get("Assent-Delivery"))
	assert.Equal(t, "3", h.Get("Assent-Attempt"))
	assert.NoError(t, webhook.Verify(h.Get("Assent-Signature"), body, "s", now, 0))
	// The constants are already in canonical form, so a map lookup works too.
	for _, k := range []string{HeaderEvent, HeaderDelivery, HeaderSignature, HeaderAttempt} {
		assert.Len(t, h[k], 1, k)
	}
}
