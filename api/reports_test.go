package api_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
)

// Fake secrets, built from pieces so this file holds none a scanner
// would flag.
var (
	fakeAWSKeyID = "AKIA" + "Z7QWERTYUIOPASDF"
	fakeAWSKey   = "wJalrXUtnFEMI" + "/K7MDENG/bPxRfiCYzq9Lb3TaKx"
)

func html(body string) string {
	return "<!doctype html><html lang=en><title>Report</title><body>" + body + "</body></html>"
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// publish posts a report and returns it, failing unless it is 201.
func (f *fixture) publish(t *testing.T, body string) map[string]any {
	t.Helper()
	r := f.do(t, "POST", "/api/v1/reports", f.agentKey, body, nil)
	require.Equal(t, 201, r.status, string(r.body))
	return r.decoded
}

func version(r map[string]any) map[string]any { return r["version"].(map[string]any) }

func TestCreateReportValidation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		f.publish(t, `{"title":"Taken","slug":"team/taken","content":`+jsonString(html("x"))+`}`)
		page := jsonString(html("<p>hello</p>"))
		big := jsonString(strings.Repeat("a", 2<<20+1))
		exact := jsonString(html(strings.Repeat("a", 2<<20-len(html("")))))
		cases := []struct {
			name, key, body string
			status          int
			code, field     string
		}{
			{"no title", f.agentKey, `{"content":` + page + `}`, 400, "invalid_request", "title"},
			{"blank title", f.agentKey, `{"title":"  ","content":` + page + `}`, 400, "invalid_request", "title"},
			{"long title", f.agentKey, `{"title":"` + strings.Repeat("t", 201) + `","content":` + page + `}`, 400, "invalid_request", "title"},
			{"no content", f.agentKey, `{"title":"T"}`, 400, "invalid_request", "content"},
			{"two sources", f.agentKey, `{"title":"T","content":` + page + `,"uploadId":"upl_x"}`, 400, "invalid_request", "uploadId"},
			{"files and an upload", f.agentKey, `{"title":"T","files":[{"path":"index.html","content":"x"}],"uploadId":"upl_x"}`, 400, "invalid_request", "uploadId"},
			{"content and files", f.agentKey, `{"title":"T","content":` + page + `,"files":[{"path":"index.html","content":"x"}]}`, 400, "invalid_request", "files"},
			{"content too large", f.agentKey, `{"title":"T","content":` + big + `}`, 413, "content_too_large", "content"},
			{"content of exactly 2 MB", f.agentKey, `{"title":"T","content":` + exact + `}`, 201, "", ""},
			{"empty content", f.agentKey, `{"title":"T","content":""}`, 400, "invalid_request", "content"},
			{"files without index.html", f.agentKey, `{"title":"T","files":[{"path":"a.html","content":"x"}]}`, 400, "invalid_request", "files"},
			{"file path with ..", f.agentKey, `{"title":"T","files":[{"path":"index.html","content":"x"},{"path":"../x.css","content":"x"}]}`, 400, "invalid_request", "files[1].path"},
			{"bad slug", f.agentKey, `{"title":"T","slug":"Team/Q3","content":` + page + `}`, 400, "invalid_request", "slug"},
			{"slug with an action", f.agentKey, `{"title":"T","slug":"team/versions","content":` + page + `}`, 400, "invalid_request", "slug"},
			{"slug taken", f.agentKey, `{"title":"T","slug":"team/taken","content":` + page + `}`, 409, "slug_taken", "slug"},
			{"classification", f.agentKey, `{"title":"T","classification":"secret","content":` + page + `}`, 400, "invalid_request", "classification"},
			{"unknown field", f.agentKey, `{"title":"T","content":` + page + `,"colour":"red"}`, 400, "invalid_request", "colour"},
			{"wrong type", f.agentKey, `{"title":"T","living":"yes","content":` + page + `}`, 400, "invalid_request", "living"},
			{"upload of nobody", f.agentKey, `{"title":"T","uploadId":"upl_nope"}`, 404, "upload_not_found", "uploadId"},
			{"a flow that does not exist", f.agentKey, `{"title":"T","flowId":"flw_nope","content":` + page + `}`, 400, "invalid_request", "flowId"},
			{"read-only key", f.readOnlyKey, `{"title":"T","content":` + page + `}`, 403, "insufficient_scope", ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := f.do(t, "POST", "/api/v1/reports", c.key, c.body, nil)
				require.Equal(t, c.status, r.status, string(r.body))
				assert.Equal(t, c.code, errField(r, "code"))
				assert.Equal(t, c.field, errField(r, "field"))
			})
		}
	})
}

