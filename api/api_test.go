package api_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/idempotency"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/publishscan"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// fixture is one organisation with a key of every kind, plus a second
// organisation to prove isolation.
type fixture struct {
	srv *httptest.Server
	// services are those the API serves with, built from built.
	services    *app.Services
	built       app.Deps
	store       *models.Store
	org         *models.Organization
	agentKey    string
	readOnlyKey string
	adminKey    string
	memberToken string
	member      *models.Member
	otherAdmin  string
	otherAgent  string
	otherMember *models.Member
}

func newFixture(t *testing.T, db *gorm.DB) *fixture {
	t.Helper()
	return newFixtureWith(t, db, nil)
}

// newFixtureWith serves the API with tc as its Temporal client and, when
// given, a receiver address policy other than the public one.
func newFixtureWith(t *testing.T, db *gorm.DB, tc client.Client, policy ...*netguard.Policy) *fixture {
	t.Helper()
	ctx := context.Background()
	s := models.NewStore(db, testenv.Keys())
	f := &fixture{store: s}
	var err error
	f.org, err = s.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	_, f.agentKey, err = s.CreateKey(ctx, f.org.ID, "agent", models.KeyAgent, scopes.All)
	require.NoError(t, err)
	_, f.readOnlyKey, err = s.CreateKey(ctx, f.org.ID, "ro", models.KeyAgent, []string{scopes.ApprovalsRead})
	require.NoError(t, err)
	_, f.adminKey, err = s.CreateKey(ctx, f.org.ID, "admin", models.KeyAdmin, nil)
	require.NoError(t, err)
	f.member, err = s.CreateMember(ctx, f.org.ID, "ada@example.com", "Ada", models.RoleOwner)
	require.NoError(t, err)
	_, f.memberToken, err = s.CreateMemberToken(ctx, f.org.ID, f.member.ID)
	require.NoError(t, err)

	other, err := s.CreateOrganization(ctx, "Other", "")
	require.NoError(t, err)
	_, f.otherAdmin, err = s.CreateKey(ctx, other.ID, "admin", models.KeyAdmin, nil)
	require.NoError(t, err)
	_, f.otherAgent, err = s.CreateKey(ctx, other.ID, "agent", models.KeyAgent, scopes.All)
	require.NoError(t, err)
	f.otherMember, err = s.CreateMember(ctx, other.ID, "eve@example.com", "", "")
	require.NoError(t, err)

	// Errors only, to the test binary's stderr, which go test shows for a
	// package that failed: what a 500 logged is read beside it.
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	f.built = publishing(t, app.Deps{Store: s, Temporal: tc, Logger: quiet})
	if len(policy) > 0 {
		f.built.NetPolicy = policy[0]
	}
	f.services = app.Build(f.built)
	f.srv = httptest.NewServer(api.New(api.Deps{Logger: quiet, BaseURL: "http://assent.test", Services: f.services.API()}))
	t.Cleanup(f.srv.Close)
	return f
}

// scanner is the publish scan, built once: its rules take a while to load.
var scanner = sync.OnceValues(publishscan.New)

// publishing is d with a blob folder of the test's and the publish scan,
// at the tests' base URL, for app.Build.
func publishing(t testing.TB, d app.Deps) app.Deps {
	t.Helper()
	blobs, err := blobstore.Open(context.Background(), "", t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { blobs.Close() })
	sc, err := scanner()
	require.NoError(t, err)
	d.Blobs, d.Scanner, d.BaseURL = blobs, sc, "http://assent.test"
	return d
}

type response struct {
	status  int
	header  http.Header
	body    []byte
	decoded map[string]any
}

func (f *fixture) do(t *testing.T, method, path, key, body string, headers map[string]string) response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.srv.URL+path, r)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	// A twin of the request, body and all, for the contract check.
	sent := req.Clone(req.Context())
	sent.Body = io.NopCloser(strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out := response{status: resp.StatusCode, header: resp.Header}
	out.body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = json.Unmarshal(out.body, &out.decoded)
	f.checkContract(t, sent, out)
	return out
}

