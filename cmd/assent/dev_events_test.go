package main

import (
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

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/sdk/go/webhook"
)

// TestDevDeliversEveryTransition is issue 4's "done when" on `assent dev`
// with a local receiver admitted: every approval transition reaches the
// organisation webhook, table 6.3's reach each request's callback, and
// every delivery verifies.
func TestDevDeliversEveryTransition(t *testing.T) {
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	t.Setenv("ASSENT_DEV_RETRY_UNIT", "1s")
	type got struct{ event, request string }
	var (
		mu            sync.Mutex
		hooks, calls  []got
		secrets       = map[string]string{} // request id → callback secret
		webhookSecret string
		unverified    []string
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Event     string
			RequestID string
			Data      struct{ ID string }
		}
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		defer mu.Unlock()
		secret := webhookSecret
		if r.URL.Path == "/cb" {
			secret = secrets[body.RequestID]
			calls = append(calls, got{body.Event, body.RequestID})
		} else {
			hooks = append(hooks, got{body.Event, body.Data.ID})
		}
		if err := webhook.Verify(r.Header.Get(events.HeaderSignature), raw, secret, time.Now(), webhook.DefaultTolerance); err != nil {
			unverified = append(unverified, r.URL.Path+" "+body.Event+": "+err.Error())
		}
	}))
	defer recv.Close()

	apiURL, boot, admin, stop := startDemo(t)
	defer stop()
	var ep map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/webhooks", boot.AdminKey, fmt.Sprintf(`{"url":%q}`, recv.URL+"/hook"), &ep))
	mu.Lock()
	webhookSecret = ep["secret"].(string)
	mu.Unlock()

	create := func(extra string) string {
		var a map[string]any
		require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey,
			fmt.Sprintf(`{"title":"t","approvers":[%q],"callbackUrl":%q%s}`, admin.Email, recv.URL+"/cb", extra), &a))
		mu.Lock()
		secrets[a["id"].(string)] = a["callbackSecret"].(string)
		mu.Unlock()
		return a["id"].(string)
	}
	act := func(id, path, token, body string, want int) map[string]any {
		var out map[string]any
		require.Eventually(t, func() bool { // the first try may come before the workflow's first step
			return postJSON(t, apiURL+"/api/v1/approvals/"+id+path, token, body, &out) == want
		}, 15*time.Second, 100*time.Millisecond, "%s %s: %v", path, body, out)
		return out
	}

	asked := create("")
	q := act(asked, "/questions", admin.Token, `{"question":"Which invoice?"}`, 201)
	act(asked, "/answers", boot.AgentKey, fmt.Sprintf(`{"questionId":%q,"answer":"INV-7"}`, q["questionId"]), 200)
	act(asked, "/decision", admin.Token, `{"decision":"approve"}`, 200)
	rejected := create("")
	act(rejected, "/decision", admin.Token, `{"decision":"reject","note":"no"}`, 200)
	expired := create(fmt.Sprintf(`,"expiresAt":%q`, time.Now().Add(3*time.Second).UTC().Format(time.RFC3339Nano)))

	wantHooks := []got{
		{"approval.requested", asked}, {"approval.question", asked}, {"approval.answered", asked}, {"approval.approved", asked},
		{"approval.requested", rejected}, {"approval.rejected", rejected},
		{"approval.requested", expired}, {"approval.expired", expired},
	}
	wantCalls := []got{{"approval.question", asked}, {"approval.approved", asked}, {"approval.rejected", rejected}, {"approval.expired", expired}}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(hooks) >= len(wantHooks) && len(calls) >= len(wantCalls)
	}, 60*time.Second, 100*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // nothing more may come
	mu.Lock()
	defer mu.Unlock()
	assert.ElementsMatch(t, wantHooks, hooks, "every transition reaches the webhook once")
	assert.ElementsMatch(t, wantCalls, calls, "table 6.3's events reach the callback once")
	assert.Empty(t, unverified)
}
