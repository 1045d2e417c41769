package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/sdk/go/webhook"
)

// reviewedReport is version 1 of the report under review.
const reviewedReport = `<!doctype html><html lang="en"><head><title>Q3 numbers</title></head>
<body><main><h1>Q3 numbers</h1><p id="claim">Revenue rose 4% in EMEA.</p></main></body></html>`

// TestBrowserReview is issue 18's "done when" on assent dev: an agent
// publishes a report shared with two demo people, opens two threads on it,
// asks both people to review version 1 (two approvals required, with a
// callback) and publishes version 2; a reviewer opens the review from her
// inbox and reads version 1 in the frame, selects a passage there (which
// fills the comment form's quote), comments on it and approves; the other
// requests changes; the callback receiver verifies
// review.changes_requested, the agent's long-poll sees it, the revision
// brief quotes the passage, version 2 re-anchored one thread and outdated
// the other, and the report's analytics count both readers.
func TestBrowserReview(t *testing.T) {
	browsertest.Require(t)
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	var (
		mu       sync.Mutex
		secret   string
		callback []string
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct{ Event, RequestType string }
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		defer mu.Unlock()
		if err := webhook.Verify(r.Header.Get(events.HeaderSignature), raw, secret, time.Now(), webhook.DefaultTolerance); err != nil {
			callback = append(callback, "unverified "+body.Event+": "+err.Error())
			return
		}
		callback = append(callback, body.RequestType+" "+body.Event)
	}))
	defer recv.Close()
	apiURL, boot, _, stop := startDemo(t)
	defer stop()
	body, _ := json.Marshal(map[string]any{"title": "Q3 numbers", "slug": "q3", "content": reviewedReport,
		"audience": []string{"mia@example.com", "max@example.com"}})
	var rep map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reports", boot.AgentKey, string(body), &rep), "%v", rep)
	var kept, lost struct{ ID string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reports/q3/comments", boot.AgentKey, `{"body":"Add the quarter.","quote":"Q3 numbers"}`, &kept))
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reports/q3/comments", boot.AgentKey, `{"body":"Source?","quote":"rose 4%"}`, &lost))
	var rev struct{ ID, URL, CallbackSecret string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reviews", boot.AgentKey, fmt.Sprintf(`{"title":"Check the Q3 numbers","reportId":"q3",
		"instructions":"Totals first.","reviewers":["mia@example.com","max@example.com"],"requiredApprovals":2,"callbackUrl":%q}`, recv.URL+"/cb"), &rev))
	assert.Equal(t, apiURL+"/reviews/"+rev.ID, rev.URL)
	mu.Lock()
	secret = rev.CallbackSecret
	mu.Unlock()
	next, _ := json.Marshal(map[string]any{"content": strings.Replace(reviewedReport, "rose 4%", "fell 2%", 1)})
	var v2 map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reports/q3/versions", boot.AgentKey, string(next), &v2), "%v", v2)
	assert.Contains(t, devMail(t, apiURL, "mia@example.com", "Your review is needed: Check the Q3 numbers").Links, rev.URL)

	mia := browsertest.New(t)
	signInFromDevMail(t, mia, apiURL, "mia@example.com")
	assert.Contains(t, mia.Text("main"), "Check the Q3 numbers")
	mia.ClickAndWait(`a[href="/reviews/` + rev.ID + `"]`)
	assert.Contains(t, mia.Text("main"), "A newer version is live (version 2)")
	origin := frameOrigin(t, mia)

	// The frame is another site's, in a process of its own: its document
	// is read through its own target.
	var frame target.ID
	require.Eventually(t, func() bool {
		infos, err := chromedp.Targets(mia.Context())
		require.NoError(t, err)
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, origin+"/_assent/v/1/") {
				frame = info.TargetID
				return true
			}
		}
		return false
	}, 10*time.Second, 100*time.Millisecond, "the frame opens version 1 on the report's origin")
	frameCtx, cancel := chromedp.NewContext(mia.Context(), chromedp.WithTargetID(frame), chromedp.WithDetachOnCancel())
	defer cancel()
	var claim string
	require.Eventually(t, func() bool {
		var err error
		claim, err = chromedp.Run(frameCtx, chromedp.Evaluate[string](`(document.getElementById("claim") || {}).textContent || ""`))
		return err == nil && claim != ""
	}, 10*time.Second, 100*time.Millisecond)
	assert.Equal(t, "Revenue rose 4% in EMEA.", claim, "the frame shows version 1, not the live version 2")

	// Selecting the passage in the report fills the page's quote.
	_, err := chromedp.Run(frameCtx, chromedp.Evaluate[bool](`(() => {
		const range = document.createRange();
		range.selectNodeContents(document.getElementById("claim"));
		getSelection().removeAllRanges();
		getSelection().addRange(range);
		return true;
	})()`))
	require.NoError(t, err)
	var quote string
	require.Eventually(t, func() bool {
		quote, err = chromedp.Run(mia.Context(), chromedp.Evaluate[string](`document.getElementById("quote").value`))
		return err == nil && quote != ""
	}, 10*time.Second, 100*time.Millisecond, "the selection never reached the quote")
	assert.Equal(t, "Revenue rose 4% in EMEA.", quote)
	// A message from any other window, here the app's own, is ignored.
	_, err = chromedp.Run(mia.Context(), chromedp.Evaluate[bool](`postMessage({type: "assent:selection", text: "forged"}, "*"), true`))
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	quote, err = chromedp.Run(mia.Context(), chromedp.Evaluate[string](`document.getElementById("quote").value`))
	require.NoError(t, err)
	assert.Equal(t, "Revenue rose 4% in EMEA.", quote)
	mia.CheckAccessibility("the review page")

	// She comments on the passage she selected.
	mia.Run(chromedp.SendKeys(chromedp.CSS("#comment-body"), "Is this before currency effects?"))
	mia.ClickAndWait(`#comment-form button[type="submit"]`)
	assert.Contains(t, mia.Text("#threads"), "Revenue rose 4% in EMEA.")
	assert.Contains(t, mia.Text("#threads"), "Is this before currency effects?")
	mia.CheckAccessibility("the review page with a thread")

	mia.Run(chromedp.SendKeys(chromedp.CSS("#note"), "The EMEA figure checks out."))
	mia.ClickAndWait(`button[value="approved"]`)
	assert.Contains(t, mia.Text("main"), "You approved this version.")
	assert.Contains(t, mia.Text("main"), "1 of 2 required")
	mia.CheckAccessibility("the review page after a verdict")

	var got struct {
		Status         string
		ApprovalsSoFar int
		Verdicts       []struct{ Verdict, Note string }
	}
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/reviews/"+rev.ID, boot.AgentKey, &got))
	assert.Equal(t, "open", got.Status)
	assert.Equal(t, 1, got.ApprovalsSoFar, fmt.Sprintf("%+v", got))
	require.Len(t, got.Verdicts, 1)
	assert.Equal(t, "The EMEA figure checks out.", got.Verdicts[0].Note)

	// The agent waits; the other reviewer requests changes from his page.
	polled, endPoll := longPoll[map[string]any](t, apiURL+"/api/v1/reviews/"+rev.ID+"?wait=60s", boot.AgentKey)
	defer endPoll()
	max := browsertest.New(t)
	signInFromDevMail(t, max, apiURL, "max@example.com")
	max.Navigate(rev.URL)
	max.Run(chromedp.SendKeys(chromedp.CSS("#note"), "Say which currency."))
	max.ClickAndWait(`button[value="changes_requested"]`)
	assert.Contains(t, max.Text("main"), "You requested changes.")
	out := polled()
	assert.Equal(t, "changes_requested", out["status"], "the agent's long-poll sees the verdict")
	assert.EqualValues(t, 1, out["threadCount"])
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(callback) > 0
	}, 60*time.Second, 200*time.Millisecond, "the callback never came")
	mu.Lock()
	assert.Equal(t, []string{"review review.changes_requested"}, callback, "the receiver verified the signed callback")
	mu.Unlock()

	var brief struct {
		Text           string
		BasedOnVersion int
	}
	require.Equal(t, 200, postJSON(t, apiURL+"/api/v1/reports/q3/revision-briefs", boot.AgentKey, `{}`, &brief))
	assert.Equal(t, 2, brief.BasedOnVersion)
	assert.Contains(t, brief.Text, `Passage: "Revenue rose 4% in EMEA."`)
	assert.Contains(t, brief.Text, "Is this before currency effects?")
	assert.Contains(t, brief.Text, "changes requested by")
	var threads struct {
		Data []struct {
			ID     string
			Anchor struct {
				State   string
				Version int
			}
		}
	}
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/reports/q3/comments", boot.AgentKey, &threads))
	anchors := map[string]string{}
	for _, th := range threads.Data {
		anchors[th.ID] = fmt.Sprintf("%s %d", th.Anchor.State, th.Anchor.Version)
	}
	assert.Equal(t, "anchored 2", anchors[kept.ID], "version 2 still holds the passage")
	assert.Equal(t, "outdated 1", anchors[lost.ID], "version 2 lost it")

	var analytics struct {
		UniqueReaders   int
		InternalReaders int
	}
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/reports/q3/analytics", boot.AgentKey, &analytics))
	assert.Equal(t, 2, analytics.UniqueReaders, "both reviewers read the report")
	assert.Equal(t, 2, analytics.InternalReaders)
}
