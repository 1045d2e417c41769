package assent_test

import (
	"archive/zip"
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	assent "github.com/assent-hq/assent/sdk/go"
)

// opsOf records the operations c calls.
func opsOf(c *assent.Client) func() []string {
	var mu sync.Mutex
	var ops []string
	assent.Observe(c, func(op string, _ int, _ []byte) { mu.Lock(); ops = append(ops, op); mu.Unlock() })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := ops
		ops = nil
		return out
	}
}

func TestE2EPublishFromContentFilesAndPath(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	c := agent(t)
	ops := opsOf(c)
	page := "<!doctype html><title>P</title><h1>Publish</h1>"
	slug := tag("sdk/go-publish")
	r := must(c.Reports.CreateFrom(ctx, &assent.ReportCreate{Title: "Publish", Slug: &slug}, assent.FromContent(page)))
	if got := ops(); !slices.Equal(got, []string{"createReport"}) {
		t.Fatalf("small content went %v", got)
	}
	check := func(version int64, files int64, wantOps ...string) {
		t.Helper()
		if got := ops(); !slices.Equal(got, wantOps) {
			t.Fatalf("version %d went %v, want %v", version, got, wantOps)
		}
		vs := must(c.Reports.Versions(ctx, r.ID))
		if vs.LatestVersion != version {
			t.Fatalf("latest version %d, want %d", vs.LatestVersion, version)
		}
		ops()
		for _, v := range vs.Data {
			if v.ID == vs.Data[0].ID && v.Files != files {
				t.Fatalf("version %d has %d files, want %d", version, v.Files, files)
			}
		}
	}
	check(1, 1)

	// Text files go inline; a binary one makes a ZIP, through a ticket.
	must(c.Reports.PublishFrom(ctx, slug, assent.FromFiles(map[string][]byte{
		"index.html": []byte(page), "style.css": []byte("h1{color:red}")}), &assent.VersionCreate{ExpectedVersion: assent.Ptr[int64](1)}))
	check(2, 2, "publishVersion")
	png := []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe}
	must(c.Reports.PublishFrom(ctx, slug, assent.FromFiles(map[string][]byte{
		"index.html": []byte(page + `<img src="a.png">`), "a.png": png}), nil))
	check(3, 2, "createUpload", "putUpload", "publishVersion")

	// Content beyond InlineLimit goes through a ticket by itself.
	big := page + "<p>" + strings.Repeat("x", assent.InlineLimit) + "</p>"
	must(c.Reports.PublishFrom(ctx, slug, assent.FromContent(big), &assent.VersionCreate{ExpectedVersion: assent.Ptr[int64](3), ChangeSummary: "big"}))
	check(4, 1, "createUpload", "putUpload", "publishVersion")

	// From disk: a folder (zipped), an HTML file (inline), a ZIP (uploaded).
	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	must(0, os.MkdirAll(filepath.Join(site, "css"), 0o755))
	must(0, os.WriteFile(filepath.Join(site, "index.html"), []byte(page), 0o644))
	must(0, os.WriteFile(filepath.Join(site, "css", "a.css"), []byte("p{}"), 0o644))
	must(c.Reports.PublishFrom(ctx, slug, assent.FromPath(site), nil))
	check(5, 2, "createUpload", "putUpload", "publishVersion")
	file := filepath.Join(dir, "one.html")
	must(0, os.WriteFile(file, []byte(page), 0o644))
	must(c.Reports.PublishFrom(ctx, slug, assent.FromPath(file), nil))
	check(6, 1, "publishVersion")
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w := must(z.Create("index.html"))
	must(w.Write([]byte(page)))
	must(0, z.Close())
	archive := filepath.Join(dir, "site.zip")
	must(0, os.WriteFile(archive, buf.Bytes(), 0o644))
	must(c.Reports.PublishFrom(ctx, slug, assent.FromPath(archive), nil))
	check(7, 1, "createUpload", "putUpload", "publishVersion")

	// A stale expected version is refused after the upload.
	_, err := c.Reports.PublishFrom(ctx, slug, assent.FromContent(big), &assent.VersionCreate{ExpectedVersion: assent.Ptr[int64](2)})
	if e := apiError(t, err, 409); e.Code != assent.CodeVersionConflict {
		t.Fatal(e)
	}
	ops()
	// A new report from a folder, and refusals before anything is sent.
	r2 := must(c.Reports.CreateFrom(ctx, &assent.ReportCreate{Title: "From a folder"}, assent.FromPath(site)))
	if r2.LatestVersion != 1 {
		t.Fatal(r2.LatestVersion)
	}
	ops()
	if _, err := c.Reports.CreateFrom(ctx, &assent.ReportCreate{Title: "x"}, assent.FromPath(dir)); err == nil {
		t.Fatal("a folder without index.html was published")
	}
	if _, err := c.Reports.CreateFrom(ctx, &assent.ReportCreate{Title: "x", Content: assent.Ptr("a")}, assent.FromContent("b")); err == nil {
		t.Fatal("two contents were accepted")
	}
	if got := ops(); len(got) != 0 {
		t.Fatalf("refusals sent %v", got)
	}
}

// recorder is a transport that keeps each request it sends.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Clone(req.Context()))
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// The generated PutUpload sends to the ticket's URL without the key, also
// when the client reaches the API at another address (here a gateway
// that passes only /api/ on).
func TestE2EPutUploadSendsToTheTicketsURL(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	d := startDev(t)
	target, _ := url.Parse(d.BaseURL)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }} // Host: the instance's
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			http.NotFound(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer gateway.Close()
	rec := &recorder{}
	c := assent.New(gateway.URL, d.AgentKey, assent.WithHTTPClient(&http.Client{Transport: rec, Timeout: time.Minute}))

	slug := tag("sdk/go-put-upload")
	must(c.Reports.CreateFrom(ctx, &assent.ReportCreate{Title: "Put upload", Slug: &slug}, assent.FromContent("<h1>one</h1>")))
	ticket := must(c.Reports.CreateUpload(ctx))
	got := must(c.Reports.PutUpload(ctx, ticket, []byte("<h1>two</h1>"), assent.WithContentType("text/html")))
	if got.UploadID != ticket.UploadID || got.ContentType != "text/html" || got.Bytes != 12 {
		t.Fatalf("the PUT answered %+v", got)
	}
	put := rec.reqs[len(rec.reqs)-1]
	if put.Method != http.MethodPut || put.URL.String() != ticket.UploadURL || put.Header.Get("Authorization") != "" {
		t.Fatalf("sent %s %s with Authorization %q, want PUT %s without", put.Method, put.URL, put.Header.Get("Authorization"), ticket.UploadURL)
	}
	r := must(c.Reports.Publish(ctx, slug, &assent.VersionCreate{UploadID: &ticket.UploadID}))
	if r.LiveVersion == nil || *r.LiveVersion != 2 {
		t.Fatalf("published %+v", r.LiveVersion)
	}

	_, err := c.Reports.PutUpload(ctx, &assent.Upload{}, []byte("x"))
	if e, ok := err.(*assent.Error); !ok || e.Field != "uploadUrl" {
		t.Fatalf("a ticket without its URL: %v", err)
	}
}
