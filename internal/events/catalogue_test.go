package events

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKinds(t *testing.T) {
	all := Kinds()
	assert.Len(t, all, 29, "22 webhook kinds, collection.expired and review.expired offered to webhooks too, execution.mismatch, the three mandate kinds, and the test kind")
	seen := map[string]bool{}
	for _, k := range all {
		assert.False(t, seen[k], "duplicate kind %q", k)
		seen[k] = true
		assert.True(t, Valid(k), k)
	}
	for _, k := range WebhookKinds() {
		assert.True(t, seen[k], "webhook kind %q missing from Kinds", k)
		assert.True(t, IsWebhookEvent(k), k)
	}
	assert.Len(t, WebhookKinds(), 28)

	// Order is stable, and the returned slice is the caller's own.
	assert.Equal(t, ApprovalRequested, all[0])
	assert.Equal(t, PublishHeld, WebhookKinds()[21])
	all[0] = "mutated"
	assert.Equal(t, ApprovalRequested, Kinds()[0])
}

func TestValid(t *testing.T) {
	for _, k := range []string{"", "approval", "gate.allowed", "Approval.Requested", "approval.requested "} {
		assert.False(t, Valid(k), "%q", k)
	}
	// The test kind is a real kind but no organisation webhook event.
	assert.True(t, Valid(WebhookTest))
	assert.False(t, IsWebhookEvent(WebhookTest))
	assert.True(t, IsWebhookEvent(ReviewExpired), "offered to webhooks, like collection.expired")
}

func TestIsCallbackEvent(t *testing.T) {
	cases := []struct {
		requestType, kind string
		want              bool
	}{
		{"approval", "approval.approved", true},
		{"approval", "approval.rejected", true},
		{"approval", "approval.expired", true},
		{"approval", "approval.question", true},
		{"approval", "approval.requested", false},
		{"approval", "approval.answered", false},
		{"approval", "approval.escalated", false},
		{"approval", "review.approved", false},
		{"review", "review.approved", true},
		{"review", "review.changes_requested", true},
		{"review", "review.expired", true},
		{"review", "review.requested", false},
		{"review", "approval.approved", false},
		{"collection", "collection.completed", true},
		{"collection", "collection.expired", true},
		{"collection", "collection.requested", false},
		{"flow", "flow.completed", false},
		{"", "approval.approved", false},
		{"Approval", "approval.approved", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, IsCallbackEvent(c.requestType, c.kind), "%s %s", c.requestType, c.kind)
	}
	assert.Equal(t, []string{ReviewApproved, ReviewChangesRequested, ReviewExpired}, CallbackEvents(RequestReview))
	assert.Nil(t, CallbackEvents("flow"))
	// Every callback kind is a known kind.
	for _, rt := range []string{RequestApproval, RequestReview, RequestCollection} {
		for _, k := range CallbackEvents(rt) {
			assert.True(t, Valid(k), k)
		}
	}
}

func TestSubscribed(t *testing.T) {
	// Empty means everything, including a kind added after subscribing.
	for _, list := range [][]string{nil, {}} {
		assert.True(t, Subscribed(list, ApprovalRequested))
		assert.True(t, Subscribed(list, "invoice.paid"))
	}
	list := []string{ApprovalApproved, ReportViewed}
	assert.True(t, Subscribed(list, ApprovalApproved))
	assert.True(t, Subscribed(list, ReportViewed))
	assert.False(t, Subscribed(list, ApprovalRejected))
	assert.False(t, Subscribed(list, "invoice.paid"))
}
