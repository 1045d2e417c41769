package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// contract is api/openapi.yaml as the tests hold the server to it.
type contract struct {
	doc    *openapi3.T
	router routers.Router
	// errorSchema is the envelope every refusal must fit, also for routes
	// the document does not have.
	errorSchema *openapi3.Schema
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	// An upload's PUT carries a file, read as such.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/zip", openapi3filter.FileBodyDecoder)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("load api/openapi.yaml: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("api/openapi.yaml is not a valid OpenAPI document: %w", err)
	}
	// Match paths on any host: the test servers listen on random ports.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &contract{doc: doc, router: router, errorSchema: doc.Components.Schemas["ErrorEnvelope"].Value}, nil
})

func openAPIContract(t *testing.T) *contract {
	t.Helper()
	c, err := loadContract()
	require.NoError(t, err)
	return c
}

// checkContract holds one exchange to the document: a request the document
// calls invalid must be refused with a 4xx, and every response must be one
// the document describes for the operation, status, headers and body. A
// request to a route the document lacks must meet a JSON 404 or 405.
func (f *fixture) checkContract(t reporter, req *http.Request, r response) {
	t.Helper()
	if viewerRoute(req.URL.Path) {
		return
	}
	c, err := loadContract()
	if err != nil {
		t.Errorf("OpenAPI: %v", err)
		return
	}
	ctx := context.Background()
	where := req.Method + " " + req.URL.RequestURI()
	req = oneSegmentSlug(req)
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		if r.status != http.StatusNotFound && r.status != http.StatusMethodNotAllowed {
			t.Errorf("OpenAPI: %s is not in api/openapi.yaml (%v), yet the server answered %d: add it to the document", where, err, r.status)
			return
		}
		var body any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Errorf("OpenAPI: %s answered %d without a JSON body: %s", where, r.status, r.body)
			return
		}
		if err := c.errorSchema.VisitJSON(body, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("OpenAPI: %s answered %d with a body that is not the error envelope: %v", where, r.status, err)
		}
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: f.authenticateForContract}}
	if reqErr := openapi3filter.ValidateRequest(ctx, in); reqErr != nil && (r.status < 400 || r.status >= 500) {
		t.Errorf("OpenAPI: the document refuses %s (%v), but the server answered %d: one of them is wrong\nbody: %s",
			where, reqErr, r.status, r.body)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: r.status, Header: r.header,
		Body: io.NopCloser(bytes.NewReader(r.body)), Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("OpenAPI: %s answered %d, which api/openapi.yaml does not describe: %v\nbody: %s", where, r.status, err, r.body)
	}
}

// oneSegmentSlug is req with a report slug's slashes, bare or encoded,
// made hyphens: the document's {idOrSlug} is one path segment to its
// router, and the server routes either form (api.UnencodedSlug).
func oneSegmentSlug(req *http.Request) *http.Request {
	u := *req.URL
	api.UnencodedSlug(&u)
	p := u.EscapedPath()
	if !strings.Contains(p, "%2F") {
		return req
	}
	req = req.Clone(req.Context())
	req.URL.Path, req.URL.RawPath = strings.ReplaceAll(p, "%2F", "-"), ""
	return req
}

// reporter is the part of testing.T the check reports to.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// keyPrefixes tell the document's security schemes apart: each is a
// bearer key of one kind.
var keyPrefixes = map[string]string{"agentKey": "asnt_agent_", "memberToken": "asnt_member_", "adminKey": "asnt_admin_"}

// authenticateForContract says whether the request's key is of the scheme
// the document names and carries the scopes it lists.
func (f *fixture) authenticateForContract(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	scheme, secret, _ := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || !strings.HasPrefix(secret, keyPrefixes[in.SecuritySchemeName]) {
		return fmt.Errorf("not a %s", in.SecuritySchemeName)
	}
	if f.store == nil {
		return nil // a bare fixture around another server: the key's kind is all there is to check
	}
	p, err := accounts.New(f.store).Authenticate(ctx, secret)
	if err != nil {
		return err
	}
	for _, s := range in.Scopes {
		if !p.HasScope(s) {
			return fmt.Errorf("lacks the scope %s", s)
		}
	}
	return nil
}

