package assent_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	assent "github.com/assent-hq/assent/sdk/go"
	"github.com/assent-hq/assent/sdk/go/assenttest"
	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

var (
	devOnce sync.Once
	devInfo *assenttest.Dev
	devErr  error
	devStop = func() {}
)

func TestMain(m *testing.M) {
	code := m.Run()
	devStop()
	os.Exit(code)
}

// startDev starts one `assent dev` per test binary (assenttest: ASSENT_BIN,
// which CI builds, or assent on the PATH). Skipped without one unless
// ASSENT_REQUIRE_E2E=1.
func startDev(t *testing.T) *assenttest.Dev {
	t.Helper()
	devOnce.Do(func() {
		d, err := assenttest.Start(context.Background(), assenttest.Options{})
		if devErr = err; err == nil {
			devInfo, devStop = d, func() { _ = d.Stop() }
		}
	})
	if devErr != nil {
		if os.Getenv("ASSENT_REQUIRE_E2E") == "1" {
			t.Fatal(devErr)
		}
		t.Skip(devErr)
	}
	return devInfo
}

func agent(t *testing.T) *assent.Client {
	d := startDev(t)
	return assent.New(d.BaseURL, d.AgentKey)
}

func person(t *testing.T, roleOrEmail string) *assent.Client {
	d := startDev(t)
	m, ok := d.Member(roleOrEmail)
	if !ok {
		t.Fatalf("no demo member %s", roleOrEmail)
	}
	return assent.New(d.BaseURL, m.Token)
}

func tag(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// must returns v, or fails the test by panicking with err (a test that
// panics fails, with the stack).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func apiError(t *testing.T, err error, status int) *assent.Error {
	t.Helper()
	var e *assent.Error
	if !errors.As(err, &e) {
		t.Fatalf("want an *assent.Error with status %d, got %v", status, err)
	}
	if e.Status != status {
		t.Fatalf("want status %d, got %v", status, e)
	}
	return e
}

func TestE2EApprovalDecidedWithCorrection(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	c := agent(t)
	created := must(c.Approvals.Create(ctx, &assent.ApprovalCreate{
		Title: "Refund order 42", Input: map[string]any{"amount": 120, "currency": "EUR"},
		EditableFields: []string{"amount"}, ExternalID: assent.Ptr(tag("e2e")),
	}))
	if created.Status != "pending" || created.ExpiresAt.Sub(created.CreatedAt) < 23*time.Hour {
		t.Fatalf("created %s expiring %s", created.Status, created.ExpiresAt)
	}
	done := make(chan *assent.Approval, 1)
	go func() {
		a, err := c.Approvals.Wait(ctx, created.ID)
		if err != nil {
			t.Error(err)
		}
		done <- a
	}()
	time.Sleep(500 * time.Millisecond)
	decided := must(person(t, "admin").Approvals.Decide(ctx, created.ID, &assent.DecisionCreate{
		Decision: "approve", Corrections: map[string]any{"amount": 100}, Note: "within policy"}))
	if decided.Status != "approved" {
		t.Fatal(decided.Status)
	}
	a := <-done
	if a == nil || a.Status != "approved" || a.ApprovedInput["amount"] != float64(100) || a.ApprovedInput["currency"] != "EUR" {
		t.Fatalf("waited: %+v", a)
	}
	claims := must(c.VerifyDecisionToken(ctx, a.DecisionToken, a.ApprovedInput, ""))
	if claims.Subject != created.ID {
		t.Fatal(claims.Subject)
	}
	if _, err := c.VerifyDecisionToken(ctx, a.DecisionToken, created.Input, ""); !errors.Is(err, decisiontoken.ErrInput) {
		t.Fatalf("the proposed input must not verify: %v", err)
	}
	// Offline, with the published keys: key order and number spelling do not matter.
	var jwks []byte
	resp := must(http.Get(c.BaseURL() + "/.well-known/jwks.json"))
	jwks = must(io.ReadAll(resp.Body))
	resp.Body.Close()
	if _, err := assent.VerifyDecisionToken(a.DecisionToken, json.RawMessage(`{"currency":"EUR","amount":100.0}`), jwks,
		c.BaseURL(), startDev(t).OrganizationID, ""); err != nil {
		t.Fatal(err)
	}
}

