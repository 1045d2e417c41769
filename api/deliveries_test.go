package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/sdk/go/webhook"
	"github.com/assent-hq/assent/worker"
)

// receiver is a local HTTP endpoint that verifies every delivery's
// signature on the raw body and answers with the next status in turn.
type receiver struct {
	t       *testing.T
	secret  string
	srv     *httptest.Server
	mu      sync.Mutex
	got     []received
	answers []int
}

type received struct {
	event, delivery, attempt string
	body                     map[string]any
	raw                      []byte
	verified                 error
}

func newReceiver(t *testing.T, secret string, answers ...int) *receiver {
	r := &receiver{t: t, secret: secret, answers: answers}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		rec := received{event: req.Header.Get(events.HeaderEvent), delivery: req.Header.Get(events.HeaderDelivery),
			attempt: req.Header.Get(events.HeaderAttempt), raw: raw}
		rec.verified = webhook.Verify(req.Header.Get(events.HeaderSignature), raw, r.secretNow(), time.Now(), webhook.DefaultTolerance)
		_ = json.Unmarshal(raw, &rec.body)
		r.mu.Lock()
		r.got = append(r.got, rec)
		status := 200
		if len(r.answers) > 0 {
			status, r.answers = r.answers[0], r.answers[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) secretNow() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.secret
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func (r *receiver) events() []string {
	var out []string
	for _, g := range r.received() {
		out = append(out, g.event)
	}
	return out
}

// deliveryStack is the stack with receivers on this machine admitted and
// the dispatcher running on a 100 ms retry unit.
func deliveryStack(t *testing.T, db *gorm.DB) *stack {
	s := newStackWith(t, db, netguard.DevLoopback)
	ctx, cancel := context.WithCancel(context.Background())
	d := &worker.Dispatcher{Client: s.tc, Store: s.store, Log: quiet, RetryUnit: 100 * time.Millisecond, Interval: 20 * time.Millisecond}
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

// TestCollectionEventsReachWebhookAndCallback: a collection's requested
// and completed events reach the webhook, and its signed callback carries
// collection.completed with requestType "collection".
func TestCollectionEventsReachWebhookAndCallback(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		ctx := context.Background()
		hook := newReceiver(t, "whsec_hook")
		_, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: hook.srv.URL + "/hook", Format: models.FormatJSON, Enabled: true, Secret: "whsec_hook"})
		require.NoError(t, err)
		cb := newReceiver(t, "")
		r := s.do(t, "POST", "/api/v1/collections", s.agentKey, fmt.Sprintf(`{"title":"Budget","respondents":["cy@example.com"],
			"questions":[{"id":"amount","prompt":"Amount","kind":"number"}],"callbackUrl":%q}`, cb.srv.URL+"/cb"), nil)
		require.Equal(t, 201, r.status, string(r.body))
		cb.mu.Lock()
		cb.secret = r.decoded["callbackSecret"].(string)
		cb.mu.Unlock()
		id := r.decoded["id"].(string)
		reply := s.do(t, "POST", "/api/v1/collections/"+id+"/replies", s.cyToken, `{"answers":{"amount":12345678901234567890},"submit":true}`, nil)
		require.Equal(t, 200, reply.status, string(reply.body))

		waitFor(t, func() bool { return len(hook.received()) == 2 && len(cb.received()) == 1 })
		assert.ElementsMatch(t, []string{"collection.requested", "collection.completed"}, hook.events())
		assert.Equal(t, []string{"collection.completed"}, cb.events())
		for _, g := range append(hook.received(), cb.received()...) {
			assert.NoError(t, g.verified, "signature of %s", g.event)
		}
		call := cb.received()[0]
		assert.Equal(t, "collection", call.body["requestType"])
		assert.Equal(t, id, call.body["requestId"])
		data := call.body["data"].(map[string]any)
		assert.Equal(t, "complete", data["status"])
		assert.Contains(t, string(call.raw), `"amount":12345678901234567890`, "the number keeps its exact text")

		// One left unanswered expires: the webhook and the callback hear of it.
		expires := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
		r = s.do(t, "POST", "/api/v1/collections", s.agentKey, fmt.Sprintf(`{"title":"Late","respondents":["cy@example.com"],
			"questions":[{"prompt":"Amount","kind":"number"}],"expiresAt":%q,"callbackUrl":%q}`, expires, cb.srv.URL+"/cb"), nil)
		require.Equal(t, 201, r.status, string(r.body))
		cb.mu.Lock()
		cb.secret = r.decoded["callbackSecret"].(string)
		cb.mu.Unlock()
		waitFor(t, func() bool { return len(hook.received()) == 4 && len(cb.received()) == 2 })
		assert.Contains(t, hook.events(), "collection.expired")
		assert.Equal(t, "collection.expired", cb.events()[1])
		assert.NoError(t, cb.received()[1].verified)
	})
}

