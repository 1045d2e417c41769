package reportsite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
)

// oneByte reads a page a byte at a time, so every match is split
// between reads; it seeks like a blob.
type oneByte struct{ *bytes.Reader }

func (o oneByte) Read(p []byte) (int, error) { return iotest.OneByteReader(o.Reader).Read(p) }

// tagged is page as served: selectTag where selectTagOffset puts it,
// read whole and a byte at a time alike.
func tagged(t *testing.T, page string) string {
	t.Helper()
	at, err := selectTagOffset(bytes.NewReader([]byte(page)))
	require.NoError(t, err)
	split, err := selectTagOffset(oneByte{bytes.NewReader([]byte(page))})
	require.NoError(t, err)
	require.Equal(t, at, split, "a match split between reads is found at the same place: %q", page)
	return page[:at] + selectTag + page[at:]
}

var headEndRegexp = regexp.MustCompile(`(?i)</head\s*>`)

// withSelectTagRegexp is how the tag was placed with the page in memory,
// kept to hold the streaming search to the same answers.
func withSelectTagRegexp(page string) string {
	at := len(doctype.FindString(page))
	if loc := headEndRegexp.FindStringIndex(page); loc != nil {
		at = loc[0]
	}
	return page[:at] + selectTag + page[at:]
}

// The streaming search places the tag where the regexp did over the whole
// page, for pages built from the pieces that matter, split anywhere.
func TestSelectTagPlacedAsBefore(t *testing.T) {
	pieces := []string{"<", "/", "h", "H", "e", "A", "d", "D", " ", "\n", "\t", "\v", ">", "x", "é", "\xff", "</head", "</HEAD ", "<!--", "-->",
		"<!doctype html>", "<!DOCTYPE", "\ufeff", "<head>", "</he", "ad>"}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		var b strings.Builder
		for range rnd.IntN(14) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		page := b.String()
		assert.Equal(t, withSelectTagRegexp(page), tagged(t, page), "%q", page)
	}
}

// fixture is a report host serving one public report from a real blob
// store.
type fixture struct {
	site  *Site
	store *models.Store
	rep   *models.Report
	files map[string][]byte
}

func newFixture(t *testing.T, files map[string][]byte) *fixture {
	t.Helper()
	ctx := context.Background()
	store := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	blobs, err := blobstore.Open(ctx, "", t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = blobs.Close() })
	org, err := store.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	pub := models.Publication{State: models.VersionPublished, By: models.Actor{ID: "key_1", Name: "agent"}}
	for name, data := range files {
		sum, err := blobs.Put(ctx, data)
		require.NoError(t, err)
		pub.Files = append(pub.Files, models.ManifestFile{Path: name, SHA256: sum, Size: int64(len(data))})
	}
	rep, _, err := reports.Versions{Store: store}.Create(ctx, models.NewReport{OrganizationID: org.ID, Title: "Big", Slug: "big", SlugGiven: true,
		Classification: models.ClassInternal, Grants: []models.NewGrant{{Kind: models.GrantPublic, Name: "public"}}}, pub, nil)
	require.NoError(t, err)
	site, err := New(Deps{Reports: reports.New(reports.Deps{Store: store, Blobs: blobs, BaseURL: "https://app.example.com"}),
		Blobs: blobs, AppURL: "https://app.example.com", Domain: "reports.example.com",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	return &fixture{site: site, store: store, rep: rep, files: files}
}

func (f *fixture) request(method, path string, header map[string]string) *http.Request {
	req := httptest.NewRequest(method, path, nil)
	req.Host = f.rep.Key + ".reports.example.com"
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req
}

func (f *fixture) get(t *testing.T, path string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	f.site.Route(http.NotFoundHandler()).ServeHTTP(w, f.request(http.MethodGet, path, header))
	return w
}

// counting is a response that keeps only how much was written and its
// digest, so what a request costs is the handler's alone.
type counting struct {
	header http.Header
	status int
	n      int64
	sum    hashWriter
}

type hashWriter interface {
	io.Writer
	Sum([]byte) []byte
}

func (c *counting) Header() http.Header { return c.header }
func (c *counting) WriteHeader(s int)   { c.status = s }
func (c *counting) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.n += int64(len(p))
	return c.sum.Write(p)
}

// A large page and a large file are streamed: serving one allocates a
// small fraction of its size, whoever asks how often (the page was read
// whole for every GET: 16 readers of a 22 MB page took 450 MB).
func TestLargeFilesAreStreamed(t *testing.T) {
	const size = 24 << 20
	page := make([]byte, size)
	for i := range page {
		page[i] = "abcdefgh <p>\n"[i%13]
	}
	// </head> near the end: finding the tag's place reads it all too.
	copy(page[size-100:], "</head><body>")
	bin := bytes.Repeat([]byte{0, 1, 2, 3, 4, 5, 6, 7}, size/8)
	f := newFixture(t, map[string][]byte{"index.html": page, "data.bin": bin})
	want := map[string][]byte{
		"/":         sha(append(append(append([]byte{}, page[:size-100]...), selectTag...), page[size-100:]...)),
		"/data.bin": sha(bin),
	}
	handler := f.site.Route(http.NotFoundHandler())
	for path, sum := range want {
		serve := func() *counting {
			w := &counting{header: http.Header{}, sum: sha256.New()}
			handler.ServeHTTP(w, f.request(http.MethodGet, path, nil))
			return w
		}
		first := serve() // finds the page's tag place once
		require.Equal(t, http.StatusOK, first.status, path)
		const runs = 4
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			w := serve()
			require.Equal(t, http.StatusOK, w.status, path)
			assert.Equal(t, sum, w.sum.Sum(nil), "%s: the bytes served", path)
		}
		runtime.ReadMemStats(&after)
		perRequest := (after.TotalAlloc - before.TotalAlloc) / runs
		t.Logf("%s: %d bytes allocated per request", path, perRequest)
		assert.Less(t, perRequest, uint64(size/8), "%s is streamed, not held", path)
	}
}