// TestReportVersionsRollbackArchive walks a report through versions,
// a stale expectedVersion, rollback and forward, and archive, reading it
// by id, by slug encoded and by slug as it is.
func TestReportVersionsRollbackArchive(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		_, err := testenv.CreateTeam(f.store, context.Background(), f.org.ID, "Finance", models.TeamKindTeam, []string{f.member.Email})
		require.NoError(t, err)
		rep := f.publish(t, `{"title":"Q3 Café Review!","content":`+jsonString(html("<h1>v1</h1>"))+`,"living":true,"audience":["Finance"],"changeSummary":"first"}`)
		id := rep["id"].(string)
		assert.Regexp(t, `^rpt_`, id)
		assert.Equal(t, "q3-cafe-review", rep["slug"])
		assert.Equal(t, "http://assent.test/reports/q3-cafe-review", rep["url"])
		assert.EqualValues(t, 1, rep["latestVersion"])
		assert.EqualValues(t, 1, rep["liveVersion"])
		assert.Equal(t, "internal", rep["classification"])
		assert.Equal(t, []any{"Finance"}, rep["audience"])
		assert.Equal(t, map[string]any{"type": "key", "id": rep["owner"].(map[string]any)["id"], "name": "agent"}, rep["owner"])
		assert.Equal(t, "live", version(rep)["status"])
		assert.Regexp(t, `^ver_`, version(rep)["id"])

		path := "/api/v1/reports/" + id
		v2 := f.do(t, "POST", path+"/versions", f.agentKey, `{"content":`+jsonString(html("<h1>v2</h1>"))+`,"expectedVersion":1,"changeSummary":"second"}`, nil)
		require.Equal(t, 201, v2.status, string(v2.body))
		assert.EqualValues(t, 2, version(v2.decoded)["version"])
		assert.EqualValues(t, 2, v2.decoded["liveVersion"])
		stale := f.do(t, "POST", path+"/versions", f.agentKey, `{"content":`+jsonString(html("v3"))+`,"expectedVersion":1}`, nil)
		require.Equal(t, 409, stale.status, string(stale.body))
		assert.Equal(t, "version_conflict", errField(stale, "code"))
		assert.Equal(t, "expectedVersion", errField(stale, "field"))

		back := f.do(t, "POST", path+"/rollback", f.agentKey, `{"version":1}`, nil)
		require.Equal(t, 200, back.status, string(back.body))
		assert.EqualValues(t, 1, back.decoded["liveVersion"])
		assert.EqualValues(t, 2, back.decoded["latestVersion"])
		fwd := f.do(t, "POST", path+"/rollback", f.agentKey, `{"version":2}`, nil)
		require.Equal(t, 200, fwd.status, string(fwd.body))
		assert.EqualValues(t, 2, fwd.decoded["liveVersion"])
		assert.Equal(t, 404, f.do(t, "POST", path+"/rollback", f.agentKey, `{"version":7}`, nil).status)
		assert.Equal(t, 400, f.do(t, "POST", path+"/rollback", f.agentKey, `{}`, nil).status)

		vs := f.do(t, "GET", "/api/v1/reports/q3-cafe-review/versions", f.agentKey, "", nil)
		require.Equal(t, 200, vs.status, string(vs.body))
		assert.EqualValues(t, 2, vs.decoded["latestVersion"])
		data := vs.decoded["data"].([]any)
		require.Len(t, data, 2)
		assert.Equal(t, "live", data[0].(map[string]any)["status"])
		assert.Equal(t, "second", data[0].(map[string]any)["changeSummary"])
		assert.Equal(t, "previous", data[1].(map[string]any)["status"])

		arch := f.do(t, "POST", path+"/archive", f.agentKey, "", nil)
		require.Equal(t, 200, arch.status, string(arch.body))
		assert.Equal(t, true, arch.decoded["archived"])
		restored := f.do(t, "POST", path+"/archive", f.agentKey, `{"archived":false}`, nil)
		require.Equal(t, 200, restored.status)
		assert.Equal(t, false, restored.decoded["archived"])
		assert.EqualValues(t, 2, restored.decoded["liveVersion"])
		assert.Equal(t, []any{"Finance"}, restored.decoded["audience"])

		// Slugs with slashes, encoded and as they are; another
		// organisation's report is not found.
		nested := f.publish(t, `{"title":"Nested","slug":"team/q3","content":`+jsonString(html("n"))+`}`)
		for _, p := range []string{"/api/v1/reports/team%2Fq3", "/api/v1/reports/team/q3"} {
			r := f.do(t, "GET", p, f.agentKey, "", nil)
			require.Equal(t, 200, r.status, p)
			assert.Equal(t, nested["id"], r.decoded["id"])
		}
		r := f.do(t, "GET", "/api/v1/reports/team/q3/versions", f.agentKey, "", nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.EqualValues(t, 1, r.decoded["latestVersion"])
		assert.Equal(t, 404, f.do(t, "GET", path, f.otherAgent, "", nil).status)
		assert.Equal(t, 404, f.do(t, "POST", path+"/versions", f.otherAgent, `{"content":"x"}`, nil).status)

		list := f.do(t, "GET", "/api/v1/reports?limit=1", f.agentKey, "", nil)
		require.Equal(t, 200, list.status)
		assert.Len(t, list.decoded["data"], 1)
		assert.NotNil(t, list.decoded["nextCursor"])
	})
}