// doAsClient sends a POST as a client told to retry does: with an
// Idempotency-Key of its own, sent again while the answer is 503 or 409
// idempotency_in_progress (see sendAsClient).
func (f *fixture) doAsClient(t *testing.T, path, key, body string) response {
	t.Helper()
	return f.sendAsClient(t, path, key, body, ids.New("test"))
}

// sendAsClient sends a POST with the Idempotency-Key idem, and sends it
// again, at most three more times, while the server says to: a 503 (the
// in-process Temporal server can be slower than StartTimeout under load)
// or a 409 idempotency_in_progress (the key's other attempt ran longer
// than the server waits for it). Tests whose subject is neither send so.
func (f *fixture) sendAsClient(t *testing.T, path, key, body, idem string) response {
	t.Helper()
	header := map[string]string{"Idempotency-Key": idem}
	r := f.do(t, http.MethodPost, path, key, body, header)
	for try := 0; try < 3 && toldToRetry(r); try++ {
		t.Logf("%s answered %d, sent again: %s", path, r.status, r.body)
		r = f.do(t, http.MethodPost, path, key, body, header)
	}
	return r
}

// toldToRetry says whether r asks its client to send the request again:
// a 503, or a 409 idempotency_in_progress.
func toldToRetry(r response) bool {
	return r.status == http.StatusServiceUnavailable ||
		r.status == http.StatusConflict && errField(r, "code") == "idempotency_in_progress"
}

func errField(r response, name string) string {
	e, _ := r.decoded["error"].(map[string]any)
	s, _ := e[name].(string)
	return s
}