func sha(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// Ranges, ETags and 304s, on files and pages; a page's tag is in it once,
// also when </head> falls across the search's reads.
func TestRangesAndValidators(t *testing.T) {
	bin := make([]byte, 100_000)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	split := strings.Repeat("x", 32<<10-3) + "</head><body>after</body>" // "</h" | "ead>" at the 32 KB read
	f := newFixture(t, map[string][]byte{"data.bin": bin, "index.html": []byte("<!doctype html><title>T</title></head><p>x</p>"),
		"split.html": []byte(split), "bare.html": []byte("<!doctype html>")})

	w := f.get(t, "/data.bin", nil)
	require.Equal(t, http.StatusOK, w.Code)
	etag := w.Header().Get("ETag")
	assert.Equal(t, `"`+blobstore.Sum(bin)+`"`, etag, "the content hash, strong")
	assert.Equal(t, "bytes", w.Header().Get("Accept-Ranges"))
	assert.Equal(t, bin, w.Body.Bytes())

	part := f.get(t, "/data.bin", map[string]string{"Range": "bytes=70000-70009"})
	require.Equal(t, http.StatusPartialContent, part.Code)
	assert.Equal(t, bin[70000:70010], part.Body.Bytes())
	assert.Equal(t, "bytes 70000-70009/100000", part.Header().Get("Content-Range"))
	assert.Equal(t, "10", part.Header().Get("Content-Length"))
	assert.Equal(t, "nosniff", part.Header().Get("X-Content-Type-Options"), "the host's headers stay")
	assert.NotEmpty(t, part.Header().Get("Content-Security-Policy"))
	tail := f.get(t, "/data.bin", map[string]string{"Range": "bytes=-5"})
	require.Equal(t, http.StatusPartialContent, tail.Code)
	assert.Equal(t, bin[len(bin)-5:], tail.Body.Bytes())
	outside := f.get(t, "/data.bin", map[string]string{"Range": "bytes=200000-"})
	assert.Equal(t, http.StatusRequestedRangeNotSatisfiable, outside.Code)
	assert.NotEmpty(t, outside.Header().Get("Content-Security-Policy"))

	for _, inm := range []string{etag, `"other", ` + etag, "W/" + etag, "*"} {
		nm := f.get(t, "/data.bin", map[string]string{"If-None-Match": inm})
		assert.Equal(t, http.StatusNotModified, nm.Code, inm)
		assert.Empty(t, nm.Body.Bytes())
	}
	assert.Equal(t, http.StatusOK, f.get(t, "/data.bin", map[string]string{"If-None-Match": `"other"`}).Code)

	pageWant := "<!doctype html><title>T</title>" + selectTag + "</head><p>x</p>"
	page := f.get(t, "/", nil)
	require.Equal(t, http.StatusOK, page.Code)
	assert.Equal(t, pageWant, page.Body.String())
	assert.Equal(t, "text/html; charset=utf-8", page.Header().Get("Content-Type"))
	pageTag := page.Header().Get("ETag")
	assert.Equal(t, `"`+blobstore.Sum(f.files["index.html"])+"-"+selectTagSum+`"`, pageTag)
	assert.Equal(t, http.StatusNotModified, f.get(t, "/", map[string]string{"If-None-Match": pageTag}).Code)
	assert.Equal(t, http.StatusOK, f.get(t, "/", map[string]string{"If-None-Match": etag}).Code, "another file's tag")
	// A page's ranges are of the page as served, tag and all.
	across := f.get(t, "/", map[string]string{"Range": "bytes=25-60"})
	require.Equal(t, http.StatusPartialContent, across.Code)
	assert.Equal(t, pageWant[25:61], across.Body.String())
	after := f.get(t, "/", map[string]string{"Range": "bytes=80-"})
	require.Equal(t, http.StatusPartialContent, after.Code)
	assert.Equal(t, pageWant[80:], after.Body.String())

	sp := f.get(t, "/split.html", nil)
	require.Equal(t, http.StatusOK, sp.Code)
	assert.Equal(t, 1, strings.Count(sp.Body.String(), selectTag))
	assert.Equal(t, strings.Repeat("x", 32<<10-3)+selectTag+"</head><body>after</body>", sp.Body.String())
	bare := f.get(t, "/bare.html", nil)
	assert.Equal(t, "<!doctype html>"+selectTag, bare.Body.String(), "a tag at the very end")

	head := httptest.NewRecorder()
	f.site.Route(http.NotFoundHandler()).ServeHTTP(head, f.request(http.MethodHead, "/", nil))
	assert.Equal(t, http.StatusOK, head.Code)
	assert.Equal(t, strconv.Itoa(len(pageWant)), head.Header().Get("Content-Length"), "HEAD counts the tag")
	assert.Empty(t, head.Body.Bytes())
}