// TestPublishScan: a fake cloud key declines the version (never live,
// never stored, redacted everywhere); an off-origin password form holds
// it, firing publish.held.
func TestPublishScan(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		leaky := html(`<p>aws_access_key_id = ` + fakeAWSKeyID + `</p><p>aws_secret_access_key = ` + fakeAWSKey + `</p>`)
		rep := f.publish(t, `{"title":"Leaky","content":`+jsonString(leaky)+`}`)
		v := version(rep)
		assert.Equal(t, "declined", v["status"])
		assert.Nil(t, rep["liveVersion"])
		assert.EqualValues(t, 1, rep["latestVersion"])
		findings := v["findings"].([]any)
		require.NotEmpty(t, findings)
		first := findings[0].(map[string]any)
		assert.Equal(t, "index.html", first["file"])
		assert.Equal(t, "decline", first["severity"])
		vs := f.do(t, "GET", "/api/v1/reports/"+rep["id"].(string)+"/versions", f.agentKey, "", nil)
		for _, body := range [][]byte{vs.body, mustJSON(t, rep)} {
			assert.NotContains(t, string(body), fakeAWSKeyID)
			assert.NotContains(t, string(body), fakeAWSKey)
		}
		events, err := f.store.ListEvents(context.Background(), f.org.ID, rep["id"].(string))
		require.NoError(t, err)
		assert.Empty(t, events, "a declined version sends nothing")

		phish := html(`<form action="https://collect.example.net/login" method="post"><input name=u><input type=password name=p></form>`)
		held := f.publish(t, `{"title":"Phish","content":`+jsonString(phish)+`}`)
		assert.Equal(t, "held", version(held)["status"])
		assert.Nil(t, held["liveVersion"])
		events, err = f.store.ListEvents(context.Background(), f.org.ID, held["id"].(string))
		require.NoError(t, err)
		require.Len(t, events, 1)
		assert.Equal(t, "publish.held", events[0].Kind)

		list := f.do(t, "GET", "/api/v1/admin/held-versions", f.adminKey, "", nil)
		require.Equal(t, 200, list.status, string(list.body))
		data := list.decoded["data"].([]any)
		require.Len(t, data, 1)
		assert.Equal(t, held["id"], data[0].(map[string]any)["id"])
	})
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// upload asks for an upload URL and PUTs body to it.
func (f *fixture) upload(t *testing.T, contentType string, body []byte) (id, url string) {
	t.Helper()
	r := f.do(t, "POST", "/api/v1/uploads", f.agentKey, "", nil)
	require.Equal(t, 201, r.status, string(r.body))
	id, url = r.decoded["uploadId"].(string), r.decoded["uploadUrl"].(string)
	assert.Regexp(t, `^upl_`, id)
	put := f.put(t, strings.Replace(url, "http://assent.test", f.srv.URL, 1), contentType, body)
	require.Equal(t, 200, put.status, string(put.body))
	return id, url
}