// ginParam turns gin's /a/:id into the document's /a/{id}.
var ginParam = regexp.MustCompile(`:(\w+)`)

// viewerRoute is the API viewer's page and files: HTML for people, not an
// operation of the API.
func viewerRoute(path string) bool {
	return path == "/api/docs" || strings.HasPrefix(path, "/api/docs/")
}

// TestOpenAPICoversEveryRoute: every route the router serves is in the
// document, and every operation of the document is served.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	c := openAPIContract(t)
	db := testenv.OpenDB(t, "sqlite")
	store := models.NewStore(db, testenv.Keys())
	engine, ok := api.New(api.Deps{Logger: quiet, Services: app.Build(app.Deps{Store: store, Logger: quiet}).API()}).(*gin.Engine)
	require.True(t, ok, "api.New must return the gin engine")

	served := map[string]bool{}
	for _, r := range engine.Routes() {
		if viewerRoute(r.Path) {
			continue
		}
		op := r.Method + " " + ginParam.ReplaceAllString(r.Path, "{$1}")
		served[op] = true
		if c.doc.Paths.Find(ginParam.ReplaceAllString(r.Path, "{$1}")) == nil ||
			c.doc.Paths.Find(ginParam.ReplaceAllString(r.Path, "{$1}")).GetOperation(r.Method) == nil {
			t.Errorf("the router serves %s, which api/openapi.yaml lacks: add its entry", op)
		}
	}
	documented := 0
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			documented++
			if !served[method+" "+path] {
				t.Errorf("api/openapi.yaml describes %s %s, which the router does not serve", method, path)
			}
		}
	}
	assert.Equal(t, len(served), documented)
	t.Logf("%d operations", documented)
}

// TestOpenAPIEveryKeyedPostMayBeBusy: every POST that takes an
// Idempotency-Key may answer 409 idempotency_in_progress while the key's
// first attempt runs (api/idempotency.go), so its 409 must allow that code.
func TestOpenAPIEveryKeyedPostMayBeBusy(t *testing.T) {
	t.Parallel()
	c := openAPIContract(t)
	busy := map[string]any{"error": map[string]any{"code": "idempotency_in_progress", "message": "a request with this Idempotency-Key is still running"}}
	keyed := 0
	for path, item := range c.doc.Paths.Map() {
		op := item.Post
		if op == nil || op.Parameters.GetByInAndName("header", "Idempotency-Key") == nil {
			continue
		}
		keyed++
		conflict := op.Responses.Status(http.StatusConflict)
		if conflict == nil || conflict.Value.Content.Get("application/json") == nil {
			t.Errorf("POST %s takes an Idempotency-Key but describes no JSON 409", path)
			continue
		}
		if err := conflict.Value.Content.Get("application/json").Schema.Value.VisitJSON(busy, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("POST %s: its 409 does not allow idempotency_in_progress: %v", path, err)
		}
	}
	assert.Greater(t, keyed, 40, "the POSTs taking an Idempotency-Key were found")
}

// TestOpenAPIServed: /api/v1/openapi.json is the document as JSON, without
// a key, with an ETag that answers 304.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.OpenDB(t, "sqlite"))
	r := f.do(t, "GET", "/api/v1/openapi.json", "", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
	etag := r.header.Get("ETag")
	require.NotEmpty(t, etag)

	loader := openapi3.NewLoader()
	served, err := loader.LoadFromData(r.body)
	require.NoError(t, err, "the served JSON must load as OpenAPI")
	require.NoError(t, served.Validate(loader.Context))
	assert.Equal(t, "3.1.0", served.OpenAPI)
	want, err := json.Marshal(openAPIContract(t).doc.Paths)
	require.NoError(t, err)
	got, err := json.Marshal(served.Paths)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got), "the served document must be api/openapi.yaml")

	again := f.do(t, "GET", "/api/v1/openapi.json", "", "", map[string]string{"If-None-Match": etag})
	assert.Equal(t, http.StatusNotModified, again.status)
	assert.Empty(t, again.body)
}

