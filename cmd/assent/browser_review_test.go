package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/browsertest"
)

// reviewedReport is version 1 of the report under review.
const reviewedReport = `<!doctype html><html lang="en"><head><title>Q3 numbers</title></head>
<body><main><h1>Q3 numbers</h1><p id="claim">Revenue rose 4% in EMEA.</p></main></body></html>`

// TestBrowserReview is issue 18's review page on assent dev: an agent
// publishes a report shared with two demo people, asks both to review it
// (two approvals required) and publishes version 2; a reviewer opens the
// review from her inbox and reads version 1 in the frame, selecting a
// passage there fills the comment form's quote, and she approves; the API
// shows one approval so far.
func TestBrowserReview(t *testing.T) {
	apiURL, boot, _, stop := startDemo(t)
	defer stop()
	body, _ := json.Marshal(map[string]any{"title": "Q3 numbers", "slug": "q3", "content": reviewedReport,
		"audience": []string{"mia@example.com", "max@example.com"}})
	var rep map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reports", boot.AgentKey, string(body), &rep), "%v", rep)
	var rev struct{ ID, URL string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reviews", boot.AgentKey, `{"title":"Check the Q3 numbers","reportId":"q3",
		"instructions":"Totals first.","reviewers":["mia@example.com","max@example.com"],"requiredApprovals":2}`, &rev))
	assert.Equal(t, apiURL+"/reviews/"+rev.ID, rev.URL)
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
}