func (f *fixture) put(t *testing.T, url, contentType string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest("PUT", url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	sent := req.Clone(req.Context())
	sent.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out := response{status: resp.StatusCode, header: resp.Header}
	out.body, _ = io.ReadAll(resp.Body)
	_ = json.Unmarshal(out.body, &out.decoded)
	f.checkContract(t, sent, out)
	return out
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, content := range files {
		fw, err := w.Create(name)
		require.NoError(t, err)
		_, err = fw.Write([]byte(content))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestUploads: a ZIP and an HTML upload publish; an upload is consumed by
// the publish that reads it; refusals for a second PUT, an unknown
// ticket, another type and a refused archive entry.
func TestUploads(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		site := zipOf(t, map[string]string{"site/index.html": html("<link rel=stylesheet href=a.css>"), "site/a.css": "h1{}", "site/img/x.svg": "<svg/>"})
		id, url := f.upload(t, "application/zip", site)
		rep := f.publish(t, `{"title":"Zipped","uploadId":"`+id+`"}`)
		assert.EqualValues(t, 3, version(rep)["files"])
		assert.Equal(t, "live", version(rep)["status"])

		again := f.do(t, "POST", "/api/v1/reports", f.agentKey, `{"title":"Again","uploadId":"`+id+`"}`, nil)
		assert.Equal(t, 404, again.status)
		assert.Equal(t, "upload_not_found", errField(again, "code"))
		putAgain := f.put(t, strings.Replace(url, "http://assent.test", f.srv.URL, 1), "application/zip", site)
		assert.Equal(t, 404, putAgain.status, "a consumed upload takes no bytes")
		assert.Equal(t, 404, f.put(t, f.srv.URL+"/uploads/nope", "text/html", []byte("x")).status)

		htmlID, htmlURL := f.upload(t, "text/html; charset=utf-8", []byte(html("uploaded")))
		second := f.put(t, strings.Replace(htmlURL, "http://assent.test", f.srv.URL, 1), "text/html", []byte("x"))
		assert.Equal(t, 409, second.status, "one PUT per upload")
		v2 := f.do(t, "POST", "/api/v1/reports/"+rep["id"].(string)+"/versions", f.agentKey, `{"uploadId":"`+htmlID+`","expectedVersion":1}`, nil)
		require.Equal(t, 201, v2.status, string(v2.body))
		assert.EqualValues(t, 1, version(v2.decoded)["files"])

		r := f.do(t, "POST", "/api/v1/uploads", f.agentKey, "", nil)
		require.Equal(t, 201, r.status)
		wrongType := f.put(t, strings.Replace(r.decoded["uploadUrl"].(string), "http://assent.test", f.srv.URL, 1), "application/pdf", []byte("%PDF"))
		assert.Equal(t, 415, wrongType.status)
		empty := f.put(t, strings.Replace(r.decoded["uploadUrl"].(string), "http://assent.test", f.srv.URL, 1), "text/html", nil)
		assert.Equal(t, 400, empty.status, "an empty upload is refused")
		assert.Contains(t, errField(empty, "message"), "the upload is empty")
		unsent := f.do(t, "POST", "/api/v1/reports", f.agentKey, `{"title":"Early","uploadId":"`+r.decoded["uploadId"].(string)+`"}`, nil)
		assert.Equal(t, 409, unsent.status, "nothing was PUT yet")

		evil, _ := f.upload(t, "application/zip", zipOf(t, map[string]string{"index.html": "x", "../evil.html": "x"}))
		bad := f.do(t, "POST", "/api/v1/reports", f.agentKey, `{"title":"Evil","uploadId":"`+evil+`"}`, nil)
		assert.Equal(t, 400, bad.status, string(bad.body))
		assert.Equal(t, "invalid_archive", errField(bad, "code"))
		assert.Contains(t, errField(bad, "message"), "../evil.html")

		other := f.do(t, "POST", "/api/v1/reports", f.otherAgent, `{"title":"Theirs","uploadId":"`+evil+`"}`, nil)
		assert.Equal(t, 404, other.status, "another organisation's upload")
	})
}

// TestCopyAndTemplates: the templates list, a copy of each template, and
// a copy of a report's live version owned by the caller without its
// audience.
func TestCopyAndTemplates(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		list := f.do(t, "GET", "/api/v1/templates", f.agentKey, "", nil)
		require.Equal(t, 200, list.status, string(list.body))
		tpls := list.decoded["data"].([]any)
		require.GreaterOrEqual(t, len(tpls), 3)
		for _, x := range tpls {
			tpl := x.(map[string]any)
			r := f.do(t, "POST", "/api/v1/reports/"+tpl["id"].(string)+"/copy", f.memberToken, "", nil)
			require.Equal(t, 201, r.status, string(r.body))
			assert.Equal(t, tpl["name"], r.decoded["title"])
			assert.Equal(t, "live", version(r.decoded)["status"], "a template passes the publish scan: %v", version(r.decoded)["findings"])
			assert.Equal(t, "member", r.decoded["owner"].(map[string]any)["type"])
		}
		assert.Equal(t, 404, f.do(t, "POST", "/api/v1/reports/tpl_nope/copy", f.agentKey, "", nil).status)

		src := f.publish(t, `{"title":"Source","slug":"src","classification":"confidential","audience":["everyone"],"files":[{"path":"index.html","content":"<h1>s</h1>"},{"path":"a.css","content":"h1{}"}]}`)
		cp := f.do(t, "POST", "/api/v1/reports/src/copy", f.memberToken, `{"slug":"team/copied"}`, nil)
		require.Equal(t, 201, cp.status, string(cp.body))
		assert.Equal(t, "Copy of Source", cp.decoded["title"])
		assert.Equal(t, "team/copied", cp.decoded["slug"])
		assert.Equal(t, []any{}, cp.decoded["audience"])
		assert.Equal(t, "confidential", cp.decoded["classification"])
		assert.EqualValues(t, 2, version(cp.decoded)["files"])
		assert.NotEqual(t, src["id"], cp.decoded["id"])
		assert.Equal(t, 409, f.do(t, "POST", "/api/v1/reports/src/copy", f.agentKey, `{"slug":"team/copied"}`, nil).status)

		held := f.publish(t, `{"title":"Held","content":`+jsonString(html(`<base href="https://elsewhere.example/">`))+`}`)
		noLive := f.do(t, "POST", "/api/v1/reports/"+held["id"].(string)+"/copy", f.agentKey, "", nil)
		assert.Equal(t, 409, noLive.status, "nothing live to copy")
	})
}

