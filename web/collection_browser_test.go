package web_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// TestBrowserAnswersACollection: in a real browser, a respondent fills in
// one input of every kind, saves a draft, submits, and reads their reply;
// each page is accessible.
func TestBrowserAnswersACollection(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	db := testenv.OpenDB(t, "sqlite")
	s, service := answeringSite(t, db)
	ctx := context.Background()
	qs, err := questions.Define([]questions.Input{
		{ID: "name", Prompt: "Contact name", Kind: questions.Text, Help: "Who signs the order."},
		{ID: "story", Prompt: "Anything we should know", Kind: questions.LongText, Required: new(bool)},
		{ID: "budget", Prompt: "Budget in EUR", Kind: questions.Number},
		{ID: "start", Prompt: "Start date", Kind: questions.Date},
		{ID: "vendor", Prompt: "Vendor", Kind: questions.Choice, Options: []string{"Acme", "Globex"}},
		{ID: "regions", Prompt: "Regions", Kind: questions.MultiChoice, Options: []string{"EU", "US", "APAC"}},
		{ID: "ok", Prompt: "Go ahead?", Kind: questions.Boolean},
	})
	require.NoError(t, err)
	due := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: s.org.ID, Title: "Vendor details for PO 77",
		ExpiresAt: time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second),
		Requester: "key_test", RequestedBy: "purchasing agent"}, Description: "For the purchase order.",
		Questions: models.JSON[[]questions.Question]{V: qs}, Respondents: []string{"ada@example.com"}, RespondentIDs: []string{s.ada.ID},
		RequiredResponses: 1, DueAt: &due,
	}
	_, err = requests.Insert(ctx, s.store, collections.Records(s.store), c, nil)
	require.NoError(t, err)
	require.NoError(t, service.Start(ctx, c))
	shots := shotsDir(t)

	b := browsertest.New(t)
	browserSignIn(t, s, b, "ada@example.com")
	b.ClickAndWait(`a[href="/collections/` + c.ID + `"]`)
	b.CheckAccessibility("the answer form")
	b.Run(
		chromedp.SendKeys(chromedp.CSS(`#q-name`), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.CSS(`#q-budget`), "12000"),
		chromedp.Click(chromedp.CSS(`input[name="answer.regions"][value="EU"]`)),
	)
	b.ClickAndWait(`button[value="draft"]`)
	assert.Contains(t, b.Text("main"), "Your draft is saved")
	b.Run(
		chromedp.SetValue(chromedp.CSS(`#q-start`), "2027-01-31"),
		chromedp.Click(chromedp.CSS(`input[name="answer.vendor"][value="Globex"]`)),
		chromedp.Click(chromedp.CSS(`input[name="answer.ok"][value="true"]`)),
	)
	b.Screenshot(filepath.Join(shots, "collection.png"))
	b.ClickAndWait(`button[value="submit"]`)
	text := b.Text("main")
	assert.Contains(t, text, "Your reply")
	assert.Contains(t, text, "12000")
	assert.Contains(t, text, "Globex")
	b.CheckAccessibility("the submitted reply")
	b.Screenshot(filepath.Join(shots, "collection-replied.png"))

	got, err := collections.Records(s.store).Get(ctx, s.org.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, "complete", got.Status)
	require.Len(t, got.Replies.V, 1)
	answers := got.Replies.V[0].Answers
	assert.Equal(t, `"Ada Lovelace"`, string(answers["name"]))
	assert.Equal(t, "12000", string(answers["budget"]))
	assert.Equal(t, `"2027-01-31"`, string(answers["start"]))
	assert.JSONEq(t, `["EU"]`, string(answers["regions"]))
	assert.Equal(t, "true", string(answers["ok"]))

	// Settled, it is in Ada's history, which links back to the reply.
	b.ClickAndWait(`nav a[href="/history"]`)
	entry := b.Text(`li:has(a[href="/collections/` + c.ID + `"])`)
	assert.Contains(t, entry, "Request for information requested by purchasing agent")
	assert.Contains(t, entry, "complete")
	b.CheckAccessibility("the history")
	b.Screenshot(filepath.Join(shots, "history.png"))
	b.ClickAndWait(`a[href="/collections/` + c.ID + `"]`)
	assert.Contains(t, b.Text("main"), "Your reply")
}
