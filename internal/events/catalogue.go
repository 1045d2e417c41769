package events

import (
	"slices"
)

// Event kinds. The names are part of the public interface: never rename one.
const (
	// Asking a person.
	ApprovalRequested      = "approval.requested"
	ApprovalApproved       = "approval.approved"
	ApprovalRejected       = "approval.rejected"
	ApprovalExpired        = "approval.expired"
	ApprovalEscalated      = "approval.escalated"
	ApprovalQuestion       = "approval.question"
	ApprovalAnswered       = "approval.answered"
	ReviewRequested        = "review.requested"
	ReviewApproved         = "review.approved"
	ReviewChangesRequested = "review.changes_requested"
	CollectionRequested    = "collection.requested"
	CollectionCompleted    = "collection.completed"

	// Flows and gate. There is deliberately no gate.allowed: a gate that
	// needs a person raises an ordinary approval.
	FlowCompleted = "flow.completed"
	GateDenied    = "gate.denied"

	// An execution receipt whose input is not the one approved: what ran
	// is not what a person (or the policy) allowed.
	ExecutionMismatch = "execution.mismatch"

	// Standing mandates: granted, revoked, and spent for their window.
	MandateGranted   = "mandate.granted"
	MandateRevoked   = "mandate.revoked"
	MandateExhausted = "mandate.exhausted"

	// Publishing.
	ReportPublished = "report.published"
	ReportUpdated   = "report.updated"
	ReportShared    = "report.shared"
	ReportViewed    = "report.viewed"
	CommentCreated  = "comment.created"
	AccessRequested = "access.requested"
	ScheduleDue     = "schedule.due"
	PublishHeld     = "publish.held"

	// Callback-only kinds: not in the webhook catalogue.
	ReviewExpired     = "review.expired"
	CollectionExpired = "collection.expired"

	// WebhookTest is what Send test posts, whatever the endpoint takes. It
	// is not in the webhook catalogue: nobody subscribes to it, and a
	// receiver that acts on the kind never mistakes a test for a real
	// event.
	WebhookTest = "webhook.test"
)

// Request types, as sent in a callback's requestType.
const (
	RequestApproval   = "approval"
	RequestReview     = "review"
	RequestCollection = "collection"
)

// webhookKinds is the organisation webhook catalogue in its documented
// order (docs/webhooks.md); new
// kinds go at the end so the order stays stable for admin pages and docs.
var webhookKinds = []string{
	ApprovalRequested, ApprovalApproved, ApprovalRejected, ApprovalExpired,
	ApprovalEscalated, ApprovalQuestion, ApprovalAnswered,
	ReviewRequested, ReviewApproved, ReviewChangesRequested,
	CollectionRequested, CollectionCompleted,
	FlowCompleted, GateDenied,
	ReportPublished, ReportUpdated, ReportShared, ReportViewed,
	CommentCreated, AccessRequested, ScheduleDue, PublishHeld,
	// A request for information or a review that closed unanswered is
	// news to the organisation too, not only to the request's callback.
	CollectionExpired, ReviewExpired,
	ExecutionMismatch,
	MandateGranted, MandateRevoked, MandateExhausted,
}

// allKinds is the webhook catalogue followed by the test kind.
var allKinds = append(slices.Clone(webhookKinds), WebhookTest)

// callbackKinds is table 6.3: what each request type's callback receives.
var callbackKinds = map[string][]string{
	RequestApproval:   {ApprovalApproved, ApprovalRejected, ApprovalExpired, ApprovalQuestion},
	RequestReview:     {ReviewApproved, ReviewChangesRequested, ReviewExpired},
	RequestCollection: {CollectionCompleted, CollectionExpired},
}

// notYetEmitted are the kinds the interface names for features Assent does
// not have yet (reviews, gates, reports and what hangs off them). They
// stay valid, so an endpoint
// may subscribe to them ahead of time, but nothing sends them; the admin
// pages say so. Take a kind off this list in the change that first emits
// it: TestNotYetEmittedMatchesTheCode fails until then.
var notYetEmitted = []string{}

// NotYetEmitted returns the known kinds nothing sends yet, in catalogue
// order. It is a copy.
func NotYetEmitted() []string { return slices.Clone(notYetEmitted) }

// IsEmitted reports whether kind is a known kind that Assent sends today.
func IsEmitted(kind string) bool { return Valid(kind) && !slices.Contains(notYetEmitted, kind) }

// Kinds returns every event kind in a stable order. It is a copy, so
// callers may keep or change it.
func Kinds() []string { return slices.Clone(allKinds) }

// WebhookKinds returns the kinds an organisation webhook can subscribe to,
// in the catalogue's order (docs/webhooks.md).
func WebhookKinds() []string { return slices.Clone(webhookKinds) }

// Valid reports whether kind is a known event kind.
func Valid(kind string) bool { return slices.Contains(allKinds, kind) }

// IsWebhookEvent reports whether kind is in the organisation webhook
// catalogue.
func IsWebhookEvent(kind string) bool { return slices.Contains(webhookKinds, kind) }

// CallbackEvents returns the kinds sent to a request's callbackUrl for
// requestType, or nil for an unknown type.
func CallbackEvents(requestType string) []string {
	return slices.Clone(callbackKinds[requestType])
}

// PostedToSlack reports whether kind is posted to the channel of an
// organisation's Slack app (when it has one): the messages people decide
// from.
func PostedToSlack(kind string) bool { return kind == ApprovalRequested }

// IsCallbackEvent reports whether kind is sent to the callbackUrl of a
// request of requestType (table 6.3). Other kinds are audited or go to
// organisation webhooks only.
func IsCallbackEvent(requestType, kind string) bool {
	return slices.Contains(callbackKinds[requestType], kind)
}

// Subscribed reports whether an endpoint subscribed to events receives
// kind. An empty list means every event, including kinds added after the
// endpoint was created, so kind is deliberately not checked against the
// catalogue.
func Subscribed(events []string, kind string) bool {
	return len(events) == 0 || slices.Contains(events, kind)
}