// TestDeclinedContentIsNeverStored: the blob store holds no file of a
// declined version.
func TestDeclinedContentIsNeverStored(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	f := newFixture(t, testenv.OpenDB(t, "sqlite"))
	secret := fmt.Sprintf("<p>%s %s</p>", fakeAWSKeyID, fakeAWSKey)
	rep := f.publish(t, `{"title":"Leak","files":[{"path":"index.html","content":"<h1>fine</h1>"},{"path":"leak.html","content":`+jsonString(secret)+`}]}`)
	require.Equal(t, "declined", version(rep)["status"])
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(fakeAWSKey)) {
			t.Errorf("%s holds the declined secret", p)
		}
		return err
	})
	require.NoError(t, err)
}

// TestHeldVersionsOnTheRealStack: an administrator releases one held
// version (it goes live, report.published) and declines another; a second
// decision is refused; keys other than admin keys are refused.
func TestHeldVersionsOnTheRealStack(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		phish := jsonString(html(`<form action="//collect.example.net/x"><input type="password" name="p"></form>`))
		held := s.publish(t, `{"title":"Held","slug":"held","content":`+phish+`}`)
		heldID := version(held)["id"].(string)
		require.Equal(t, "held", version(held)["status"])

		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/admin/held-versions/"+heldID+"/release", s.agentKey, "", nil).status)
		assert.Equal(t, 404, s.do(t, "POST", "/api/v1/admin/held-versions/"+heldID+"/release", s.otherAdmin, "", nil).status)
		key := map[string]string{"Idempotency-Key": "release-1"}
		rel := s.do(t, "POST", "/api/v1/admin/held-versions/"+heldID+"/release", s.adminKey, "", key)
		require.Equal(t, 200, rel.status, string(rel.body))
		assert.Equal(t, "live", version(rel.decoded)["status"])
		assert.EqualValues(t, 1, rel.decoded["liveVersion"])
		assert.Equal(t, "admin", version(rel.decoded)["decidedBy"])
		replay := s.do(t, "POST", "/api/v1/admin/held-versions/"+heldID+"/release", s.adminKey, "", key)
		assert.Equal(t, "true", replay.header.Get("Idempotency-Replayed"))
		again := s.do(t, "POST", "/api/v1/admin/held-versions/"+heldID+"/decline", s.adminKey, "", nil)
		assert.Equal(t, 409, again.status, string(again.body))
		assert.Equal(t, "invalid_state", errField(again, "code"))
		_, kinds := s.events(t, held["id"].(string))
		assert.Equal(t, []string{"publish.held", "report.published"}, kinds)

		v2 := s.do(t, "POST", "/api/v1/reports/held/versions", s.agentKey, `{"content":`+phish+`}`, nil)
		require.Equal(t, 201, v2.status, string(v2.body))
		dec := s.do(t, "POST", "/api/v1/admin/held-versions/"+version(v2.decoded)["id"].(string)+"/decline", s.adminKey, "", nil)
		require.Equal(t, 200, dec.status, string(dec.body))
		assert.Equal(t, "declined", version(dec.decoded)["status"])
		assert.EqualValues(t, 1, dec.decoded["liveVersion"])
		assert.EqualValues(t, 2, dec.decoded["latestVersion"])
		list := s.do(t, "GET", "/api/v1/admin/held-versions", s.adminKey, "", nil)
		assert.Empty(t, list.decoded["data"])
	})
}

