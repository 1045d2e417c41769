package api_test

// Benchmarks of publishing on the stack `assent dev` runs (see
// bench_test.go): a 2 MB single-file report and a 20 MB ZIP of 500 files,
// scan included, beside a 1 KB page as the baseline of what a publish costs
// whatever its size. Results and how to run them: docs/benchmarks.md.

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// benchReport2MB is a realistic report of about size bytes: headings,
// paragraphs, tables, a style and a script.
func benchReport(size int) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html lang=en><head><title>Quarterly report</title><style>td{padding:4px}</style>" +
		"<script>const data=[1,2,3];function draw(){return data.map(x=>x*2)}</script></head><body>\n")
	for i := 0; b.Len() < size-200; i++ {
		fmt.Fprintf(&b, "<h2>Section %d</h2>\n<p>Revenue grew by %d%% against plan, driven by renewals in the north region.</p>\n<table>", i, i%17)
		for j := range 8 {
			fmt.Fprintf(&b, "<tr><td>Region %d</td><td>%d</td><td>%d</td></tr>\n", j, i*j, i+j)
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// latencies collects each operation's time and reports p50 and p99.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(l[len(l)*99/100].Microseconds())/1000, "p99-ms")
}

// heapPeak samples the heap in use while it runs and returns the most seen.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); return peak.Load() }
}

func BenchmarkPublish(b *testing.B) {
	s := newBenchStack(b, "sqlite")
	body, err := s.call("POST", "/api/v1/reports", `{"title":"Bench","slug":"bench","content":"<h1>v1</h1>"}`, http.StatusCreated)
	require.NoError(b, err)
	var rep struct{ ID string }
	require.NoError(b, json.Unmarshal(body, &rep))
	versions := "/api/v1/reports/" + rep.ID + "/versions"

	for _, c := range []struct {
		name string
		size int
	}{{"1KB-page-baseline", 1 << 10}, {"2MB-single-file", 2<<20 - 4096}} {
		page, err := json.Marshal(map[string]string{"content": benchReport(c.size)})
		require.NoError(b, err)
		b.Run(c.name, func(b *testing.B) {
			var lat latencies
			b.SetBytes(int64(c.size))
			for b.Loop() {
				start := time.Now()
				if _, err := s.call("POST", versions, string(page), http.StatusCreated); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			lat.report(b)
		})
	}

	// Two archive sizes with the same number of files: the heap at its
	// peak follows the largest file, not the archive.
	for _, c := range []struct {
		name        string
		files, size int
	}{{"20MB-zip-500-files", 500, 20 << 20}, {"80MB-zip-500-files", 500, 80 << 20}} {
		zipped := benchZip(b, c.files, c.size)
		b.Run(c.name, func(b *testing.B) {
			var lat latencies
			b.SetBytes(int64(c.size))
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := heapPeak()
			for b.Loop() {
				start := time.Now()
				s.publishZip(b, versions, zipped)
				lat = append(lat, time.Since(start))
			}
			b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MB")
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MB/op")
			lat.report(b)
		})
	}
}

// publishZip uploads zipped and publishes it as the next version.
func (s *benchStack) publishZip(b *testing.B, versions string, zipped []byte) {
	out, err := s.call("POST", "/api/v1/uploads", "", http.StatusCreated)
	if err != nil {
		b.Fatal(err)
	}
	var up struct{ UploadID, UploadURL string }
	require.NoError(b, json.Unmarshal(out, &up))
	req, _ := http.NewRequest("PUT", strings.Replace(up.UploadURL, "http://assent.test", s.url, 1), bytes.NewReader(zipped))
	req.Header.Set("Content-Type", "application/zip")
	resp, err := s.http.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("upload: %v %v", err, resp)
	}
	resp.Body.Close()
	if _, err := s.call("POST", versions, `{"uploadId":"`+up.UploadID+`"}`, http.StatusCreated); err != nil {
		b.Fatal(err)
	}
}

// benchZip makes a ZIP of n HTML files of size bytes in all, each
// different, so none is stored only once.
func benchZip(b *testing.B, n, size int) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	page := benchReport(size / n)
	for i := range n {
		name := fmt.Sprintf("pages/%03d.html", i)
		if i == 0 {
			name = "index.html"
		}
		fw, err := w.Create(name)
		require.NoError(b, err)
		fmt.Fprintf(fw, "<!-- page %d -->\n%s", i, page)
	}
	require.NoError(b, w.Close())
	return buf.Bytes()
}