func TestE2EWaitTimesOutPending(t *testing.T) {
	c := agent(t)
	created := must(c.Approvals.Create(ctxFor(t, time.Minute), &assent.ApprovalCreate{Title: "Nobody decides"}))
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	a, err := c.Approvals.Wait(ctx, created.ID)
	var timeout *assent.WaitTimeoutError[assent.Approval]
	if a != nil || !errors.As(err, &timeout) || timeout.Status != "pending" {
		t.Fatalf("a pending approval is never settled: %v %v", a, err)
	}
}

func TestE2EListIteratesPages(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	c := agent(t)
	ext := tag("page")
	want := map[string]bool{}
	for i := 0; i < 3; i++ {
		want[must(c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Page", Input: map[string]any{"i": i}, ExternalID: &ext})).ID] = true
	}
	got := map[string]bool{}
	for a, err := range c.Approvals.List(ctx, &assent.ListApprovalsParams{ExternalID: ext, Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		got[a.ID] = true
	}
	if len(got) != 3 || !mapsEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func TestE2ECallbackVerified(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	type delivery struct {
		header http.Header
		body   []byte
	}
	got := make(chan delivery, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), body}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	c := agent(t)
	created := must(c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Refund order 43",
		Input: map[string]any{"amount": 60}, CallbackURL: assent.Ptr(srv.URL + "/callback")}))
	if created.CallbackSecret == "" {
		t.Fatal("no callback secret")
	}
	must(person(t, "admin").Approvals.Decide(ctx, created.ID, &assent.DecisionCreate{Decision: "approve"}))
	var d delivery
	select {
	case d = <-got:
	case <-ctx.Done():
		t.Fatal("no callback arrived")
	}
	ev := must(assent.VerifyWebhook(d.body, d.header, created.CallbackSecret, 0))
	if ev.Event != "approval.approved" || ev.RequestID != created.ID || ev.DeliveryID == "" {
		t.Fatalf("event %+v", ev)
	}
	if _, err := assent.VerifyWebhook(append(d.body, ' '), d.header, created.CallbackSecret, 0); err == nil {
		t.Fatal("a changed body verified")
	}
}

func TestE2EIdempotentRetryCreatesOnce(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	c := agent(t)
	ext := tag("idem")
	body := &assent.ApprovalCreate{Title: "Once", Input: map[string]any{"n": 1}, ExternalID: &ext}
	first := must(c.Approvals.Create(ctx, body, assent.WithIdempotencyKey(ext)))
	// The same struct keeps its ExpiresAt, so the body is the same.
	again := must(c.Approvals.Create(ctx, body, assent.WithIdempotencyKey(ext)))
	if first.ID != again.ID {
		t.Fatalf("%s != %s", first.ID, again.ID)
	}
	n := 0
	for _, err := range c.Approvals.List(ctx, &assent.ListApprovalsParams{ExternalID: ext}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d approvals", n)
	}
}

// droppingProxy forwards to the server but drops the answer to the first
// POST after the server acted on it, as a network failure would.
func TestE2ELostAnswerRetriedUnderTheSameKey(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	d := startDev(t)
	var mu sync.Mutex
	posts := 0
	keys := map[string]bool{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequest(r.Method, d.BaseURL+r.URL.RequestURI(), strings.NewReader(string(body)))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if r.Method == http.MethodPost {
			mu.Lock()
			posts++
			keys[r.Header.Get("Idempotency-Key")] = true
			first := posts == 1
			mu.Unlock()
			if first {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			}
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(data)
	}))
	defer proxy.Close()
	c := assent.New(proxy.URL, d.AgentKey, assent.WithBackoff(50*time.Millisecond, 100*time.Millisecond))
	ext := tag("lost")
	created := must(c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Lost answer", ExternalID: &ext}))
	if posts != 2 || len(keys) != 1 {
		t.Fatalf("%d POSTs with %d keys", posts, len(keys))
	}
	n := 0
	for a, err := range agent(t).Approvals.List(ctx, &assent.ListApprovalsParams{ExternalID: ext}) {
		if err != nil || a.ID != created.ID {
			t.Fatal(err, a)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d approvals", n)
	}
}

func TestE2ECollectionAnswered(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	c := agent(t)
	col := must(c.Collections.Create(ctx, &assent.CollectionCreate{Title: "Vendor details",
		Questions: []assent.CollectionQuestionCreate{
			{ID: "vendor", Prompt: "Which vendor?", Kind: "choice", Options: []string{"Acme", "Globex"}},
			{ID: "budget", Prompt: "Budget in EUR", Kind: "number"},
		},
		Respondents: []string{"mia@example.com"}}))
	if col.Status != "open" {
		t.Fatal(col.Status)
	}
	must(person(t, "mia@example.com").Collections.Reply(ctx, col.ID, &assent.ReplyCreate{
		Answers: map[string]any{"vendor": "Acme", "budget": 12000}, Submit: assent.Ptr(true)}))
	done := must(c.Collections.Wait(ctx, col.ID))
	if done.Status != "complete" || done.Replies[0].Answers["vendor"] != "Acme" {
		t.Fatalf("%s %+v", done.Status, done.Replies)
	}
}

func TestE2EReportPublishedAndReviewed(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	c := agent(t)
	slug := tag("sdk/go-e2e")
	report := must(c.Reports.Create(ctx, &assent.ReportCreate{Title: "Q3 review", Slug: &slug,
		Content: assent.Ptr("<!doctype html><title>Q3</title><h1>Q3 review</h1><p>Revenue grew.</p>"),
		Living:  assent.Ptr(true), Audience: []string{"mia@example.com"}}))
	v2 := must(c.Reports.Publish(ctx, slug, &assent.VersionCreate{ExpectedVersion: assent.Ptr[int64](1),
		Content: assent.Ptr("<!doctype html><title>Q3</title><h1>Q3, revised</h1>"), ChangeSummary: "September"}))
	if v2.LiveVersion == nil || *v2.LiveVersion != 2 {
		t.Fatalf("live version %v", v2.LiveVersion)
	}
	_, err := c.Reports.Publish(ctx, slug, &assent.VersionCreate{ExpectedVersion: assent.Ptr[int64](1), Content: assent.Ptr("<h1>late</h1>")})
	if e := apiError(t, err, 409); e.Code != assent.CodeVersionConflict {
		t.Fatal(e)
	}
	review := must(c.Reviews.Create(ctx, &assent.ReviewCreate{Title: "Check Q3", ReportID: report.ID,
		Reviewers: []string{"mia@example.com"}, Instructions: "Are the figures right?"}))
	must(person(t, "mia@example.com").Reviews.Verdict(ctx, review.ID, &assent.VerdictCreate{Verdict: "approved", Note: "Figures match"}))
	if done := must(c.Reviews.Wait(ctx, review.ID)); done.Status != "approved" {
		t.Fatal(done.Status)
	}
}

func TestE2EErrorFamilies(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	d := startDev(t)
	c := agent(t)
	_, err := c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: ""})
	if e := apiError(t, err, 400); e.Code != assent.CodeInvalidRequest || e.Field != "title" {
		t.Fatal(e)
	}
	_, err = assent.New(d.BaseURL, "asnt_agent_"+strings.Repeat("x", 52)).Approvals.Get(ctx, "apr_x")
	if e := apiError(t, err, 401); e.Code != assent.CodeUnauthorized {
		t.Fatal(e)
	}
	_, err = c.Admin.Members.ListPage(ctx, nil)
	if e := apiError(t, err, 403); e.Code != assent.CodeForbidden && e.Code != assent.CodeInsufficientScope {
		t.Fatal(e)
	}
	_, err = c.Approvals.Get(ctx, "apr_01jgx5z7m3q8r2t4v6w8y0a2c4")
	if e := apiError(t, err, 404); !errors.Is(err, &assent.Error{Code: assent.CodeNotFound}) {
		t.Fatal(e)
	}
	twice := must(c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Decide twice"}))
	must(person(t, "admin").Approvals.Decide(ctx, twice.ID, &assent.DecisionCreate{Decision: "approve"}))
	_, err = person(t, "admin").Approvals.Decide(ctx, twice.ID, &assent.DecisionCreate{Decision: "reject"})
	apiError(t, err, 409)
	key := tag("reused")
	must(c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "First body"}, assent.WithIdempotencyKey(key)))
	_, err = c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Another body"}, assent.WithIdempotencyKey(key))
	if e := apiError(t, err, 422); e.Code != assent.CodeIdempotencyKeyReused {
		t.Fatal(e)
	}
	_, err = c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Who?", Approvers: []string{tag("nobody") + "@example.com"}})
	if e := apiError(t, err, 400); e.Code != assent.CodeUnknownApprover || !strings.HasPrefix(e.Field, "approvers") {
		t.Fatal(e)
	}
}