// TestReportsJoinFlows: a report published with flowId is a member of the
// flow, its steps on the flow's timeline; a finished flow takes none.
func TestReportsJoinFlows(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		flow := f.do(t, "POST", "/api/v1/flows", f.agentKey, `{"title":"Quarter close"}`, nil)
		require.Equal(t, 201, flow.status)
		flowID := flow.decoded["id"].(string)
		rep := f.publish(t, `{"title":"Q3","flowId":"`+flowID+`","content":`+jsonString(html("q3"))+`}`)
		assert.Equal(t, flowID, rep["flowId"])
		got := f.do(t, "GET", "/api/v1/flows/"+flowID, f.agentKey, "", nil)
		require.Equal(t, 200, got.status, string(got.body))
		members := got.decoded["members"].([]any)
		require.Len(t, members, 1)
		m := members[0].(map[string]any)
		assert.Equal(t, "report", m["type"])
		assert.Equal(t, "live", m["status"])
		assert.Equal(t, rep["url"], m["url"])
		timeline := got.decoded["timeline"].([]any)
		last := timeline[len(timeline)-1].(map[string]any)
		assert.Equal(t, "published", last["action"])
		assert.Equal(t, rep["id"], last["subjectId"])

		require.Equal(t, 200, f.do(t, "POST", "/api/v1/flows/"+flowID+"/complete", f.agentKey, "", nil).status)
		late := f.do(t, "POST", "/api/v1/reports", f.agentKey, `{"title":"Late","flowId":"`+flowID+`","content":"x"}`, nil)
		assert.Equal(t, 409, late.status, string(late.body))
		assert.Equal(t, "flowId", errField(late, "field"))
	})
}

