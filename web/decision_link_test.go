package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// mailTo waits for the worker's email to address whose subject starts
// with subject.
func (s *site) mailTo(t *testing.T, address, subject string) mail.Stored {
	t.Helper()
	var found mail.Stored
	require.Eventually(t, func() bool {
		for _, m := range s.mailbox.Messages() {
			if m.To[0] == address && strings.HasPrefix(m.Subject, subject) {
				found = m
				return true
			}
		}
		return false
	}, 15*time.Second, 20*time.Millisecond, "no email %q to %s", subject, address)
	return found
}

var decisionLink = regexp.MustCompile(`https?://\S+/approvals/apr_\w+/link/[\w-]+`)

// path is the part of an emailed link after the site's address.
func (s *site) path(t *testing.T, link string) string {
	t.Helper()
	require.True(t, strings.HasPrefix(link, s.url), "%s is not on this site", link)
	return strings.TrimPrefix(link, s.url)
}

func TestEmailedLinkDecidesALowRiskApprovalWithoutSignIn(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		ctx := context.Background()
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Pay <b>Initech</b>",
			Metadata: models.RawJSON(`{"ticket":"T-9","salary":"98000","customer":{"name":"Cy","ssn":"123-45-6789"}}`)}, Risk: models.RiskLow, Description: "Invoice 7.",
			ApproverIDs:    []string{s.ada.ID, bob.ID},
			Input:          models.RawJSON(`{"amount":120,"iban":"DE89 3704 0044 0532 0130 00","payee":{"name":"Initech","ssn":"999-00-1111"}}`),
			EditableFields: []string{"amount", "iban", "payee"}, RestrictedFields: []string{"iban", "salary", "ssn"},
		})

		// Each approver gets their own link; the email escapes the title.
		msg := s.mailTo(t, "bob@example.com", "Approval needed: Pay <b>Initech</b>")
		assert.Contains(t, msg.HTML, "Pay &lt;b&gt;Initech&lt;/b&gt;")
		assert.Contains(t, msg.Text, s.url+"/approvals/"+a.ID+"\n", "the page url")
		link := decisionLink.FindString(msg.Text)
		require.NotEmpty(t, link, msg.Text)
		adaLink := decisionLink.FindString(s.mailTo(t, "ada@example.com", "Approval needed").Text)
		assert.NotEqual(t, link, adaLink)

		// Opening the link signs nobody in and hides the restricted fields.
		anon := s.browser(t)
		page := anon.get(s.path(t, link))
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Equal(t, "no-referrer", page.header.Get("Referrer-Policy"))
		assert.Contains(t, page.body, "deciding as <strong>Bob</strong>")
		assert.Contains(t, page.body, "4 sensitive fields are hidden")
		assert.Contains(t, page.body, `name="field.amount" value="120"`)
		assert.NotContains(t, page.body, "DE89", "a restricted input field is hidden")
		assert.NotContains(t, page.body, "iban")
		assert.NotContains(t, page.body, "98000", "a restricted metadata field is hidden")
		assert.Contains(t, page.body, "T-9")
		// At every depth: inside metadata and inside an input field, which
		// is then shown but not editable, so no correction drops what the
		// person never saw.
		assert.NotContains(t, page.body, "123-45-6789")
		assert.NotContains(t, page.body, "999-00-1111")
		assert.Contains(t, page.body, "Initech")
		assert.NotContains(t, page.body, `name="field.payee"`)
		assert.NotContains(t, page.body, `action="/approvals/`+a.ID+`/questions"`, "no questions without signing in")
		assert.Nil(t, anon.cookie("assent_session"))

		// Without the form's token nothing happens.
		r := anon.post(s.path(t, link), url.Values{"decision": {"approve"}})
		assert.Equal(t, http.StatusForbidden, r.status)

		// A correction to a hidden field is ignored; a visible one applies.
		form := url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"}, "field.amount": {"100"}, "field.iban": {"XX00"}, "note": {"ok"}}
		r = anon.post(s.path(t, link), form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, s.path(t, link), r.header.Get("Location"))
		got, err := approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, "approved", got.Status)
		assert.Equal(t, bob.ID, *got.DecidedByID)
		assert.JSONEq(t, `{"amount":100,"iban":"DE89 3704 0044 0532 0130 00","payee":{"name":"Initech","ssn":"999-00-1111"}}`, string(got.ApprovedInput))

		// The link decided once; it now only shows how the request ended.
		done := anon.get(s.path(t, link))
		require.Equal(t, http.StatusOK, done.status)
		assert.Contains(t, done.body, "already been used")
		assert.Contains(t, done.body, "By Bob")
		assert.NotContains(t, done.body, `value="approve"`)
		r = anon.post(s.path(t, link), url.Values{"csrf": {page.csrf(t)}, "decision": {"reject"}})
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, r.body, "already been used")

		// Ada's link still opens, but the request is settled.
		late := anon.get(s.path(t, adaLink))
		assert.Contains(t, late.body, "By Bob")
		assert.NotContains(t, late.body, `value="approve"`)
	})
}