// TestABurstReachesEveryEndpointOnce: the dispatcher starts a round's
// deliveries several at a time; every event still reaches every endpoint,
// and none twice.
func TestABurstReachesEveryEndpointOnce(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		ctx := context.Background()
		hooks := make([]*receiver, 3)
		for i := range hooks {
			hooks[i] = newReceiver(t, "whsec_burst")
			_, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: hooks[i].srv.URL + "/hook", Format: models.FormatJSON, Enabled: true, Secret: "whsec_burst"})
			require.NoError(t, err)
		}
		const burst = 12
		for i := range burst {
			s.create(t, s.agentKey, fmt.Sprintf(`{"title":"Refund %d","approvers":["cy@example.com"]}`, i))
		}
		for _, h := range hooks {
			waitFor(t, func() bool { return len(h.received()) >= burst })
		}
		time.Sleep(300 * time.Millisecond) // long enough for a doubled start to arrive
		for i, h := range hooks {
			ids := map[string]bool{}
			for _, g := range h.received() {
				assert.Equal(t, "approval.requested", g.event)
				assert.False(t, ids[g.delivery], "endpoint %d: delivery %s arrived twice", i, g.delivery)
				ids[g.delivery] = true
			}
			assert.Len(t, ids, burst, "endpoint %d", i)
		}
	})
}

func TestApprovalEventsReachWebhookAndCallback(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		ctx := context.Background()
		hook := newReceiver(t, "whsec_hook")
		_, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: hook.srv.URL + "/hook", Format: models.FormatJSON, Enabled: true, Secret: "whsec_hook"})
		require.NoError(t, err)
		cb := newReceiver(t, "")
		a := s.create(t, s.agentKey, fmt.Sprintf(`{"title":"Refund","approvers":["cy@example.com"],"input":{"amount":100},
			"editableFields":["amount"],"callbackUrl":%q}`, cb.srv.URL+"/cb"))
		cb.mu.Lock()
		cb.secret = a["callbackSecret"].(string)
		cb.mu.Unlock()

		r := s.do(t, "POST", "/api/v1/approvals/"+a["id"].(string)+"/decision", s.cyToken, `{"decision":"approve","corrections":{"amount":90}}`, nil)
		require.Equal(t, 200, r.status, string(r.body))

		waitFor(t, func() bool { return len(hook.received()) == 2 && len(cb.received()) == 1 })
		// Each delivery is its own workflow, retried on its own, so
		// two events dispatched in one round may arrive in either order.
		assert.ElementsMatch(t, []string{"approval.requested", "approval.approved"}, hook.events())
		assert.Equal(t, []string{"approval.approved"}, cb.events(), "callbacks carry table 6.3's events only")
		for _, g := range append(hook.received(), cb.received()...) {
			assert.NoError(t, g.verified, "signature of %s", g.event)
			assert.Equal(t, "1", g.attempt)
			assert.NotEmpty(t, g.delivery)
		}
		var approved map[string]any
		for _, g := range hook.received() {
			if g.event == "approval.approved" {
				approved = g.body
			}
		}
		require.NotNil(t, approved)
		assert.Equal(t, "approval.approved", approved["event"])
		data := approved["data"].(map[string]any)
		assert.Equal(t, map[string]any{"amount": 90.0}, data["approvedInput"])
		assert.Equal(t, []any{map[string]any{"field": "amount", "from": 100.0, "to": 90.0}}, data["changes"])
		call := cb.received()[0].body
		assert.Equal(t, "approval", call["requestType"])
		assert.Equal(t, a["id"], call["requestId"])
		assert.Equal(t, data, call["data"], "the callback carries the webhook's data")
	})
}