// TestAPIScenarios covers auth, scopes, the error envelope and wire manners
// in one table, on SQLite and PostgreSQL.
func TestAPIScenarios(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		key := map[string]string{"agent": f.agentKey, "readonly": f.readOnlyKey, "admin": f.adminKey,
			"member": f.memberToken, "other": f.otherAdmin, "bogus": "asnt_agent_nope", "none": ""}

		tests := []struct {
			name     string
			method   string
			path     string
			key      string
			body     string
			headers  map[string]string
			status   int
			code     string
			field    string
			contains []string
			msgHas   string
		}{
			{name: "no key", method: "GET", path: "/api/v1/me", key: "none", status: 401, code: "unauthorized"},
			{name: "unknown key", method: "GET", path: "/api/v1/me", key: "bogus", status: 401, code: "unauthorized"},
			{name: "wrong scheme", method: "GET", path: "/api/v1/me", key: "none", headers: map[string]string{"Authorization": "Basic " + f.agentKey}, status: 401, code: "unauthorized", msgHas: `"Bearer "`},
			{name: "key without scheme", method: "GET", path: "/api/v1/me", key: "none", headers: map[string]string{"Authorization": f.agentKey}, status: 401, code: "unauthorized", msgHas: `must be "Bearer " followed by the key`},
			{name: "me as agent", method: "GET", path: "/api/v1/me", key: "agent", status: 200, contains: []string{`"kind":"agent"`, `"approvals:write"`, `"member":null`, f.org.ID}},
			{name: "me as member", method: "GET", path: "/api/v1/me", key: "member", status: 200, contains: []string{`"kind":"member"`, `"email":"ada@example.com"`}},
			{name: "me as admin", method: "GET", path: "/api/v1/me", key: "admin", status: 200, contains: []string{`"kind":"admin"`, `"scopes":[]`}},
			{name: "admin route with agent key", method: "GET", path: "/api/v1/admin/members", key: "agent", status: 403, code: "forbidden"},
			{name: "admin route with member token", method: "GET", path: "/api/v1/admin/members", key: "member", status: 403, code: "forbidden"},
			{name: "list members", method: "GET", path: "/api/v1/admin/members", key: "admin", status: 200, contains: []string{`"nextCursor":null`, "ada@example.com"}},
			{name: "members are scoped", method: "GET", path: "/api/v1/admin/members", key: "other", status: 200, contains: []string{"eve@example.com"}},
			{name: "bad limit", method: "GET", path: "/api/v1/admin/members?limit=500", key: "admin", status: 400, code: "invalid_request", field: "limit"},
			{name: "bad cursor", method: "GET", path: "/api/v1/admin/members?cursor=zzz", key: "admin", status: 400, code: "invalid_request", field: "cursor"},
			{name: "create member", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"email":"Bob@Example.com","name":"Bob","role":"admin"}`, status: 201, contains: []string{`"email":"bob@example.com"`, `"role":"admin"`, `"id":"mem_`, `"active":true`}},
			{name: "duplicate member", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"email":"ada@example.com"}`, status: 409, code: "conflict", field: "email"},
			{name: "unknown field", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"email":"c@example.com","nmae":"C"}`, status: 400, code: "invalid_request", field: "nmae"},
			{name: "malformed JSON", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"email":`, status: 400, code: "invalid_request"},
			{name: "syntax error", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"email" "x"}`, status: 400, code: "invalid_request", msgHas: "malformed JSON"},
			{name: "wrong type", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"email":42}`, status: 400, code: "invalid_request", field: "email", msgHas: "must be a string"},
			{name: "wrong type in a list", method: "POST", path: "/api/v1/admin/teams", key: "admin", body: `{"name":"Ops","kind":"team","members":["ada@example.com", 5]}`, status: 400, code: "invalid_request", field: "members[1]", msgHas: "members[1] must be a string, not number"},
			{name: "array body", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `[]`, status: 400, code: "invalid_request"},
			{name: "trailing data", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"email":"d@example.com"} {}`, status: 400, code: "invalid_request"},
			{name: "missing field", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{}`, status: 400, code: "invalid_request", field: "email", msgHas: "email is required"},
			{name: "bad email", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"email":"nope"}`, status: 400, code: "invalid_request", field: "email"},
			{name: "bad role", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"email":"e@example.com","role":"god"}`, status: 400, code: "invalid_request", field: "role", msgHas: "owner, admin, member"},
			{name: "not JSON content type", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"email":"f@example.com"}`, headers: map[string]string{"Content-Type": "text/plain"}, status: 415, code: "unsupported_media_type"},
			{name: "oversized body", method: "POST", path: "/api/v1/admin/members", key: "admin", body: `{"name":"` + strings.Repeat("x", api.DefaultBodyLimit) + `"}`, status: 413, code: "payload_too_large"},
			{name: "patch member in other org", method: "PATCH", path: "/api/v1/admin/members/" + f.otherMember.ID, key: "admin", body: `{"role":"admin"}`, status: 404, code: "not_found"},
			{name: "deactivate last owner", method: "PATCH", path: "/api/v1/admin/members/" + f.member.ID, key: "admin", body: `{"active":false}`, status: 409, code: "invalid_state"},
			{name: "token for other org member", method: "POST", path: "/api/v1/admin/members/" + f.otherMember.ID + "/tokens", key: "admin", status: 404, code: "not_found"},
			{name: "token for an owner", method: "POST", path: "/api/v1/admin/members/" + f.member.ID + "/tokens", key: "admin", status: 403, code: "forbidden", msgHas: "only they mint their tokens"},
			{name: "team with unknown member", method: "POST", path: "/api/v1/admin/teams", key: "admin", body: `{"name":"Ops","kind":"team","members":["ghost@example.com"]}`, status: 400, code: "invalid_request", field: "members", msgHas: "ghost@example.com"},
			{name: "team with other org member", method: "POST", path: "/api/v1/admin/teams", key: "admin", body: `{"name":"Ops","kind":"team","members":["` + f.otherMember.ID + `"]}`, status: 400, code: "invalid_request", field: "members"},
			{name: "team bad kind", method: "POST", path: "/api/v1/admin/teams", key: "admin", body: `{"name":"Ops","kind":"tribe"}`, status: 400, code: "invalid_request", field: "kind"},
			{name: "create team", method: "POST", path: "/api/v1/admin/teams", key: "admin", body: `{"name":"Finance","kind":"group","members":["ada@example.com"]}`, status: 201, contains: []string{`"id":"team_`, `"kind":"group"`, "ada@example.com"}},
			{name: "guest", method: "POST", path: "/api/v1/admin/guests", key: "admin", body: `{"email":"guest@partner.io"}`, status: 201, contains: []string{`"id":"gst_`}},
			{name: "guest again", method: "POST", path: "/api/v1/admin/guests", key: "admin", body: `{"email":"GUEST@partner.io"}`, status: 200},
			{name: "member as guest", method: "POST", path: "/api/v1/admin/guests", key: "admin", body: `{"email":"ada@example.com"}`, status: 409, code: "conflict", field: "email"},
			{name: "rename unknown guest", method: "PATCH", path: "/api/v1/admin/guests/gst_nope", key: "admin", body: `{"name":"Gus"}`, status: 404, code: "not_found"},
			{name: "guest email is not editable", method: "PATCH", path: "/api/v1/admin/guests/gst_nope", key: "admin", body: `{"email":"g@partner.io"}`, status: 400, code: "invalid_request", field: "email"},
			{name: "guest name too long", method: "PATCH", path: "/api/v1/admin/guests/gst_nope", key: "admin", body: `{"name":"` + strings.Repeat("x", 201) + `"}`, status: 400, code: "invalid_request", field: "name"},
			{name: "remove unknown guest", method: "DELETE", path: "/api/v1/admin/guests/gst_nope", key: "admin", status: 404, code: "not_found"},
			{name: "remove guest with agent key", method: "DELETE", path: "/api/v1/admin/guests/gst_nope", key: "agent", status: 403, code: "forbidden"},
			{name: "key with unknown scope", method: "POST", path: "/api/v1/admin/keys", key: "admin", body: `{"name":"k","kind":"agent","scopes":["approvals:delete"]}`, status: 400, code: "invalid_request", field: "scopes", msgHas: "approvals:delete"},
			{name: "agent key without scopes", method: "POST", path: "/api/v1/admin/keys", key: "admin", body: `{"name":"k","kind":"agent"}`, status: 400, code: "invalid_request", field: "scopes"},
			{name: "member kind refused", method: "POST", path: "/api/v1/admin/keys", key: "admin", body: `{"name":"k","kind":"member"}`, status: 400, code: "invalid_request", field: "kind"},
			{name: "create key", method: "POST", path: "/api/v1/admin/keys", key: "admin", body: `{"name":"k","kind":"agent","scopes":["flows:write"]}`, status: 201, contains: []string{`"key":"asnt_agent_`, `"id":"key_`, `"scopes":["flows:write"]`}},
			{name: "keys list hides secrets", method: "GET", path: "/api/v1/admin/keys", key: "admin", status: 200, contains: []string{`"prefix":"asnt_`}},
			{name: "revoke other org key", method: "DELETE", path: "/api/v1/admin/keys/key_nope", key: "admin", status: 404, code: "not_found"},
			{name: "organization patch", method: "PATCH", path: "/api/v1/admin/organization", key: "admin", body: `{"guestsMayApprove":true}`, status: 200, contains: []string{`"plan":"free"`, `"guestsMayApprove":true`}},
			{name: "organization may not raise its plan", method: "PATCH", path: "/api/v1/admin/organization", key: "admin", body: `{"plan":"enterprise"}`, status: 403, code: "forbidden", field: "plan"},
			{name: "organization bad plan", method: "PATCH", path: "/api/v1/admin/organization", key: "admin", body: `{"plan":"gold"}`, status: 400, code: "invalid_request", field: "plan"},
			{name: "organization bad expiry", method: "PATCH", path: "/api/v1/admin/organization", key: "admin", body: `{"maxApprovalExpirySeconds":5}`, status: 400, code: "invalid_request", field: "maxApprovalExpirySeconds"},
			{name: "unknown route", method: "GET", path: "/api/v1/nope", key: "agent", status: 404, code: "not_found"},
			{name: "wrong method", method: "PUT", path: "/api/v1/me", key: "agent", status: 405, code: "method_not_allowed"},
			// A near miss is answered in JSON, never redirected (a POST would lose its body).
			{name: "trailing slash", method: "GET", path: "/api/v1/approvals/", key: "agent", status: 404, code: "not_found", msgHas: "GET /api/v1/approvals/"},
			{name: "trailing slash POST", method: "POST", path: "/api/v1/approvals/", key: "agent", body: `{"title":"x"}`, status: 404, code: "not_found"},
			{name: "trailing slash admin", method: "GET", path: "/api/v1/admin/members/", key: "admin", status: 404, code: "not_found"},
			{name: "wrong case", method: "GET", path: "/api/v1/ME", key: "agent", status: 404, code: "not_found"},
			{name: "trailing slash without key", method: "GET", path: "/api/v1/me/", key: "none", status: 404, code: "not_found"},
			{name: "idempotency key too long", method: "POST", path: "/api/v1/admin/guests", key: "admin", body: `{"email":"g2@partner.io"}`, headers: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}, status: 400, code: "invalid_request", field: "Idempotency-Key"},
			{name: "healthz", method: "GET", path: "/healthz", key: "none", status: 200, contains: []string{`"status":"ok"`}},
			{name: "readyz without temporal", method: "GET", path: "/readyz", key: "none", status: 503, contains: []string{`"temporal":"down`, `"database":"ok"`}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				r := f.do(t, tc.method, tc.path, key[tc.key], tc.body, tc.headers)
				require.Equal(t, tc.status, r.status, "body: %s", r.body)
				assert.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
				if tc.code != "" {
					assert.Equal(t, tc.code, errField(r, "code"), "body: %s", r.body)
					assert.NotEmpty(t, errField(r, "message"))
				}
				if tc.field != "" {
					assert.Equal(t, tc.field, errField(r, "field"), "body: %s", r.body)
				}
				if tc.msgHas != "" {
					assert.Contains(t, errField(r, "message"), tc.msgHas)
				}
				for _, s := range tc.contains {
					assert.Contains(t, string(r.body), s)
				}
			})
		}
	})
}

