package api_test

// Benchmarks of publishing on the stack `assent dev` runs (see
// bench_test.go): a 2 MB single-file report and ZIPs of 500 files up to the
// upload limit, scan included, beside a 1 KB page as the baseline of what a
// publish costs whatever its size. Each case reports the process's resident
// memory above what it held before. Results and how to run them:
// docs/benchmarks.md.

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/bundle"
	"github.com/assent-hq/assent/internal/procstatus"
)

// benchReport is a realistic report of about size bytes: headings,
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

// extraRSS watches the process's resident memory while a case runs; stop
// reports its peak above what was resident at the start, as extra-RSS-MB.
// The start follows a collection that returns freed pages to the system, so
// it is what the process holds, not garbage left by the case before. The
// kernel keeps the peak (VmHWM, reset by writing 5 to clear_refs); where
// the reset is refused VmRSS is sampled every 2 ms instead. Not on Linux,
// nothing is reported.
func extraRSS(b *testing.B) (stop func()) {
	runtime.GC()
	debug.FreeOSMemory()
	before, ok := procstatus.KB(procstatus.Self, "VmRSS")
	if !ok {
		return func() {}
	}
	if os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil {
		return func() {
			peak, _ := procstatus.KB(procstatus.Self, "VmHWM")
			b.ReportMetric(float64(peak-before)/1024, "extra-RSS-MB")
		}
	}
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		for {
			if rss, _ := procstatus.KB(procstatus.Self, "VmRSS"); rss > peak.Load() {
				peak.Store(rss)
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() {
		close(done)
		b.ReportMetric(float64(peak.Load()-before)/1024, "extra-RSS-MB")
	}
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
			rss := extraRSS(b)
			for b.Loop() {
				start := time.Now()
				if _, err := s.call("POST", versions, string(page), http.StatusCreated); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			rss()
			lat.report(b)
		})
	}

	// Archive sizes up to the upload limit with the same number of files:
	// memory follows the largest file, not the archive. The limit holds
	// twice, on the bytes uploaded and on the bytes unpacked, so the last
	// archive stores its files uncompressed to be at the limit both ways.
	for _, c := range []struct {
		name        string
		files, size int
		method      uint16
	}{
		{"20MB-zip-500-files", 500, 20 << 20, zip.Deflate},
		{"80MB-zip-500-files", 500, 80 << 20, zip.Deflate},
		{"100MB-zip-500-files", 500, 100<<20 - 200<<10, zip.Deflate},
		{"100MB-stored-zip-500-files", 500, 100<<20 - 300<<10, zip.Store},
	} {
		zipped, size, unpacked := benchZip(b, c.files, c.size, c.method)
		require.LessOrEqual(b, unpacked, bundle.MaxArchiveBytes, "unpacked")
		require.LessOrEqual(b, size, int64(bundle.MaxArchiveBytes), "uploaded")
		b.Run(c.name, func(b *testing.B) {
			var lat latencies
			b.SetBytes(int64(unpacked))
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			rss := extraRSS(b)
			stop := heapPeak()
			for b.Loop() {
				start := time.Now()
				s.publishZip(b, versions, zipped)
				lat = append(lat, time.Since(start))
			}
			b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MB")
			rss()
			// After the loop: its start drops metrics reported before.
			b.ReportMetric(float64(size)/(1<<20), "upload-MB")
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MB/op")
			lat.report(b)
		})
	}
}

// publishZip uploads the archive in the file zipped and publishes it as the
// next version.
func (s *benchStack) publishZip(b *testing.B, versions, zipped string) {
	out, err := s.call("POST", "/api/v1/uploads", "", http.StatusCreated)
	if err != nil {
		b.Fatal(err)
	}
	var up struct{ UploadID, UploadURL string }
	require.NoError(b, json.Unmarshal(out, &up))
	f, err := os.Open(zipped)
	require.NoError(b, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(b, err)
	req, _ := http.NewRequest("PUT", strings.Replace(up.UploadURL, "http://assent.test", s.url, 1), f)
	req.ContentLength = st.Size()
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

// benchZip writes a ZIP of n HTML files of about size bytes in all, each
// different, so none is stored only once, compressed by method. It returns
// the file's path, its size and the bytes unpacked. The archive is sent from
// a file, as an agent sends it: held in this process's heap it would count
// in the memory measured, and double the collector's target with it.
func benchZip(b *testing.B, n, size int, method uint16) (string, int64, int) {
	path := filepath.Join(b.TempDir(), "upload.zip")
	f, err := os.Create(path)
	require.NoError(b, err)
	defer f.Close()
	w := zip.NewWriter(f)
	page := benchReport(size / n)
	unpacked := 0
	for i := range n {
		name := fmt.Sprintf("pages/%03d.html", i)
		if i == 0 {
			name = "index.html"
		}
		fw, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		require.NoError(b, err)
		k, err := fmt.Fprintf(fw, "<!-- page %d -->\n%s", i, page)
		require.NoError(b, err)
		unpacked += k
	}
	require.NoError(b, w.Close())
	st, err := f.Stat()
	require.NoError(b, err)
	return path, st.Size(), unpacked
}