func TestDeliveryRetriesThenSucceedsWithOneDeliveryID(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		ctx := context.Background()
		hook := newReceiver(t, "whsec_x", 500, 503, 200)
		ep, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: hook.srv.URL, Format: models.FormatJSON,
			Events: []string{"approval.requested"}, Enabled: true, Secret: "whsec_x"})
		require.NoError(t, err)
		s.create(t, s.agentKey, `{"title":"x"}`)

		waitFor(t, func() bool { return len(hook.received()) == 3 })
		got := hook.received()
		assert.Equal(t, got[0].delivery, got[1].delivery)
		assert.Equal(t, got[0].delivery, got[2].delivery, "one delivery id across retries")
		assert.Equal(t, []string{"1", "2", "3"}, []string{got[0].attempt, got[1].attempt, got[2].attempt})
		waitFor(t, func() bool {
			ds, err := s.store.ListDeliveries(ctx, s.org.ID)
			return err == nil && len(ds) == 1 && ds[0].Status == models.DeliveryDelivered
		})
		d, err := s.store.GetDelivery(ctx, s.org.ID, got[0].delivery)
		require.NoError(t, err)
		attempts := d.AttemptList
		require.Len(t, attempts, 3)
		assert.Equal(t, []int{500, 503, 200}, []int{attempts[0].StatusCode, attempts[1].StatusCode, attempts[2].StatusCode})
		var fresh models.WebhookEndpoint
		require.NoError(t, s.store.DB().Where("id = ?", ep.ID).Take(&fresh).Error)
		assert.Zero(t, fresh.ConsecutiveFailures, "a success resets the count")
		time.Sleep(300 * time.Millisecond)
		assert.Len(t, hook.received(), 3, "nothing more after the success")
	})
}

func TestEndpointSwitchesOffAfterTwentyFailures(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		ctx := context.Background()
		answers := make([]int, 30)
		for i := range answers {
			answers[i] = 410 // not retried: one attempt per delivery
		}
		hook := newReceiver(t, "whsec_y", answers...)
		ep, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: hook.srv.URL, Format: models.FormatJSON,
			Events: []string{"approval.requested"}, Enabled: true, Secret: "whsec_y"})
		require.NoError(t, err)
		for range 20 {
			s.create(t, s.agentKey, `{"title":"x"}`)
		}
		var fresh models.WebhookEndpoint
		waitFor(t, func() bool {
			return s.store.DB().Where("id = ?", ep.ID).Take(&fresh).Error == nil && fresh.SwitchedOffAt != nil
		})
		assert.Equal(t, 20, fresh.ConsecutiveFailures)
		assert.Contains(t, fresh.LastError, "410")
		assert.Len(t, hook.received(), 20, "a 410 is not retried")

		s.create(t, s.agentKey, `{"title":"after"}`)
		waitFor(t, func() bool {
			ds, err := s.store.ListDeliveries(ctx, s.org.ID)
			return err == nil && len(ds) == 21 && ds[20].Status == models.DeliverySkipped
		})
		assert.Len(t, hook.received(), 20, "a switched-off endpoint gets nothing; the delivery is kept as skipped")
	})
}