// TestOpenAPIRejectsWhatItShould: the contract check is not a rubber stamp.
// A response the document does not describe, or a request the document
// refuses that the server accepts, is reported.
func TestOpenAPIRejectsWhatItShould(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.OpenDB(t, "sqlite"))
	check := func(method, path, key, body string, r response) []string {
		req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := &recordingT{}
		f.checkContract(rec, req, r)
		return rec.errs
	}
	jsonHeader := http.Header{"Content-Type": {"application/json; charset=utf-8"}}

	// A field the document does not know in a response.
	got := check("GET", "/healthz", "", "", response{status: 200, header: jsonHeader, body: []byte(`{"status":"ok","extra":1}`)})
	assert.NotEmpty(t, got, "an undocumented field must be reported")
	// A status the operation does not list.
	got = check("GET", "/healthz", "", "", response{status: 418, header: jsonHeader, body: []byte(`{}`)})
	assert.NotEmpty(t, got, "an undocumented status must be reported")
	// The server accepting what the document refuses: an agent key on an admin route.
	got = check("GET", "/api/v1/admin/members", f.agentKey, "", response{status: 200, header: jsonHeader, body: []byte(`{"data":[],"nextCursor":null}`)})
	assert.NotEmpty(t, got, "an accepted request the document refuses must be reported")
	// A scope the key lacks.
	got = check("POST", "/api/v1/approvals", f.readOnlyKey, `{"title":"x"}`, response{status: 201, header: jsonHeader, body: []byte(`{}`)})
	assert.NotEmpty(t, got)
	// A route the document lacks answered with anything but a JSON 404 or 405.
	got = check("GET", "/api/v1/nope", f.agentKey, "", response{status: 200, header: jsonHeader, body: []byte(`{}`)})
	assert.NotEmpty(t, got)
	// And a true exchange passes.
	got = check("GET", "/healthz", "", "", response{status: 200, header: jsonHeader, body: []byte(`{"status":"ok"}`)})
	assert.Empty(t, got)
}

// recordingT collects a check's errors instead of failing the test.
type recordingT struct{ errs []string }

func (r *recordingT) Helper() {}

func (r *recordingT) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestBrowserShowsAPIDocs: /api/docs renders every operation of the
// document in a real browser, from files the binary serves, with no
// Content-Security-Policy violation.
func TestBrowserShowsAPIDocs(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	c := openAPIContract(t)
	f := newFixture(t, testenv.OpenDB(t, "sqlite"))
	b := browsertest.New(t)

	// Recorded from the first script on, before any of the page's own.
	_, err := chromedp.Run(b.Context(), func(ctx context.Context, tg *chromedp.Target) (cdp.Empty, error) {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.__csp = []; document.addEventListener("securitypolicyviolation",
				e => window.__csp.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber));`})
		return cdp.Empty{}, err
	})
	require.NoError(t, err)

	b.Navigate(f.srv.URL + "/api/docs")
	b.Run(chromedp.WaitVisible(chromedp.CSS(".opblock")))
	operations := 0
	for _, item := range c.doc.Paths.Map() {
		operations += len(item.Operations())
	}
	shown, err := chromedp.Run(b.Context(), chromedp.Evaluate[int](`document.querySelectorAll(".opblock").length`))
	require.NoError(t, err)
	assert.Equal(t, operations, shown, "every operation is listed")
	assert.Contains(t, b.Text(".info .title"), "Assent API")
	assert.Contains(t, b.Text("#swagger-ui"), "/api/v1/approvals/{id}/decision")

	violations, err := chromedp.Run(b.Context(), chromedp.Evaluate[[]string](`window.__csp`))
	require.NoError(t, err)
	assert.Empty(t, violations, "Content-Security-Policy violations")
	if dir := os.Getenv("ASSENT_SCREENSHOTS"); dir != "" {
		b.Screenshot(dir + "/api-docs.png")
	}

	viewer := f.do(t, "GET", "/api/docs", "", "", nil)
	assert.Contains(t, viewer.header.Get("Content-Security-Policy"), "script-src 'self'")
	assert.NotContains(t, viewer.header.Get("Content-Security-Policy"), "unsafe")
	missing := f.do(t, "GET", "/api/docs/nope.js", "", "", nil)
	assert.Equal(t, http.StatusNotFound, missing.status)
}