// decideWhenAsked decides, in the background, the approval of input once
// the person's inbox shows it.
func decideWhenAsked(t *testing.T, who *assent.Client, input map[string]any, decision string, corrections map[string]any) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx := ctxFor(t, time.Minute)
		want, _ := json.Marshal(input)
		for ctx.Err() == nil {
			inbox, err := who.Inbox.List(ctx, &assent.InboxParams{Kind: "approval"})
			if err != nil {
				t.Error(err)
				return
			}
			raw, _ := json.Marshal(inbox)
			var page assent.ApprovalList
			_ = json.Unmarshal(raw, &page)
			for _, a := range page.Data {
				got, _ := json.Marshal(a.Input)
				if string(got) != string(want) {
					continue
				}
				body := &assent.DecisionCreate{Decision: decision, Note: "decided by the e2e test"}
				if decision == "approve" {
					body.Corrections = corrections
				}
				if _, err := who.Approvals.Decide(ctx, a.ID, body); err != nil {
					t.Error(err)
				}
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	return done
}

type email struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
}

func TestE2ERunOnlyAfterApproval(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	c := agent(t)
	var ran []email
	send := func(_ context.Context, e email) error { ran = append(ran, e); return nil }
	req := assent.RunRequest[email]{Input: email{To: "ada@example.com", Subject: "Helo " + tag("x")},
		Approval: assent.ApprovalCreate{Title: "Email Ada", EditableFields: []string{"subject"}}}
	decided := decideWhenAsked(t, agentAsAdmin(t), map[string]any{"to": req.Input.To, "subject": req.Input.Subject}, "approve",
		map[string]any{"subject": "Hello"})
	if err := assent.Run(ctx, c, req, send); err != nil {
		t.Fatal(err)
	}
	<-decided
	if len(ran) != 1 || ran[0] != (email{To: "ada@example.com", Subject: "Hello"}) {
		t.Fatalf("ran %v", ran)
	}
	// Run reported the run: the approval is listed as executed.
	var reported *assent.Approval
	for a, err := range c.Approvals.List(ctx, &assent.ListApprovalsParams{Executed: "true"}) {
		if err != nil {
			t.Fatal(err)
		}
		if a.Input["subject"] == req.Input.Subject {
			reported = a
			break
		}
	}
	if reported == nil || reported.Execution == nil || reported.Execution.Outcome != "succeeded" || !reported.Execution.InputMatches {
		t.Fatalf("no receipt: %+v", reported)
	}
	req.Input.Subject = "Spam " + tag("x")
	decided = decideWhenAsked(t, agentAsAdmin(t), map[string]any{"to": req.Input.To, "subject": req.Input.Subject}, "reject", nil)
	err := assent.Run(ctx, c, req, send)
	<-decided
	var denied *assent.DeniedError
	if !errors.As(err, &denied) || denied.Approval.Status != "rejected" || len(ran) != 1 {
		t.Fatalf("%v, ran %v", err, ran)
	}
}

