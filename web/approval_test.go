package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/web"
	"github.com/assent-hq/assent/worker"
)

// decidingSite is the pages with Temporal and the worker behind them, so
// decisions run the approval's workflow.
func decidingSite(t *testing.T, db *gorm.DB) *site {
	tc := temporalenv.Client(t)
	store := models.NewStore(db, testenv.Keys())
	s := newSiteWith(t, store, web.Deps{}, app.Deps{Temporal: tc})
	s.temporal = tc
	// The worker emails approvers into the site's mailbox, with links to it.
	temporalenv.Run(t, tc, worker.Deps{Store: store, BaseURL: s.url, Mailer: s.mailbox})
	return s
}

// started stores a as a new request and starts its workflow, as the API does.
func (s *site) started(t *testing.T, a *approvals.Approval) *approvals.Approval {
	t.Helper()
	a.OrganizationID, a.Requester, a.RequestedBy = s.org.ID, "key_test", "billing agent"
	if a.Risk == "" {
		a.Risk = models.RiskMedium
	}
	a.RequiredApprovals, a.ExpiresAt = 1, time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	ctx := context.Background()
	_, err := requests.Insert(ctx, s.store, approvals.Records(s.store), a, nil)
	require.NoError(t, err)
	require.NoError(t, s.services.Approvals.Start(ctx, a))
	return a
}

