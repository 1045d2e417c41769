package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/testenv"
)

// chatServer is a local chat-completions endpoint (POST
// /v1/chat/completions) that keeps every request it received and answers
// with status and content.
type chatServer struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  []string
	auth    []string
	status  int
	content string
}

func newChatServer(t *testing.T) *chatServer {
	c := &chatServer{status: http.StatusOK}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		c.bodies, c.auth = append(c.bodies, string(b)), append(c.auth, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(c.status)
		answer, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": c.content}, "finish_reason": "stop"}}})
		_, _ = w.Write(answer)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *chatServer) received() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bodies...)
}

func (c *chatServer) answer(status int, content string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status, c.content = status, content
}

// TestModelScreen: with the screen on, each new approval is sent to the
// organisation's model without any restricted value, at any depth of its
// input or metadata; the model's concerns under known principles land on
// the approval, marked as the screen's, and approving then needs a
// reason. A screen that keeps failing lets the request go on, and its
// timeline says so. The key is sealed and never read back.
func TestModelScreen(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStackWith(t, db, netguard.DevLoopback)
		chat := newChatServer(t)
		for _, body := range []string{
			`{"name":"personal data","kind":"ethics","principle":"Privacy","concern":"Personal data leaves the company.","condition":"request.input.amount > 1000000"}`,
			`{"name":"identifiers","kind":"restricted","fields":["ssn","customer.iban"]}`,
		} {
			r := s.do(t, "POST", "/api/v1/admin/rules", s.adminKey, body, nil)
			require.Equal(t, 201, r.status, string(r.body))
		}
		r := s.do(t, "POST", "/api/v1/admin/rules", s.adminKey, `{"name":"Model Screen","kind":"ethics","principle":"p","concern":"c"}`, nil)
		assert.Equal(t, 400, r.status, "the screen's name is reserved")

		off := s.do(t, "GET", "/api/v1/admin/model-screen", s.adminKey, "", nil)
		require.Equal(t, 200, off.status, string(off.body))
		assert.Equal(t, false, off.decoded["enabled"], "off by default")
		bad := s.do(t, "PUT", "/api/v1/admin/model-screen", s.adminKey, `{"url":"ftp://llm.example/v1","model":"m1"}`, nil)
		assert.Equal(t, 400, bad.status)
		assert.Equal(t, "url", errField(bad, "field"), string(bad.body))
		put := s.do(t, "PUT", "/api/v1/admin/model-screen", s.adminKey,
			`{"url":"`+chat.URL+`/v1/chat/completions","model":"screen-1","apiKey":"sk-test-4242"}`, nil)
		require.Equal(t, 200, put.status, string(put.body))
		got := s.do(t, "GET", "/api/v1/admin/model-screen", s.adminKey, "", nil)
		assert.Equal(t, true, got.decoded["enabled"])
		assert.Equal(t, true, got.decoded["apiKeySet"])
		assert.NotContains(t, string(put.body)+string(got.body), "sk-test-4242", "the key is never read back")

		chat.answer(200, "```json\n"+`{"concerns":[{"principle":"privacy","concern":"The refund sends a customer's records abroad."},{"principle":"honesty","concern":"not a principle of this organisation"}]}`+"\n```")
		flow := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"refunds"}`, nil)
		require.Equal(t, 201, flow.status, string(flow.body))
		flowID := flow.decoded["id"].(string)
		restricted := []string{"SSN-TOP-111", "SSN-NESTED-222", "SSN-LIST-333", "IBAN-PATH-444", "SSN-META-555"}
		a := s.create(t, s.agentKey, `{"title":"Refund order 7","description":"Refund to the customer","approvers":["bob@example.com"],"flowId":"`+flowID+`",
			"factors":[{"label":"Paid","status":"ok"}],
			"input":{"amount":120,"ssn":"SSN-TOP-111","customer":{"name":"Ann","iban":"IBAN-PATH-444","id":{"ssn":"SSN-NESTED-222"}},"lines":[{"sku":"A1","ssn":"SSN-LIST-333"}]},
			"metadata":{"trace":{"deep":[{"ssn":"SSN-META-555"}]},"source":"crm"}}`)
		id := a["id"].(string)
		var concerns []any
		waitFor(t, func() bool {
			concerns, _ = s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil).decoded["concerns"].([]any)
			return len(concerns) > 0
		})
		assert.Equal(t, []any{map[string]any{"principle": "Privacy", "rule": "model screen",
			"concern": "The refund sends a customer's records abroad."}}, concerns, "unknown principles are dropped")

		sent := chat.received()
		require.Len(t, sent, 1)
		for _, v := range restricted {
			assert.NotContains(t, sent[0], v, "a restricted value reached the model")
		}
		for _, v := range []string{"Refund order 7", "Refund to the customer", "Paid", `\"name\":\"Ann\"`, `\"sku\":\"A1\"`, `\"source\":\"crm\"`, "Privacy", "screen-1"} {
			assert.Contains(t, sent[0], v)
		}
		assert.Equal(t, "Bearer sk-test-4242", chat.auth[0])
		assert.Contains(t, s.created(t, flowID, id), "the model screen raised 1 concern (Privacy)")

		r = s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.bobToken, `{"decision":"approve"}`, nil)
		assert.Equal(t, 400, r.status, string(r.body))
		assert.Equal(t, "reason", errField(r, "field"), string(r.body))
		r = s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.bobToken, `{"decision":"approve","reason":"The customer asked for it."}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "approved", r.decoded["status"])

		// A screen that keeps failing is asked three times, then left out.
		chat.answer(http.StatusInternalServerError, "")
		b := s.create(t, s.agentKey, `{"title":"Refund order 8","approvers":["bob@example.com"],"flowId":"`+flowID+`","input":{"ssn":"SSN-TOP-111"}}`)
		created := s.created(t, flowID, b["id"].(string))
		assert.Equal(t, "the model screen failed (the endpoint answered 500), so the request proceeds without it", created)
		sent = chat.received()
		assert.Len(t, sent, 4)
		for _, body := range sent {
			assert.NotContains(t, body, "SSN-TOP-111")
		}
		r = s.do(t, "POST", "/api/v1/approvals/"+b["id"].(string)+"/decision", s.bobToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Empty(t, r.decoded["concerns"])

		// Off, nothing is sent.
		require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/admin/model-screen", s.adminKey, "", nil).status)
		c := s.create(t, s.agentKey, `{"title":"Refund order 9","approvers":["bob@example.com"],"flowId":"`+flowID+`"}`)
		assert.Empty(t, s.created(t, flowID, c["id"].(string)))
		assert.Len(t, chat.received(), 4)
	})
}

// created waits for the "created" entry of approval id on its flow's
// timeline and returns its detail.
func (s *stack) created(t *testing.T, flowID, id string) string {
	t.Helper()
	var detail string
	waitFor(t, func() bool {
		timeline, _ := s.do(t, "GET", "/api/v1/flows/"+flowID, s.agentKey, "", nil).decoded["timeline"].([]any)
		for _, e := range timeline {
			if entry := e.(map[string]any); entry["subjectId"] == id && entry["action"] == "created" {
				detail, _ = entry["detail"].(string)
				return true
			}
		}
		return false
	})
	return strings.TrimSpace(detail)
}