func TestE2ERunThroughTheGate(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	d := startDev(t)
	name := "refund.goe2e" + tag("")[1:7]
	admin := assent.New(d.BaseURL, d.AdminKey)
	must(admin.Admin.Actions.Create(ctx, &assent.ActionInput{Name: name, Description: "Refund a customer",
		EditableFields: []string{"amount"},
		InputSchema: map[string]any{"type": "object", "required": []string{"amount", "currency"}, "properties": map[string]any{
			"amount": map[string]any{"type": "number", "exclusiveMinimum": 0, "maximum": 1000}, "currency": map[string]any{"enum": []string{"EUR", "USD"}}}},
		Policy: []assent.PolicyRule{
			{Name: "small", Condition: "input.amount <= 50", Outcome: "allow"},
			{Name: "large", Condition: "input.amount > 500", Outcome: "deny", Reason: "too large"},
		}}))
	type refund struct {
		Amount   float64 `json:"amount"`
		Currency string  `json:"currency"`
	}
	var ran []refund
	do := func(_ context.Context, r refund) error { ran = append(ran, r); return nil }
	c := agent(t)
	run := func(r refund) error {
		return assent.Run(ctx, c, assent.RunRequest[refund]{Action: name, Input: r, Approval: assent.ApprovalCreate{Title: "Refund"}}, do)
	}
	if err := run(refund{20, "EUR"}); err != nil {
		t.Fatal(err)
	}
	if e := apiError(t, run(refund{900, "EUR"}), 403); e.Code != assent.CodeGateDenied {
		t.Fatal(e)
	}
	decided := decideWhenAsked(t, agentAsAdmin(t), map[string]any{"amount": 120, "currency": "EUR"}, "approve", map[string]any{"amount": 100})
	if err := run(refund{120, "EUR"}); err != nil {
		t.Fatal(err)
	}
	<-decided
	if len(ran) != 2 || ran[0] != (refund{20, "EUR"}) || ran[1] != (refund{100, "EUR"}) {
		t.Fatalf("ran %v", ran)
	}
}