// TestFlowsShowOnlyReportsTheReaderSees: a member who may read flows but
// not one of the flow's reports sees neither its title among the members
// nor its steps on the timeline; its readers, and agent keys, see it.
func TestFlowsShowOnlyReportsTheReaderSees(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		cy, err := f.store.CreateMember(ctx, f.org.ID, "cy@example.com", "Cy", models.RoleMember)
		require.NoError(t, err)
		_, cyToken, err := f.store.CreateMemberToken(ctx, f.org.ID, cy.ID)
		require.NoError(t, err)
		flow := f.do(t, "POST", "/api/v1/flows", f.agentKey, `{"title":"Quarter close"}`, nil)
		require.Equal(t, 201, flow.status)
		flowID := flow.decoded["id"].(string)
		shared := f.publish(t, `{"title":"Q3 results","flowId":"`+flowID+`","audience":["everyone"],"content":`+jsonString(html("q3"))+`}`)
		hidden := f.publish(t, `{"title":"Layoff plan","flowId":"`+flowID+`","audience":["ada@example.com"],"content":`+jsonString(html("cuts"))+`}`)
		require.Equal(t, 403, f.do(t, "GET", "/api/v1/reports/"+hidden["id"].(string), cyToken, "", nil).status, "Cy may not read it")

		read := func(token string) (members []string, subjects []string, body string) {
			got := f.do(t, "GET", "/api/v1/flows/"+flowID, token, "", nil)
			require.Equal(t, 200, got.status, string(got.body))
			for _, m := range got.decoded["members"].([]any) {
				members = append(members, m.(map[string]any)["title"].(string))
			}
			for _, e := range got.decoded["timeline"].([]any) {
				subjects = append(subjects, e.(map[string]any)["subjectId"].(string))
			}
			return members, subjects, string(got.body)
		}
		members, subjects, body := read(cyToken)
		assert.Equal(t, []string{"Q3 results"}, members)
		assert.Contains(t, subjects, shared["id"])
		assert.NotContains(t, subjects, hidden["id"], "nor its steps")
		assert.NotContains(t, body, "Layoff plan")
		assert.NotContains(t, body, hidden["id"])
		for _, token := range []string{f.memberToken, f.agentKey} {
			members, subjects, _ = read(token)
			assert.Equal(t, []string{"Q3 results", "Layoff plan"}, members)
			assert.Contains(t, subjects, hidden["id"])
		}
		// A key reads reports by its scope: one for flows alone sees none.
		_, flowsOnly, err := f.store.CreateKey(ctx, f.org.ID, "flows only", models.KeyAgent, []string{scopes.FlowsRead})
		require.NoError(t, err)
		members, subjects, body = read(flowsOnly)
		assert.Empty(t, members)
		assert.NotContains(t, subjects, shared["id"])
		assert.NotContains(t, body, "Q3 results")
	})
}