// TestDeliveryLogResendAndRecover shows the delivery log, a resend under
// the same delivery id, and recovering what a switched-off endpoint missed.
func TestDeliveryLogResendAndRecover(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		ctx := context.Background()
		hook := newReceiver(t, "whsec_r", 410) // then 200s
		ep, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: hook.srv.URL, Format: models.FormatJSON,
			Events: []string{"approval.requested"}, Enabled: true, Secret: "whsec_r"})
		require.NoError(t, err)
		logURL := "/api/v1/admin/webhooks/" + ep.ID + "/deliveries"
		start := time.Now().Add(-time.Second)
		s.create(t, s.agentKey, `{"title":"one"}`)

		var log response
		waitFor(t, func() bool {
			log = s.do(t, "GET", logURL, s.adminKey, "", nil)
			rows, _ := log.decoded["data"].([]any)
			return len(rows) == 1 && rows[0].(map[string]any)["status"] == "failed"
		})
		d := log.decoded["data"].([]any)[0].(map[string]any)
		assert.Equal(t, "approval.requested", d["event"])
		assert.Equal(t, "webhook", d["target"])
		attempts := d["attempts"].([]any)
		require.Len(t, attempts, 1)
		first := attempts[0].(map[string]any)
		assert.Equal(t, 1.0, first["attempt"])
		assert.Equal(t, 410.0, first["statusCode"])
		assert.Contains(t, first["error"], "410")
		assert.NotEmpty(t, first["at"])
		assert.Contains(t, first, "latencyMs")
		id := d["id"].(string)

		// Resend: the same delivery id, numbered on from the first attempt.
		r := s.do(t, "POST", "/api/v1/admin/deliveries/"+id+"/resend", s.adminKey, "", nil)
		require.Equal(t, 202, r.status, string(r.body))
		assert.Equal(t, "pending", r.decoded["status"])
		assert.Equal(t, 1.0, r.decoded["sends"])
		waitFor(t, func() bool {
			return s.do(t, "GET", "/api/v1/admin/deliveries/"+id, s.adminKey, "", nil).decoded["status"] == "delivered"
		})
		got := hook.received()
		require.Len(t, got, 2)
		assert.Equal(t, []string{id, id}, []string{got[0].delivery, got[1].delivery})
		assert.Equal(t, []string{"1", "2"}, []string{got[0].attempt, got[1].attempt})
		assert.NoError(t, got[1].verified)
		assert.Len(t, s.do(t, "GET", "/api/v1/admin/deliveries/"+id, s.adminKey, "", nil).decoded["attempts"], 2)

		// A delivery still being attempted is not sent twice at once.
		require.NoError(t, s.store.DB().Model(&models.Delivery{}).Where("id = ?", id).Update("status", models.DeliveryPending).Error)
		r = s.do(t, "POST", "/api/v1/admin/deliveries/"+id+"/resend", s.adminKey, "", nil)
		assert.Equal(t, 409, r.status)
		assert.Equal(t, "invalid_state", errField(r, "code"))
		require.NoError(t, s.store.DB().Model(&models.Delivery{}).Where("id = ?", id).Update("status", models.DeliveryDelivered).Error)
		assert.Equal(t, 404, s.do(t, "POST", "/api/v1/admin/deliveries/dlv_nope/resend", s.adminKey, "", nil).status)
		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/admin/deliveries/"+id+"/resend", s.agentKey, "", nil).status)

		// While switched off, deliveries are kept as skipped; recover sends
		// them once the endpoint is on again.
		require.NoError(t, s.store.DB().Model(&models.WebhookEndpoint{}).Where("id = ?", ep.ID).Update("switched_off_at", time.Now()).Error)
		s.create(t, s.agentKey, `{"title":"two"}`)
		s.create(t, s.agentKey, `{"title":"three"}`)
		waitFor(t, func() bool {
			rows, _ := s.do(t, "GET", logURL+"?status=skipped", s.adminKey, "", nil).decoded["data"].([]any)
			return len(rows) == 2
		})
		body := `{"since":"` + start.UTC().Format(time.RFC3339) + `"}`
		r = s.do(t, "POST", "/api/v1/admin/webhooks/"+ep.ID+"/recover", s.adminKey, body, nil)
		assert.Equal(t, 409, r.status, "switched off: enable it first")
		assert.Contains(t, errField(r, "message"), "enable it first")
		for _, bad := range []string{`{}`, `{"since":"yesterday"}`, `{"since":"2999-01-01T00:00:00Z"}`} {
			r = s.do(t, "POST", "/api/v1/admin/webhooks/"+ep.ID+"/recover", s.adminKey, bad, nil)
			assert.Equal(t, 400, r.status, bad)
			assert.Equal(t, "since", errField(r, "field"), bad)
		}
		require.Equal(t, 200, s.do(t, "PATCH", "/api/v1/admin/webhooks/"+ep.ID, s.adminKey, `{"enabled":true}`, nil).status)
		r = s.do(t, "POST", "/api/v1/admin/webhooks/"+ep.ID+"/recover", s.adminKey, body, nil)
		require.Equal(t, 202, r.status, string(r.body))
		assert.Equal(t, 2.0, r.decoded["recovered"])
		waitFor(t, func() bool {
			rows, _ := s.do(t, "GET", logURL+"?status=delivered", s.adminKey, "", nil).decoded["data"].([]any)
			return len(rows) == 3
		})
		assert.Len(t, hook.received(), 4)
		r = s.do(t, "POST", "/api/v1/admin/webhooks/"+ep.ID+"/recover", s.adminKey, body, nil)
		assert.Equal(t, 0.0, r.decoded["recovered"], "nothing left to recover")

		assert.Equal(t, "status", errField(s.do(t, "GET", logURL+"?status=lost", s.adminKey, "", nil), "field"))
		assert.Equal(t, 404, s.do(t, "GET", "/api/v1/admin/webhooks/wh_nope/deliveries", s.adminKey, "", nil).status)
		paged := s.do(t, "GET", logURL+"?limit=2", s.adminKey, "", nil)
		assert.Len(t, paged.decoded["data"], 2)
		assert.NotEmpty(t, paged.decoded["nextCursor"])
	})
}