func TestHighRiskEmailAsksForSignIn(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Drop the table"}, Risk: models.RiskHigh, ApproverIDs: []string{s.ada.ID}})
		msg := s.mailTo(t, "ada@example.com", "Approval needed: Drop the table")
		assert.NotRegexp(t, decisionLink, msg.Text+msg.HTML, "no sign-in-free link for high risk")
		assert.Contains(t, msg.Text, "can only be decided after signing in")
		require.Equal(t, []string{s.url + "/approvals/" + a.ID}, msg.Links)

		r := s.browser(t).get(s.path(t, msg.Links[0]))
		assert.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "/signin?next=%2Fapprovals%2F"+a.ID, r.header.Get("Location"))

		// A link made for it anyway decides nothing without signing in.
		token, err := s.store.CreateDecisionLink(context.Background(), a.OrganizationID, a.ID, a.ExpiresAt, s.ada.ID)
		require.NoError(t, err)
		r = s.browser(t).get(paths.DecisionLink(a.ID, token))
		assert.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "/signin?next=%2Fapprovals%2F"+a.ID, r.header.Get("Location"))
	})
}

func TestForgedExpiredAndMisplacedLinksDecideNothing(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		b := s.browser(t)
		csrf := b.get("/signin").csrf(t)
		a := s.approval(t, "Renew domain", models.RiskLow, time.Now().Add(time.Hour), s.ada.ID)
		r := b.get("/approvals/" + a.ID + "/link/" + models.NewToken())
		assert.Equal(t, http.StatusNotFound, r.status)
		assert.Contains(t, r.body, "not valid")

		token, err := s.store.CreateDecisionLink(ctx, a.OrganizationID, a.ID, a.ExpiresAt, s.ada.ID)
		require.NoError(t, err)
		other := s.approval(t, "Other", models.RiskLow, time.Now().Add(time.Hour), s.ada.ID)
		assert.Equal(t, http.StatusNotFound, b.get("/approvals/"+other.ID+"/link/"+token).status, "a link opens only its own request")

		// A link ends with its request.
		require.NoError(t, db.Model(&models.DecisionLink{}).Where("approval_id = ?", a.ID).
			Update("expires_at", time.Now().Add(-time.Second)).Error)
		page := b.get("/approvals/" + a.ID + "/link/" + token)
		require.Equal(t, http.StatusOK, page.status)
		assert.Contains(t, page.body, "expired with its request")
		assert.NotContains(t, page.body, `value="approve"`)
		r = b.post("/approvals/"+a.ID+"/link/"+token, url.Values{"csrf": {csrf}, "decision": {"approve"}})
		assert.Equal(t, http.StatusConflict, r.status)

		// A deactivated approver's link no longer works.
		cy, err := s.store.CreateMember(ctx, s.org.ID, "cy@example.com", "", "")
		require.NoError(t, err)
		fresh := s.approval(t, "Fresh", models.RiskLow, time.Now().Add(time.Hour), cy.ID)
		cyToken, err := s.store.CreateDecisionLink(ctx, fresh.OrganizationID, fresh.ID, fresh.ExpiresAt, cy.ID)
		require.NoError(t, err)
		inactive := false
		testenv.ChangeMember(t, s.store, s.org.ID, cy.ID, func(m *models.Member) { m.Active = inactive })
		assert.Equal(t, http.StatusForbidden, b.get("/approvals/"+fresh.ID+"/link/"+cyToken).status)

		n, err := s.store.PurgeSignIns(ctx)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, n, int64(1), "expired decision links are purged")
		assert.Equal(t, http.StatusNotFound, b.get("/approvals/"+a.ID+"/link/"+token).status)
	})
}