// TestLostHoldIsStartedByTheReconciler: a held version whose workflow
// never started (its process died, or Temporal was slow to answer) is
// taken up by the reconciler and can then be released; released before
// the reconciler comes, its workflow is started then.
func TestLostHoldIsStartedByTheReconciler(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		page := "<base href=\"https://elsewhere.example/\">"
		lostHold := func(slug string) (*models.Report, *models.ReportVersion) {
			r, v, err := reports.Versions{Store: s.store}.Create(ctx, models.NewReport{OrganizationID: s.org.ID, Title: "Lost", Slug: slug, Classification: "internal"},
				models.Publication{State: models.VersionHeld, By: models.Actor{ID: "key_x", Name: "agent"},
					Findings: []models.Finding{{Rule: "base-off-origin", File: "index.html", Line: 1, Excerpt: page, Severity: "hold"}}}, nil)
			require.NoError(t, err)
			return r, v
		}
		early, earlyV := lostHold("early")
		rel := s.do(t, "POST", "/api/v1/admin/held-versions/"+earlyV.ID+"/release", s.adminKey, "", nil)
		require.Equal(t, 200, rel.status, "released before the reconciler: %s", rel.body)
		assert.Equal(t, early.ID, rel.decoded["id"])

		r, v := lostHold("lost")
		n, err := s.services.Reports.StartUnowned(ctx, time.Now().Add(time.Minute), 10)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		require.Eventually(t, func() bool {
			got, err := s.store.GetVersion(ctx, s.org.ID, v.ID)
			return err == nil && got.HoldStarted
		}, 10*time.Second, 50*time.Millisecond)
		n, err = s.services.Reports.StartUnowned(ctx, time.Now().Add(time.Minute), 10)
		require.NoError(t, err)
		assert.Zero(t, n, "started once")
		rel = s.do(t, "POST", "/api/v1/admin/held-versions/"+v.ID+"/release", s.adminKey, "", nil)
		require.Equal(t, 200, rel.status, string(rel.body))
		assert.Equal(t, r.ID, rel.decoded["id"])
		assert.EqualValues(t, 1, rel.decoded["liveVersion"])
	})
}

// TestUnencodedSlugLogsOnce: a request routed a second time, with its
// slug encoded, writes one access-log line, with the status it got.
func TestUnencodedSlugLogsOnce(t *testing.T) {
	t.Parallel()
	logs := &testenv.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	s := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	ctx := context.Background()
	org, err := s.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	_, key, err := s.CreateKey(ctx, org.ID, "agent", models.KeyAgent, []string{"reports:read", "reports:write"})
	require.NoError(t, err)
	srv := httptest.NewServer(api.New(api.Deps{Logger: log, BaseURL: "http://assent.test",
		Services: app.Build(publishing(t, app.Deps{Store: s, Logger: log})).API()}))
	defer srv.Close()
	f := &fixture{srv: srv}
	require.Equal(t, 201, f.do(t, "POST", "/api/v1/reports", key, `{"title":"Nested","slug":"team/q3","content":"<h1>n</h1>"}`, nil).status)
	logs.Reset()
	require.Equal(t, 200, f.do(t, "GET", "/api/v1/reports/team/q3/versions", key, "", nil).status)
	// The line is written once the response is sent.
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), `"msg":"http request"`) }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, 1, strings.Count(logs.String(), `"msg":"http request"`), logs.String())
	assert.Contains(t, logs.String(), `"status":200`)
}

// TestUploadOverTheLimit: an upload of 100 MB and one byte, streamed, is
// refused with 413 and leaves nothing to publish.
func TestUploadOverTheLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.OpenDB(t, "sqlite"))
	r := f.do(t, "POST", "/api/v1/uploads", f.agentKey, "", nil)
	require.Equal(t, 201, r.status)
	url := strings.Replace(r.decoded["uploadUrl"].(string), "http://assent.test", f.srv.URL, 1)
	req, err := http.NewRequest("PUT", url, io.LimitReader(zeros{}, 100<<20+1)) // no length: sent chunked
	require.NoError(t, err)
	req.Header.Set("Content-Type", "text/html")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 413, resp.StatusCode, string(body))
	assert.Contains(t, string(body), "payload_too_large")
	unsent := f.do(t, "POST", "/api/v1/reports", f.agentKey, `{"title":"Big","uploadId":"`+r.decoded["uploadId"].(string)+`"}`, nil)
	assert.Equal(t, 409, unsent.status, "nothing was kept: the upload still has no content")
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
