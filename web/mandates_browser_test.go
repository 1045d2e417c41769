package web_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/testenv"
)

// TestBrowserGrantsAndRevokesAMandate: in a real browser, the standing
// approval's terms show only once it is ticked (no script); approving
// with it lands on the new mandate on the Mandates page, which allows the
// next similar request, and revoking it there ends it. Each page passes
// the accessibility check.
func TestBrowserGrantsAndRevokesAMandate(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	db := testenv.OpenDB(t, "sqlite")
	s := newMandateSite(t, db)
	a := s.raise(t, `{"amount":500,"currency":"EUR","customer":"cus_1"}`)
	shots := shotsDir(t)

	b := browsertest.New(t)
	b.Run(chromedp.EmulateViewport(1280, 900))
	browserSignIn(t, s.site, b, "bob@example.com")
	b.Navigate(s.url + "/approvals/" + a.ID)
	terms := `getComputedStyle(document.querySelector(".mandate-terms")).display`
	assert.Equal(t, "none", eval[string](t, b, terms), "folded until ticked")
	b.CheckAccessibility("the approval page offering a standing approval")
	b.Run(chromedp.Click(chromedp.CSS("#mandate")))
	assert.NotEqual(t, "none", eval[string](t, b, terms), "shown once ticked")
	assert.Equal(t, `input.amount <= 500 && input.currency == "EUR" && input.customer == "cus_1"`,
		eval[string](t, b, `document.querySelector("#mandate-condition").value`))
	b.CheckAccessibility("the approval page with a standing approval's terms")

	// Narrowed to euros, three a day.
	b.Run(chromedp.SetValue(chromedp.CSS("#mandate-condition"), `input.currency == "EUR" && input.amount <= 1000`),
		chromedp.SetValue(chromedp.CSS("#mandate-count"), "3"),
		chromedp.SendKeys(chromedp.CSS("#mandate-note"), "While the refund queue is long."))
	b.Screenshot(filepath.Join(shots, "approval-mandate.png"))
	b.ClickAndWait(`button[value="approve"]`)
	assert.Contains(t, b.Location(), "/mandates?done=mandate-granted#mdt_")
	id := eval[string](t, b, `document.querySelector(":target").id`)
	assert.True(t, strings.HasPrefix(id, "mdt_"), "the new mandate is the page's target: %q", id)
	assert.Contains(t, b.Text("main .notice"), "You approved the request")
	card := b.Text("li:target")
	assert.Contains(t, card, "refund.create")
	assert.Contains(t, card, "3 requests in any 24 hours")
	assert.Contains(t, card, "refund agent (")
	assert.Contains(t, card, "While the refund queue is long.")
	assert.Equal(t, "rgb(164, 22, 26)", eval[string](t, b, `getComputedStyle(document.querySelector("li:target button.danger")).color`),
		"Revoke looks destructive")
	b.CheckAccessibility("the Mandates page")
	b.Screenshot(filepath.Join(shots, "mandates.png"))

	// It allows the next similar request; the page counts it.
	assert.Equal(t, "allowed", s.check(t, `{"amount":800,"currency":"EUR","customer":"cus_2"}`).Check.Decision)
	b.Navigate(s.url + "/mandates#" + id)
	assert.Contains(t, b.Text("li:target"), "2 requests")

	// Revoked with Confirm ticked.
	b.Run(chromedp.Click(chromedp.CSS(`li:target input[name="confirm"]`)))
	b.ClickAndWait(`li:target button.danger`)
	assert.Contains(t, b.Location(), "/mandates?done=mandate-revoked#"+id)
	assert.Contains(t, b.Text("main .notice"), "The standing approval was revoked")
	assert.Equal(t, "Revoked", b.Text("li:target .status"), "written out (capitalised by the stylesheet)")
	assert.Equal(t, 0, eval[int](t, b, `document.querySelectorAll("li:target button.danger").length`))
	b.CheckAccessibility("the Mandates page after a revocation")
	assert.NotNil(t, s.check(t, `{"amount":800,"currency":"EUR","customer":"cus_2"}`).Approval, "the next similar request asks a person")
}