func TestApprovalPageDecides(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		ctx := context.Background()
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: `Pay <script>alert(1)</script>`,
			Metadata: models.RawJSON(`{"ticket":"T-9"}`)}, Description: "Invoice 7 from Initech.",
			ApproverIDs: []string{s.ada.ID}, Input: models.RawJSON(`{"amount":120,"currency":"EUR","rush":false,"big":12345678901234567890}`),
			EditableFields: []string{"amount", "rush"},
			Factors:        models.JSON[[]models.Factor]{V: []models.Factor{{Label: "Supplier verified", Status: "ok"}}},
			Links:          models.JSON[[]models.Link]{V: []models.Link{{Label: "Invoice", URL: "https://example.com/inv/7"}, {Label: "Bad", URL: "javascript:alert(1)"}}},
		})

		b := s.browser(t)
		r := b.get("/approvals/" + a.ID)
		assert.Equal(t, http.StatusSeeOther, r.status, "sign-in first")
		b.signIn(s, "ada@example.com")
		page := b.get("/approvals/" + a.ID)
		require.Equal(t, http.StatusOK, page.status, page.body)
		body := page.body
		assert.Contains(t, body, "Pay &lt;script&gt;alert(1)&lt;/script&gt;")
		assert.NotContains(t, body, "<script>")
		assert.Contains(t, body, "Invoice 7 from Initech.")
		assert.Contains(t, body, "Supplier verified")
		assert.Contains(t, body, `href="https://example.com/inv/7"`)
		assert.NotContains(t, body, `href="javascript:`, "unsafe links are neutralised")
		assert.Contains(t, body, `name="field.amount" value="120"`)
		assert.Contains(t, body, `<select id="field-rush" name="field.rush">`)
		assert.NotContains(t, body, `name="field.currency"`, "not editable")
		assert.Contains(t, body, "T-9")

		// No CSRF token, no decision.
		r = b.post("/approvals/"+a.ID+"/decision", url.Values{"decision": {"approve"}})
		assert.Equal(t, http.StatusForbidden, r.status)
		// A bad correction names the field and keeps the note.
		form := url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"}, "field.amount": {"a lot"}, "note": {"checked"}, "submission": {"s1"}}
		r = b.post("/approvals/"+a.ID+"/decision", form)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "Amount must be a number.")
		assert.Contains(t, r.body, ">checked</textarea>")
		assert.Contains(t, r.body, `name="field.amount" value="a lot" aria-invalid="true"`, "the correction is kept as typed, marked")

		form.Set("field.amount", "100")
		form.Set("submission", "s2")
		r = b.post("/approvals/"+a.ID+"/decision", form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/approvals/"+a.ID, r.header.Get("Location"))
		// The same submission again (a double click) changes nothing more.
		r = b.post("/approvals/"+a.ID+"/decision", form)
		assert.Equal(t, http.StatusSeeOther, r.status, r.body)

		done := b.get("/approvals/" + a.ID)
		assert.Contains(t, done.body, "By Ada Lovelace")
		assert.Contains(t, done.body, "<code>amount</code>: 120 → 100")
		approved := done.body[strings.Index(done.body, `id="approved-h"`):]
		approved = approved[:strings.Index(approved, "</dl>")]
		assert.Contains(t, approved, "<dt>amount</dt><dd>100</dd>", "what was approved, as corrected")
		assert.Contains(t, approved, "<dt>currency</dt><dd>EUR</dd>")
		assert.Contains(t, done.body, `<h2 id="input-h">Proposed input</h2>`)
		assert.NotContains(t, done.body, `value="approve"`, "no actions once settled")
		got, err := approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, "approved", got.Status)
		assert.JSONEq(t, `{"amount":100,"currency":"EUR","rush":false,"big":12345678901234567890}`, string(got.ApprovedInput))
		assert.Contains(t, string(got.ApprovedInput), "12345678901234567890", "untouched numbers stay exact")
		assert.Equal(t, "checked", *got.Note)

		// Concerns come first, and approving then needs a written reason.
		c := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Scrape profiles"}, ApproverIDs: []string{s.ada.ID},
			Concerns: models.JSON[[]models.Concern]{V: []models.Concern{{Principle: "privacy", Concern: "Personal data without consent"}}}})
		page = b.get("/approvals/" + c.ID)
		assert.Less(t, strings.Index(page.body, "Ethics concerns"), strings.Index(page.body, "<h1>"))
		r = b.post("/approvals/"+c.ID+"/decision", url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"}, "note": {"fine"}, "submission": {"s3"}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "needs a written reason")
		assert.Contains(t, r.body, ">fine</textarea>", "what was typed is kept")
		r = b.post("/approvals/"+c.ID+"/decision", url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"},
			"reason": {"Consent is on file."}, "submission": {"s4"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, b.get("/approvals/"+c.ID).body, "Reason: Consent is on file.")

		// A rejection with a note.
		rj := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Refund twice"}, ApproverIDs: []string{s.ada.ID}})
		page = b.get("/approvals/" + rj.ID)
		r = b.post("/approvals/"+rj.ID+"/decision", url.Values{"csrf": {page.csrf(t)}, "decision": {"reject"}, "note": {"Duplicate."}, "submission": {"s7"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, b.get("/approvals/"+rj.ID).body, "Note: Duplicate.")

		// A question to the requester.
		q := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Ask first"}, ApproverIDs: []string{s.ada.ID}})
		page = b.get("/approvals/" + q.ID)
		r = b.post("/approvals/"+q.ID+"/questions", url.Values{"csrf": {page.csrf(t)}, "question": {"Which <b>invoice</b>?"}, "submission": {"s5"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, b.get("/approvals/"+q.ID).body, "Which &lt;b&gt;invoice&lt;/b&gt;?")

		// Someone who is not an approver reads, and is refused if they try.
		bb := s.browser(t)
		bb.signIn(s, bob.Email)
		page = bb.get("/approvals/" + q.ID)
		require.Equal(t, http.StatusOK, page.status)
		assert.Contains(t, page.body, "only its approvers can decide it")
		assert.NotContains(t, page.body, `value="approve"`)
		r = bb.post("/approvals/"+q.ID+"/decision", url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"}, "submission": {"s6"}})
		assert.Equal(t, http.StatusForbidden, r.status, r.body)

		// Another organisation's request does not exist here.
		other, err := s.store.CreateOrganization(ctx, "Other", "")
		require.NoError(t, err)
		foreign := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: other.ID, Title: "Theirs",
			ExpiresAt: time.Now().Add(time.Hour), Requester: "key_x", RequestedBy: "x"}, Risk: models.RiskLow, RequiredApprovals: 1,
		}
		_, err = requests.Insert(ctx, s.store, approvals.Records(s.store), foreign, nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, b.get("/approvals/"+foreign.ID).status)
	})
}

// TestMultilineTextSurvivesThePage: a string with line breaks is offered
// in a text area (a text input would drop them), approving without
// touching it changes nothing, and a correction keeps its lines and spaces.
func TestMultilineTextSurvivesThePage(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		ctx := context.Background()
		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		approve := func(a *approvals.Approval, message string) *approvals.Approval {
			t.Helper()
			page := b.get("/approvals/" + a.ID)
			require.Equal(t, http.StatusOK, page.status, page.body)
			assert.Contains(t, page.body, "<textarea id=\"field-message\" name=\"field.message\" rows=\"3\">\n\nHi,\nDone.</textarea>",
				"a text area, with the value's own first newline kept")
			// As a browser sends a text area: line breaks as CRLF.
			r := b.post("/approvals/"+a.ID+"/decision", url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"},
				"field.message": {message}, "submission": {page.submission(t)}})
			require.Equal(t, http.StatusSeeOther, r.status, r.body)
			got, err := approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
			require.NoError(t, err)
			return got
		}
		input := models.RawJSON(`{"message":"\nHi,\nDone."}`)

		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Send the note"}, ApproverIDs: []string{s.ada.ID}, Input: input, EditableFields: []string{"message"}})
		got := approve(a, "\r\nHi,\r\nDone.")
		assert.Equal(t, "approved", got.Status)
		assert.JSONEq(t, string(input), string(got.ApprovedInput))
		assert.Empty(t, got.Changes.V, "untouched is unchanged")

		a = s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Send the note again"}, ApproverIDs: []string{s.ada.ID}, Input: input, EditableFields: []string{"message"}})
		got = approve(a, "  Hi,\r\n  Done, thanks.  ")
		assert.JSONEq(t, `{"message":"  Hi,\n  Done, thanks.  "}`, string(got.ApprovedInput), "kept as typed")
	})
}

