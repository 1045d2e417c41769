package main

import (
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
	"github.com/assent-hq/assent/internal/testenv/assentbin"
	"github.com/assent-hq/assent/sdk/go/webhook"
)

// TestDeliveryOutlivesAKilledProcess kills `assent dev` (worker, dispatcher
// and Temporal server in one process) with SIGKILL between two attempts of
// a delivery. After a restart on the same data, the retry arrives with the
// same delivery id and the next attempt number: nothing is lost.
func TestDeliveryOutlivesAKilledProcess(t *testing.T) {
	t.Parallel()
	type hit struct{ delivery, attempt string }
	var (
		mu     sync.Mutex
		hits   []hit
		secret string
		badSig error
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if err := webhook.Verify(r.Header.Get(events.HeaderSignature), raw, secret, time.Now(), webhook.DefaultTolerance); err != nil {
			badSig = err
		}
		hits = append(hits, hit{r.Header.Get(events.HeaderDelivery), r.Header.Get(events.HeaderAttempt)})
		if len(hits) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer recv.Close()
	received := func() []hit {
		mu.Lock()
		defer mu.Unlock()
		return append([]hit(nil), hits...)
	}

	bin := assentbin.For(t)
	dataDir := t.TempDir()
	env := []string{"ASSENT_DEV_RETRY_UNIT=2s", "ASSENT_DEV_ALLOW_LOOPBACK=1"}
	args := []string{"dev", "--data-dir", dataDir, "--http-addr", "127.0.0.1:" + freePort(t),
		"--temporal-port", freePort(t), "--temporal-ui-port", "-1", "--log-level", "warn"}
	startDevProc := func() (*proc, string) {
		p := start(t, bin, env, args...)
		require.Eventually(t, func() bool { return apiLine.MatchString(p.out.String()) }, 120*time.Second, 100*time.Millisecond,
			"assent dev did not start; output:\n%s", p.out.String())
		return p, apiLine.FindStringSubmatch(p.out.String())[1]
	}

	p, apiURL := startDevProc()
	boot, err := loadBootstrap(dataDir)
	require.NoError(t, err)
	var ep map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/webhooks", boot.AdminKey,
		fmt.Sprintf(`{"url":%q,"events":["approval.requested"]}`, recv.URL), &ep))
	mu.Lock()
	secret = ep["secret"].(string)
	mu.Unlock()
	var created map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey, `{"title":"Survive a crash"}`, &created))

	logURL := apiURL + "/api/v1/admin/webhooks/" + ep["id"].(string) + "/deliveries"
	require.Eventually(t, func() bool {
		var log struct {
			Data []struct{ Attempts []any }
		}
		return getJSON(t, logURL, boot.AdminKey, &log) == 200 && len(log.Data) == 1 && len(log.Data[0].Attempts) == 1
	}, 30*time.Second, 50*time.Millisecond, "the first attempt is recorded")

	require.NoError(t, p.cmd.Process.Kill())
	<-p.done
	time.Sleep(3 * time.Second) // the retry falls due while nothing runs
	require.Len(t, received(), 1)

	p, apiURL = startDevProc()
	require.Eventually(t, func() bool { return len(received()) >= 2 }, 60*time.Second, 100*time.Millisecond,
		"the retry arrives after the restart; output:\n%s", p.out.String())
	got := received()
	assert.Len(t, got, 2)
	assert.Equal(t, got[0].delivery, got[1].delivery, "one delivery id across the crash")
	assert.Equal(t, []string{"1", "2"}, []string{got[0].attempt, got[1].attempt})
	mu.Lock()
	assert.NoError(t, badSig)
	mu.Unlock()
	require.Eventually(t, func() bool {
		var d map[string]any
		return getJSON(t, apiURL+"/api/v1/admin/deliveries/"+got[0].delivery, boot.AdminKey, &d) == 200 && d["status"] == "delivered"
	}, 10*time.Second, 100*time.Millisecond)
	p.stop(t)
}
