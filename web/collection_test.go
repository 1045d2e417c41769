package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/web"
	"github.com/assent-hq/assent/worker"
)

// answeringSite is the pages with Temporal and the worker behind them, so
// replies run the collection's workflow.
func answeringSite(t *testing.T, db *gorm.DB) (*site, *collections.Service) {
	tc := temporalenv.Client(t)
	store := models.NewStore(db, testenv.Keys())
	s := newSiteWith(t, store, web.Deps{}, app.Deps{Temporal: tc})
	temporalenv.Run(t, tc, worker.Deps{Store: store, BaseURL: s.url, Mailer: s.mailbox})
	return s, s.services.Collections
}

// TestCollectionPageAnswers: a respondent finds the request in their
// inbox, saves a draft that comes back, is told which answer is wrong
// in a person's words, naming the question by its prompt (keeping what
// they typed), submits, and then sees their reply read-only;
// someone not asked sees no form.
func TestCollectionPageAnswers(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s, service := answeringSite(t, db)
		ctx := context.Background()
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		qs, err := questions.Define([]questions.Input{
			{ID: "name", Prompt: "Your <b>name</b>", Kind: questions.Text},
			{ID: "story", Prompt: "What happened", Kind: questions.LongText, Required: new(bool)},
			{ID: "budget", Prompt: "Budget", Kind: questions.Number},
			{ID: "start", Prompt: "Start", Kind: questions.Date},
			{ID: "vendor", Prompt: "Vendor", Kind: questions.Choice, Options: []string{"Acme", "Globex"}},
			{ID: "regions", Prompt: "Regions", Kind: questions.MultiChoice, Options: []string{"EU", "US", "APAC"}},
			{ID: "ok", Prompt: "Go ahead?", Kind: questions.Boolean},
		})
		require.NoError(t, err)
		due := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
		c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: s.org.ID, Title: "Vendor check",
			ExpiresAt: time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second), Requester: "key_test", RequestedBy: "purchasing agent"}, Questions: models.JSON[[]questions.Question]{V: qs},
			Respondents: []string{"ada@example.com"}, RespondentIDs: []string{s.ada.ID}, RequiredResponses: 1, DueAt: &due,
		}
		_, err = requests.Insert(ctx, s.store, collections.Records(s.store), c, nil)
		require.NoError(t, err)
		require.NoError(t, service.Start(ctx, c))

		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		inbox := b.get("/inbox")
		assert.Contains(t, inbox.body, `href="/collections/`+c.ID+`"`, "the inbox lists it")
		assert.Contains(t, inbox.body, "1 waiting on you")

		page := b.get("/collections/" + c.ID)
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "Your &lt;b&gt;name&lt;/b&gt;", "prompts are escaped")
		assert.Contains(t, page.body, `type="date" id="q-start"`)
		assert.Contains(t, page.body, `type="checkbox" name="answer.regions" value="APAC"`)
		assert.Contains(t, page.body, `type="radio" name="answer.ok" value="true"`)
		assert.Contains(t, page.body, "(optional)")

		form := url.Values{"csrf": {page.csrf(t)}, "submission": {page.submission(t)}, "action": {"draft"},
			"answer.name": {"Ada"}, "answer.regions": {"EU", "APAC"}}
		r := b.post("/collections/"+c.ID+"/replies", form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/collections/"+c.ID+"?saved=1", r.header.Get("Location"))
		page = b.get("/collections/" + c.ID + "?saved=1")
		assert.Contains(t, page.body, "Your draft is saved")
		assert.Contains(t, page.body, `name="answer.name" value="Ada"`, "the draft comes back")
		assert.Contains(t, page.body, `value="APAC" checked`)

		form = url.Values{"csrf": {page.csrf(t)}, "submission": {page.submission(t)}, "action": {"submit"},
			"answer.name": {"Ada"}, "answer.story": {"line one\r\nline two"}, "answer.budget": {"lots"}, "answer.start": {"2027-01-31"},
			"answer.vendor": {"Acme"}, "answer.regions": {"EU"}, "answer.ok": {"true"}}
		r = b.post("/collections/"+c.ID+"/replies", form)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "The answer to “Budget” must be a number, not text.", "the question is named by its prompt")
		assert.NotContains(t, r.body, "answers.budget", "not by the API's field path")
		assert.Contains(t, r.body, `name="answer.budget" value="lots"`, "what was typed stays")

		form.Set("answer.budget", "12345678901234567890")
		form.Set("submission", page.submission(t)+"-2")
		r = b.post("/collections/"+c.ID+"/replies", form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		done := b.get("/collections/" + c.ID)
		assert.Contains(t, done.body, "Your reply")
		assert.Contains(t, done.body, "12345678901234567890")
		assert.NotContains(t, done.body, `name="action"`, "no form once replied")
		got, err := collections.Records(s.store).Get(ctx, s.org.ID, c.ID)
		require.NoError(t, err)
		assert.Equal(t, "complete", got.Status)
		require.Len(t, got.Replies.V, 1)
		assert.Equal(t, "12345678901234567890", string(got.Replies.V[0].Answers["budget"]))
		assert.Equal(t, `"line one\nline two"`, string(got.Replies.V[0].Answers["story"]))
		assert.JSONEq(t, `["EU"]`, string(got.Replies.V[0].Answers["regions"]))
		assert.Equal(t, "true", string(got.Replies.V[0].Answers["ok"]))
		assert.NotContains(t, b.get("/inbox").body, c.ID, "answered requests leave the inbox")

		other := s.browser(t)
		other.signIn(s, bob.Email)
		seen := other.get("/collections/" + c.ID)
		require.Equal(t, http.StatusOK, seen.status)
		assert.NotContains(t, seen.body, `name="action"`, "someone not asked gets no form")
	})
}