// TestChatFormatsAreDeliveredSigned sends an approval.requested event to a
// Slack and a Teams endpoint: each gets its native message with a button to
// the approval's page, still signed, and the admin API hides the address.
func TestChatFormatsAreDeliveredSigned(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		slack, teams := newReceiver(t, "whsec_s"), newReceiver(t, "whsec_t")
		for _, ep := range []struct {
			r      *receiver
			format string
		}{{slack, models.FormatSlack}, {teams, models.FormatTeams}} {
			r := s.do(t, "POST", "/api/v1/admin/webhooks", s.adminKey,
				fmt.Sprintf(`{"url":%q,"format":%q,"events":["approval.requested"]}`, ep.r.srv.URL+"/services/T000/B000/token", ep.format), nil)
			require.Equal(t, 201, r.status, string(r.body))
			assert.NotContains(t, r.decoded["url"], "token", "a chat webhook address is a credential")
			ep.r.mu.Lock()
			ep.r.secret = r.decoded["secret"].(string)
			ep.r.mu.Unlock()
		}
		a := s.create(t, s.agentKey, `{"title":"Pay <b>supplier</b>","risk":"high"}`)
		waitFor(t, func() bool { return len(slack.received()) == 1 && len(teams.received()) == 1 })
		page := "http://assent.test/approvals/" + a["id"].(string)

		sl := slack.received()[0]
		assert.NoError(t, sl.verified)
		assert.Equal(t, "approval.requested", sl.event)
		raw, _ := json.Marshal(sl.body)
		assert.Contains(t, sl.body["text"], "Approval requested")
		assert.Contains(t, string(raw), `"url":"`+page+`"`, "a button to the approval")
		assert.Contains(t, sl.body["text"], "&lt;b&gt;supplier", "Slack markup is escaped")

		tm := teams.received()[0]
		assert.NoError(t, tm.verified)
		assert.Equal(t, "message", tm.body["type"])
		card := tm.body["attachments"].([]any)[0].(map[string]any)
		assert.Equal(t, "application/vnd.microsoft.card.adaptive", card["contentType"])
		raw, _ = json.Marshal(card)
		assert.Contains(t, string(raw), `"Action.OpenUrl"`)
		assert.Contains(t, string(raw), `"url":"`+page+`"`)
	})
}

// TestReviewEventsReachWebhookAndCallback: a review's requested and
// settling events reach the webhook, and its signed callback carries
// review.changes_requested and review.expired with requestType "review";
// a verdict that does not settle it sends nothing.
func TestReviewEventsReachWebhookAndCallback(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		ctx := context.Background()
		hook := newReceiver(t, "whsec_hook")
		_, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: hook.srv.URL + "/hook", Format: models.FormatJSON,
			Enabled: true, Secret: "whsec_hook", Events: []string{"review.requested", "review.approved", "review.changes_requested", "review.expired"}})
		require.NoError(t, err)
		s.reviewable(t)
		cb := newReceiver(t, "")
		r := s.do(t, "POST", "/api/v1/reviews", s.agentKey, fmt.Sprintf(`{"title":"Q3","reportId":"q3","reviewers":["Finance"],
			"requiredApprovals":2,"callbackUrl":%q}`, cb.srv.URL+"/cb"), nil)
		require.Equal(t, 201, r.status, string(r.body))
		cb.mu.Lock()
		cb.secret = r.decoded["callbackSecret"].(string)
		cb.mu.Unlock()
		id := r.decoded["id"].(string)
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/reviews/"+id+"/verdict", s.cyToken, `{"verdict":"approved"}`, nil).status)
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/reviews/"+id+"/verdict", s.bobToken, `{"verdict":"changes_requested","note":"EMEA."}`, nil).status)

		waitFor(t, func() bool { return len(hook.received()) == 2 && len(cb.received()) == 1 })
		assert.ElementsMatch(t, []string{"review.requested", "review.changes_requested"}, hook.events())
		assert.Equal(t, []string{"review.changes_requested"}, cb.events())
		for _, g := range append(hook.received(), cb.received()...) {
			assert.NoError(t, g.verified, "signature of %s", g.event)
		}
		call := cb.received()[0]
		assert.Equal(t, "review", call.body["requestType"])
		assert.Equal(t, id, call.body["requestId"])
		data := call.body["data"].(map[string]any)
		assert.Equal(t, "changes_requested", data["status"])
		assert.Len(t, data["verdicts"], 2)

		expires := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
		r = s.do(t, "POST", "/api/v1/reviews", s.agentKey, fmt.Sprintf(`{"title":"Late","reportId":"q3","reviewers":["cy@example.com"],
			"expiresAt":%q,"callbackUrl":%q}`, expires, cb.srv.URL+"/cb"), nil)
		require.Equal(t, 201, r.status, string(r.body))
		cb.mu.Lock()
		cb.secret = r.decoded["callbackSecret"].(string)
		cb.mu.Unlock()
		waitFor(t, func() bool { return len(hook.received()) == 4 && len(cb.received()) == 2 })
		assert.Contains(t, hook.events(), "review.expired")
		assert.Equal(t, "review.expired", cb.events()[1])
		assert.NoError(t, cb.received()[1].verified)
	})
}