func TestRevokedKeyFailsAtOnce(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		r := f.do(t, "POST", "/api/v1/admin/keys", f.adminKey, `{"name":"short-lived","kind":"agent","scopes":["approvals:read"]}`, nil)
		require.Equal(t, 201, r.status)
		secret, id := r.decoded["key"].(string), r.decoded["id"].(string)
		require.Equal(t, 200, f.do(t, "GET", "/api/v1/me", secret, "", nil).status)

		// Another organisation's admin cannot revoke it.
		require.Equal(t, 404, f.do(t, "DELETE", "/api/v1/admin/keys/"+id, f.otherAdmin, "", nil).status)
		r = f.do(t, "DELETE", "/api/v1/admin/keys/"+id, f.adminKey, "", nil)
		require.Equal(t, 200, r.status)
		assert.NotNil(t, r.decoded["revokedAt"])
		assert.Equal(t, 401, f.do(t, "GET", "/api/v1/me", secret, "", nil).status)
	})
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		hdr := map[string]string{"Idempotency-Key": "create-bob"}
		body := `{"email":"bob@example.com","name":"Bob"}`

		first := f.do(t, "POST", "/api/v1/admin/members", f.adminKey, body, hdr)
		require.Equal(t, 201, first.status, "%s", first.body)
		assert.Empty(t, first.header.Get("Idempotency-Replayed"))

		replay := f.do(t, "POST", "/api/v1/admin/members", f.adminKey, body, hdr)
		assert.Equal(t, 201, replay.status)
		assert.Equal(t, "true", replay.header.Get("Idempotency-Replayed"))
		assert.Equal(t, first.body, replay.body, "replay must be byte for byte")

		reused := f.do(t, "POST", "/api/v1/admin/members", f.adminKey, `{"email":"carol@example.com"}`, hdr)
		assert.Equal(t, 422, reused.status)
		assert.Equal(t, "idempotency_key_reused", errField(reused, "code"))

		// The same key on another path is a different request.
		other := f.do(t, "POST", "/api/v1/admin/guests", f.adminKey, body[:len(body)-13]+"}", hdr)
		assert.Equal(t, 422, other.status)

		// Keys are per organisation: another organisation may use the same one.
		elsewhere := f.do(t, "POST", "/api/v1/admin/members", f.otherAdmin, body, hdr)
		assert.Equal(t, 201, elsewhere.status)
		assert.Empty(t, elsewhere.header.Get("Idempotency-Replayed"))

		// The same JSON laid out otherwise is the same request.
		spaced := f.do(t, "POST", "/api/v1/admin/members", f.adminKey, "{ \"name\": \"Bob\",\n  \"email\": \"bob@example.com\" }", hdr)
		assert.Equal(t, 201, spaced.status, "%s", spaced.body)
		assert.Equal(t, "true", spaced.header.Get("Idempotency-Replayed"))
		assert.Equal(t, first.body, spaced.body)

		// A refusal is not kept: the caller fixes the body and retries with the key.
		bad := map[string]string{"Idempotency-Key": "bad-one"}
		r1 := f.do(t, "POST", "/api/v1/admin/members", f.adminKey, `{"email":"nope"}`, bad)
		assert.Equal(t, 400, r1.status)
		r2 := f.do(t, "POST", "/api/v1/admin/members", f.adminKey, `{"email":"nope@example.com"}`, bad)
		assert.Equal(t, 201, r2.status, "%s", r2.body)
		assert.Empty(t, r2.header.Get("Idempotency-Replayed"))
		assert.Equal(t, "true", f.do(t, "POST", "/api/v1/admin/members", f.adminKey, `{"email":"nope@example.com"}`, bad).header.Get("Idempotency-Replayed"))
		plain := r2.decoded["id"].(string)

		// So is a lookup that failed: the retry may name another path.
		lost := map[string]string{"Idempotency-Key": "token-for-ada"}
		r1 = f.do(t, "POST", "/api/v1/admin/members/mem_nope/tokens", f.adminKey, "", lost)
		assert.Equal(t, 404, r1.status)
		r2 = f.do(t, "POST", "/api/v1/admin/members/"+plain+"/tokens", f.adminKey, "", lost)
		assert.Equal(t, 201, r2.status, "%s", r2.body)

		members, _, err := f.store.ListMembers(context.Background(), f.org.ID, models.Page{Limit: 50})
		require.NoError(t, err)
		bobs := 0
		for _, m := range members {
			if m.Email == "bob@example.com" {
				bobs++
			}
		}
		assert.Equal(t, 1, bobs)
	})
}