func TestAGuestDecidesFromThePageAndTheAskerGetsTheAnswer(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		ctx := context.Background()
		guestsMay := true
		_, err := s.store.UpdateOrganization(ctx, s.org.ID, models.OrganizationChange{GuestsMayApprove: &guestsMay})
		require.NoError(t, err)
		guest, _, err := s.store.CreateGuest(ctx, s.org.ID, "gail@partner.example", "Gail")
		require.NoError(t, err)
		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Share the report"}, ApproverIDs: []string{s.ada.ID, guest.ID}})
		s.mailTo(t, "gail@partner.example", "Approval needed: Share the report")

		// Ada asks; the requester answers through the API's code path; Ada
		// is emailed the answer.
		ada := s.browser(t)
		ada.signIn(s, "ada@example.com")
		page := ada.get("/approvals/" + a.ID)
		r := ada.post("/approvals/"+a.ID+"/questions", url.Values{"csrf": {page.csrf(t)}, "question": {"Which report?"}, "submission": {"q1"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err := approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
		require.NoError(t, err)
		require.Len(t, got.Questions.V, 1)
		_, err = s.services.Approvals.Answer(ctx, s.org.ID, a.ID, "", models.Actor{ID: "key_test"},
			approvals.Answer{QuestionID: got.Questions.V[0].QuestionID, Answer: "The Q3 <numbers>"})
		require.NoError(t, err)
		answer := s.mailTo(t, "ada@example.com", "Answered: Share the report")
		assert.Contains(t, answer.Text, "Which report?")
		assert.Contains(t, answer.Text, "The Q3 <numbers>")
		assert.Contains(t, answer.HTML, "The Q3 &lt;numbers&gt;")

		// The guest signs in and decides on the page.
		g := s.browser(t)
		g.signIn(s, "gail@partner.example")
		page = g.get("/approvals/" + a.ID)
		require.Equal(t, http.StatusOK, page.status, page.body)
		r = g.post("/approvals/"+a.ID+"/decision", url.Values{"csrf": {page.csrf(t)}, "decision": {"reject"}, "note": {"Not yet."}, "submission": {"g1"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err = approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, "rejected", got.Status)
		assert.Equal(t, "Gail", *got.DecidedBy)

		// Once the organisation stops letting guests approve, the guest
		// can no longer decide a request that already names them.
		b := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Share the next report"}, ApproverIDs: []string{s.ada.ID, guest.ID}})
		guestsMay = false
		_, err = s.store.UpdateOrganization(ctx, s.org.ID, models.OrganizationChange{GuestsMayApprove: &guestsMay})
		require.NoError(t, err)
		page = g.get("/approvals/" + b.ID)
		r = g.post("/approvals/"+b.ID+"/decision", url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"}, "submission": {"g2"}})
		assert.Equal(t, http.StatusForbidden, r.status, r.body)
		assert.Contains(t, r.body, "no longer lets guests approve")
		got, err = approvals.Records(s.store).Get(ctx, s.org.ID, b.ID)
		require.NoError(t, err)
		assert.Equal(t, "pending", got.Status)
	})
}

// TestTheLinkPageHidesARestrictedFieldsCorrection: a restricted field may be
// editable; corrected by a signed-in approver, its old and new values are
// still hidden from the page an emailed link opens.
func TestTheLinkPageHidesARestrictedFieldsCorrection(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		ctx := context.Background()
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Pay supplier"}, Risk: models.RiskLow,
			ApproverIDs: []string{s.ada.ID, bob.ID}, Input: models.RawJSON(`{"amount":120,"iban":"DE-OLD-IBAN"}`),
			EditableFields: []string{"amount", "iban"}, RestrictedFields: []string{"iban"}})
		link := decisionLink.FindString(s.mailTo(t, "bob@example.com", "Approval needed").Text)
		require.NotEmpty(t, link)

		ada := s.browser(t)
		ada.signIn(s, "ada@example.com")
		page := ada.get("/approvals/" + a.ID)
		r := ada.post("/approvals/"+a.ID+"/decision", url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"},
			"field.amount": {"100"}, "field.iban": {"DE-NEW-IBAN"}, "submission": {page.submission(t)}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		signedIn := ada.get("/approvals/" + a.ID)
		assert.Contains(t, signedIn.body, "DE-NEW-IBAN", "signed in, the change is shown")

		late := s.browser(t).get(s.path(t, link))
		require.Equal(t, http.StatusOK, late.status, late.body)
		assert.Contains(t, late.body, "<code>amount</code>: 120 → 100")
		assert.NotContains(t, late.body, "DE-OLD-IBAN")
		assert.NotContains(t, late.body, "DE-NEW-IBAN")
		assert.NotContains(t, late.body, "iban")
	})
}

// TestRulesThatCannotBeEvaluatedStillHideFieldsOnTheLinkPage: an amount
// sent as a string cannot be compared by the organisation's rules, so
// each applies as if it held: the restricted field stays off the page the
// emailed link opens without signing in, two approvals and the concern
// apply, and the request's "created" timeline entry says why.
func TestRulesThatCannotBeEvaluatedStillHideFieldsOnTheLinkPage(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		ctx := context.Background()
		_, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		for _, r := range []*models.Rule{
			{Name: "big payments", Kind: "approval", Condition: "request.input.amount > 1000", RequiredApprovals: 2},
			{Name: "large sums", Kind: "ethics", Condition: "request.input.amount > 1000", Principle: "prudence", Concern: "A large sum."},
			{Name: "bank details", Kind: "restricted", Condition: "request.input.amount > 1000", Fields: []string{"iban"}},
		} {
			r.OrganizationID, r.Enabled = s.org.ID, true
			require.NoError(t, s.store.CreateRule(ctx, r))
		}
		agent := models.KeyActor(s.org, &models.APIKey{ID: "key_test", Name: "billing agent"}, nil)
		a, err := s.services.Approvals.Create(ctx, agent, &approvals.CreateInput{Fields: requests.Fields{Title: "Pay Initech"}, Risk: models.RiskLow,
			Approvers: []string{"ada@example.com", "bob@example.com"},
			Input:     []byte(`{"amount":"5000","iban":"DE89 3704 0044 0532 0130 00"}`)}, nil)
		require.NoError(t, err)
		assert.Equal(t, 2, a.RequiredApprovals)
		require.Len(t, a.Concerns.V, 1)
		assert.Equal(t, "large sums", a.Concerns.V[0].Rule)

		link := decisionLink.FindString(s.mailTo(t, "bob@example.com", "Approval needed").Text)
		require.NotEmpty(t, link)
		page := s.browser(t).get(s.path(t, link))
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.NotContains(t, page.body, "DE89", "the restricted field is hidden")
		assert.Contains(t, page.body, "1 sensitive field is hidden")
		assert.Contains(t, page.body, "5000")
		assert.Contains(t, page.body, "could not be evaluated", "the approver sees why")

		var created models.AuditEntry
		require.NoError(t, db.Where("subject_id = ? AND action = ?", a.ID, "created").Take(&created).Error)
		assert.Contains(t, created.Detail, `organisation rule "bank details" could not be evaluated on this request (no such overload`)
		assert.Contains(t, created.Detail, "so its stricter outcome applies: hidden fields iban")
		assert.Contains(t, created.Detail, `organisation rule "big payments" could not be evaluated`)
		assert.Contains(t, created.Detail, `organisation rule "large sums" could not be evaluated`)
	})
}