// TestAGuestSeesOnlyWhatTheyAreAsked: a guest is an outsider; another
// request in the organisation is not found for them, while a member who
// is not an approver may read it.
func TestAGuestSeesOnlyWhatTheyAreAsked(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		guest, _, err := s.store.CreateGuest(ctx, s.org.ID, "gail@partner.example", "Gail")
		require.NoError(t, err)
		_, err = s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		hers := s.approval(t, "Share the report", models.RiskLow, time.Now().Add(time.Hour), s.ada.ID, guest.ID)
		internal := s.approval(t, "Salary review", models.RiskLow, time.Now().Add(time.Hour), s.ada.ID)

		g := s.browser(t)
		g.signIn(s, "gail@partner.example")
		assert.Equal(t, http.StatusOK, g.get("/approvals/"+hers.ID).status)
		r := g.get("/approvals/" + internal.ID)
		assert.Equal(t, http.StatusNotFound, r.status)
		assert.NotContains(t, r.body, "Salary review")

		bob := s.browser(t)
		bob.signIn(s, "bob@example.com")
		r = bob.get("/approvals/" + internal.ID)
		assert.Equal(t, http.StatusOK, r.status)
		assert.Contains(t, r.body, "only its approvers can decide it")
	})
}

// TestGatedApprovalPageHoldsCorrectionsToTheSchema: on an approval the
// action gate raised, the page refuses a correction its action's schema
// does not accept, naming the field by its label in a person's words and
// keeping what was typed, and applies one it does; the API keeps its
// machine message.
func TestGatedApprovalPageHoldsCorrectionsToTheSchema(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		action := "refund.create"
		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Refund a customer"}, ApproverIDs: []string{s.ada.ID}, Action: &action,
			Input: models.RawJSON(`{"amount":800,"currency":"EUR"}`), EditableFields: []string{"amount"},
			InputSchema: models.RawJSON(`{"type":"object","properties":{"amount":{"type":"number","maximum":1000}}}`)})
		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		page := b.get("/approvals/" + a.ID)
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "The action gate raised this for <code>refund.create</code>")

		form := url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"}, "field.amount": {"5000"}, "note": {"too much?"}, "submission": {"g1"}}
		r := b.post("/approvals/"+a.ID+"/decision", form)
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.Contains(t, r.body, `<p class="problem" role="alert" id="problem">Amount must be at most 1,000.</p>`)
		assert.NotContains(t, r.body, "corrections.amount", "no field path")
		assert.NotContains(t, r.body, "want 1,000", "no schema library wording")
		assert.Contains(t, r.body, ">too much?</textarea>", "what was typed is kept")
		assert.Contains(t, r.body, `name="field.amount" value="5000" aria-invalid="true" aria-describedby="problem"`,
			"the correction is kept as typed and marked")

		// The API, deciding the same way, keeps its own message.
		_, err := s.services.Approvals.Decide(context.Background(), s.org.ID, a.ID, "g-api", (&models.Person{Organization: s.org, Member: s.ada}).Actor(),
			approvals.Decision{Decision: "approve", Corrections: map[string]json.RawMessage{"amount": json.RawMessage("5000")}})
		e, ok := apperr.As(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, "corrections.amount", e.Field)
		assert.Contains(t, e.Message, "amount does not meet the action's schema: amount maximum: got 5,000, want 1,000")

		form.Set("field.amount", "600")
		form.Set("submission", "g2")
		r = b.post("/approvals/"+a.ID+"/decision", form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err := approvals.Records(s.store).Get(context.Background(), s.org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, "approved", got.Status)
		assert.JSONEq(t, `{"amount":600,"currency":"EUR"}`, string(got.ApprovedInput))
	})
}

// TestApprovalPageShowsItsExecution: once its executor reported running
// it, the approval's page says when it ran and how it ended, escaped; a
// mismatch is called out.
func TestApprovalPageShowsItsExecution(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		report := func(title string, mismatch bool) string {
			a := s.approval(t, title, models.RiskLow, time.Now().Add(time.Hour), s.ada.ID)
			testenv.Transition(t, s.store, approvals.Records(s.store), s.org.ID, a.ID, 1, func(a *approvals.Approval) { a.Status = "approved" })
			started := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
			require.NoError(t, s.store.Tx(ctx, func(ctx context.Context) error {
				return s.store.InsertReceipt(ctx, &models.Receipt{ID: ids.New(ids.Receipt), OrganizationID: s.org.ID,
					TokenID: "jti_" + a.ID, ApprovalID: &a.ID, Outcome: models.OutcomeFailed, InputSHA256: "a", ApprovedSHA256: "b",
					Mismatch: mismatch, StartedAt: started, FinishedAt: started.Add(time.Second), ReportedByID: "key_1", ReportedBy: "<b>runner</b>"})
			}))
			return a.ID
		}
		ran, other := report("Refund", false), report("Deploy", true)
		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		page := b.get("/approvals/" + ran)
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, `Ran at <time datetime="2026-01-02T15:04:05Z">`)
		assert.Contains(t, page.body, ", failed; reported by &lt;b&gt;runner&lt;/b&gt;.")
		assert.NotContains(t, page.body, "What ran is not what was approved")
		page = b.get("/approvals/" + other)
		assert.Contains(t, page.body, "What ran is not what was approved")
	})
}