// TestIdempotencyKeepsKeysStoredBeforeCanonicalHashing: a key stored with
// the hash of the body as sent (before bodies were compared as canonical
// JSON) still replays for the same bytes, and is still refused for another
// body.
func TestIdempotencyKeepsKeysStoredBeforeCanonicalHashing(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		p, err := accounts.New(f.store).Authenticate(ctx, f.adminKey)
		require.NoError(t, err)
		body := `{"email": "old@example.com"}`
		raw := sha256.Sum256([]byte("POST /api/v1/admin/guests\n" + body))
		c := &models.Claim{OrganizationID: f.org.ID, PrincipalID: p.Key.ID, Key: "from-before", RequestHash: hex.EncodeToString(raw[:])}
		prev, err := idempotency.New(f.store).ClaimKey(ctx, c, false)
		require.NoError(t, err)
		require.Nil(t, prev)
		stored := `{"id":"gst_stored","email":"old@example.com","name":"","createdAt":"2026-01-02T15:04:05.123456Z"}`
		require.NoError(t, f.store.CompleteIdempotencyKey(ctx, c, 201, "application/json; charset=utf-8", "", []byte(stored)))

		hdr := map[string]string{"Idempotency-Key": "from-before"}
		replay := f.do(t, "POST", "/api/v1/admin/guests", f.adminKey, body, hdr)
		assert.Equal(t, 201, replay.status)
		assert.Equal(t, "true", replay.header.Get("Idempotency-Replayed"))
		assert.JSONEq(t, stored, string(replay.body), "the stored answer, not a new guest")

		other := f.do(t, "POST", "/api/v1/admin/guests", f.adminKey, `{"email": "new@example.com"}`, hdr)
		assert.Equal(t, 422, other.status)
		assert.Equal(t, "idempotency_key_reused", errField(other, "code"))
	})
}