// agentAsAdmin is the demo administrator, who decides by default.
func agentAsAdmin(t *testing.T) *assent.Client { return person(t, "admin") }

// Without a kind, the inbox is every kind's requests, each under its
// kind; with one, that kind's list.
func TestE2EInboxListsEveryKind(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	c, mia := agent(t), person(t, "mia@example.com")
	a := must(c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Inbox approval", Approvers: []string{"mia@example.com"}}))
	col := must(c.Collections.Create(ctx, &assent.CollectionCreate{Title: "Inbox collection",
		Questions:   []assent.CollectionQuestionCreate{{ID: "ok", Prompt: "Ok?", Kind: "boolean"}},
		Respondents: []string{"mia@example.com"}}))
	slug := tag("sdk/go-inbox")
	must(c.Reports.CreateFrom(ctx, &assent.ReportCreate{Title: "Inbox report", Slug: &slug, Audience: []string{"mia@example.com"}}, assent.FromContent("<h1>r</h1>")))
	rv := must(c.Reviews.Create(ctx, &assent.ReviewCreate{Title: "Inbox review", ReportID: slug, Reviewers: []string{"mia@example.com"}}))

	kinds := func(params *assent.InboxParams) map[string]string {
		got := map[string]string{}
		for item, err := range mia.Inbox.Items(ctx, params) {
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case item.Kind == "approval" && item.Approval != nil:
				got[item.Approval.ID] = item.Kind
			case item.Kind == "collection" && item.Collection != nil:
				got[item.Collection.ID] = item.Kind
			case item.Kind == "review" && item.Review != nil:
				got[item.Review.ID] = item.Kind
			default:
				t.Fatalf("an item without its request: %+v", item)
			}
		}
		return got
	}
	every := kinds(&assent.InboxParams{Limit: 200})
	if every[a.ID] != "approval" || every[col.ID] != "collection" || every[rv.ID] != "review" {
		t.Fatalf("the inbox without a kind: %v", every)
	}
	only := kinds(&assent.InboxParams{Kind: "collection"})
	if only[col.ID] != "collection" || only[a.ID] != "" || only[rv.ID] != "" {
		t.Fatalf("the inbox of collections: %v", only)
	}
	// The untyped List asks for no kind either.
	raw, _ := json.Marshal(must(mia.Inbox.List(ctx, &assent.InboxParams{Limit: 200})))
	var list assent.InboxList
	if err := json.Unmarshal(raw, &list); err != nil || len(list.Data) < 3 || list.Data[0].Kind == "" {
		t.Fatalf("the untyped inbox: %s", raw)
	}
}