// TestIdempotencyUnderConcurrency sends 20 requests with one key at once:
// exactly one executes; the rest are replays or told it is in progress.
func TestIdempotencyUnderConcurrency(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		body := `{"name":"concurrent","kind":"agent","scopes":["approvals:read"]}`
		var wg sync.WaitGroup
		results := make([]response, 20)
		start := make(chan struct{})
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i] = f.do(t, "POST", "/api/v1/admin/keys", f.adminKey, body, map[string]string{"Idempotency-Key": "same"})
			}()
		}
		close(start)
		wg.Wait()

		var executed, replayed, inProgress int
		var firstBody []byte
		for _, r := range results {
			switch {
			case r.status == 201 && r.header.Get("Idempotency-Replayed") == "":
				executed++
				firstBody = r.body
			case r.status == 201:
				replayed++
			case r.status == 409 && errField(r, "code") == "idempotency_in_progress":
				inProgress++
			default:
				t.Errorf("unexpected response %d %s", r.status, r.body)
			}
		}
		t.Logf("executed %d, replayed %d, in progress %d", executed, replayed, inProgress)
		assert.Equal(t, 1, executed)
		assert.Equal(t, 20, executed+replayed+inProgress)
		for _, r := range results {
			if r.status == 201 {
				assert.True(t, bytes.Equal(firstBody, r.body))
			}
		}
		keys, _, err := f.store.ListKeys(context.Background(), f.org.ID, models.Page{Limit: 200})
		require.NoError(t, err)
		n := 0
		for _, k := range keys {
			if k.Name == "concurrent" {
				n++
			}
		}
		assert.Equal(t, 1, n, "exactly one key must have been created")
	})
}

func TestReadyzChecksTemporal(t *testing.T) {
	t.Parallel()
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	db := testenv.OpenDB(t, "sqlite")
	store, tc := models.NewStore(db, testenv.Keys()), ts.GetDefaultClient()
	srv := httptest.NewServer(api.New(api.Deps{Logger: quiet,
		Services: app.Build(app.Deps{Store: store, Temporal: tc, Logger: quiet}).API()}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/readyz")
	require.NoError(t, err)
	var ready struct{ Status, Version string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ready))
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "ready", ready.Status)
	assert.Equal(t, "(devel)", ready.Version, "the version of a test build")

	require.NoError(t, models.Close(db))
	resp, err = http.Get(srv.URL + "/readyz")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode)
	assert.Contains(t, string(b), `"database":"down`)
}

// TestSlowBodyWithoutKeyIsAnsweredAtOnce: a client without a key that
// dribbles a body is answered 401 from its headers, without the server
// waiting for the body.
func TestSlowBodyWithoutKeyIsAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.OpenDB(t, "sqlite"))
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /api/v1/approvals HTTP/1.1\r\nHost: assent.test\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"ti"))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "no answer within a second")
	defer resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}
