package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/apperr"
)

type entry struct {
	name, content string
	mode          fs.FileMode
}

func zipOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		fw, err := w.CreateHeader(h)
		require.NoError(t, err)
		_, err = io.WriteString(fw, e.content)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func readAll(b []byte) ([]File, error) {
	var out []File
	err := ReadZip(bytes.NewReader(b), int64(len(b)), func(f File) error {
		out = append(out, f)
		return nil
	})
	return out, err
}

func paths(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

func TestReadZip(t *testing.T) {
	cases := []struct {
		name    string
		entries []entry
		want    []string
		code    string
		mention string
	}{
		{"root index", []entry{{name: "index.html", content: "<h1>"}, {name: "css/a.css", content: "a"}}, []string{"index.html", "css/a.css"}, "", ""},
		{"nested root", []entry{{name: "site/", mode: fs.ModeDir | 0o755}, {name: "site/index.html", content: "x"}, {name: "site/a.css", content: "a"}}, []string{"index.html", "a.css"}, "", ""},
		{"macOS metadata skipped", []entry{{name: "index.html", content: "x"}, {name: "__MACOSX/._index.html", content: "junk"}, {name: "img/.DS_Store", content: "junk"}}, []string{"index.html"}, "", ""},
		{"traversal", []entry{{name: "index.html", content: "x"}, {name: "../evil.html", content: "x"}}, nil, apperr.InvalidArchive, "../evil.html"},
		{"traversal inside", []entry{{name: "index.html", content: "x"}, {name: "a/../../evil.html", content: "x"}}, nil, apperr.InvalidArchive, "a/../../evil.html"},
		{"absolute", []entry{{name: "/etc/passwd", content: "x"}, {name: "index.html", content: "x"}}, nil, apperr.InvalidArchive, "/etc/passwd"},
		{"backslash", []entry{{name: "index.html", content: "x"}, {name: `a\b.html`, content: "x"}}, nil, apperr.InvalidArchive, `a\\b.html`},
		{"drive", []entry{{name: "index.html", content: "x"}, {name: `C:/x.html`, content: "x"}}, nil, apperr.InvalidArchive, "C:/x.html"},
		{"symlink", []entry{{name: "index.html", content: "x"}, {name: "link", content: "/etc/passwd", mode: fs.ModeSymlink | 0o777}}, nil, apperr.InvalidArchive, "symbolic link"},
		{"duplicate", []entry{{name: "index.html", content: "x"}, {name: "index.html", content: "y"}}, nil, apperr.InvalidArchive, "twice"},
		{"no index", []entry{{name: "a.html", content: "x"}}, nil, apperr.InvalidArchive, "index.html"},
		{"two top folders", []entry{{name: "a/index.html", content: "x"}, {name: "b/index.html", content: "x"}}, nil, apperr.InvalidArchive, "index.html"},
		{"index too deep", []entry{{name: "a/b/index.html", content: "x"}}, nil, apperr.InvalidArchive, "index.html"},
		{"empty", nil, nil, apperr.InvalidArchive, "index.html"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files, err := readAll(zipOf(t, c.entries...))
			if c.code == "" {
				require.NoError(t, err)
				assert.ElementsMatch(t, c.want, paths(files))
				return
			}
			e, ok := apperr.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, c.code, e.Code)
			assert.Contains(t, e.Message, c.mention)
		})
	}
	_, err := readAll([]byte("not a zip"))
	assert.True(t, apperr.Is(err, apperr.InvalidArchive), "%v", err)
}

// TestZipBombIsStopped: 200 MB of zeros in a small archive is refused
// from its declared size, before any of it is read.
func TestZipBombIsStopped(t *testing.T) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	fw, err := w.Create("index.html")
	require.NoError(t, err)
	zeros := make([]byte, 1<<20)
	for range 200 {
		_, err := fw.Write(zeros)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	require.Less(t, buf.Len(), 1<<20, "the bomb is small")

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = readAll(buf.Bytes())
	runtime.ReadMemStats(&after)
	assert.True(t, apperr.Is(err, apperr.PayloadTooLarge), "%v", err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(10<<20), "nothing of the bomb was unpacked")
}

// TestZipThatLiesAboutItsSize: an entry whose header declares fewer bytes
// than it holds is refused, never read past what it declared.
func TestZipThatLiesAboutItsSize(t *testing.T) {
	b := zipOf(t, entry{name: "index.html", content: strings.Repeat("a", 5000)})
	// Patch the uncompressed size in the central directory to 10 bytes.
	i := bytes.LastIndex(b, []byte("PK\x01\x02"))
	require.Positive(t, i)
	binary.LittleEndian.PutUint32(b[i+24:], 10)
	_, err := readAll(b)
	assert.True(t, apperr.Is(err, apperr.InvalidArchive), "%v", err)
}

// TestManyEntriesTooLargeInAll: entries of 30 MB each, 120 MB in all,
// are refused before the first is read.
func TestManyEntriesTooLargeInAll(t *testing.T) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	zeros := make([]byte, 1<<20)
	for _, name := range []string{"index.html", "a.bin", "b.bin", "c.bin"} {
		fw, err := w.Create(name)
		require.NoError(t, err)
		for range 30 {
			_, err := fw.Write(zeros)
			require.NoError(t, err)
		}
	}
	require.NoError(t, w.Close())
	read := 0
	err := ReadZip(bytes.NewReader(buf.Bytes()), int64(buf.Len()), func(File) error { read++; return nil })
	assert.True(t, apperr.Is(err, apperr.PayloadTooLarge), "%v", err)
	assert.Zero(t, read)
}

func TestTooManyEntries(t *testing.T) {
	entries := []entry{{name: "index.html", content: "x"}}
	for i := range MaxArchiveEntries {
		entries = append(entries, entry{name: fmt.Sprintf("f/%d.txt", i)})
	}
	_, err := readAll(zipOf(t, entries...))
	e, ok := apperr.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, apperr.InvalidArchive, e.Code)
	assert.Contains(t, e.Message, "10001 entries")
}

func TestInline(t *testing.T) {
	exact := strings.Repeat("a", MaxInlineBytes-1)
	cases := []struct {
		name        string
		files       []InlineFile
		code, field string
	}{
		{"ok", []InlineFile{{Path: "index.html", Content: "x"}, {Path: "css/a.css", Content: "a"}}, "", ""},
		{"exactly 2 MB", []InlineFile{{Path: "index.html", Content: exact}, {Path: "a", Content: "b"}}, "", ""},
		{"2 MB and one byte", []InlineFile{{Path: "index.html", Content: exact}, {Path: "a", Content: "bc"}}, apperr.ContentTooLarge, "files"},
		{"no index", []InlineFile{{Path: "a.html", Content: "x"}}, apperr.InvalidRequest, "files"},
		{"index in a folder", []InlineFile{{Path: "site/index.html", Content: "x"}}, apperr.InvalidRequest, "files"},
		{"traversal", []InlineFile{{Path: "index.html"}, {Path: "../x"}}, apperr.InvalidRequest, "files[1].path"},
		{"dot segment", []InlineFile{{Path: "index.html"}, {Path: "./x"}}, apperr.InvalidRequest, "files[1].path"},
		{"empty segment", []InlineFile{{Path: "a//b"}, {Path: "index.html"}}, apperr.InvalidRequest, "files[0].path"},
		{"control character", []InlineFile{{Path: "index.html"}, {Path: "a\x00b"}}, apperr.InvalidRequest, "files[1].path"},
		{"duplicate", []InlineFile{{Path: "index.html"}, {Path: "index.html"}}, apperr.InvalidRequest, "files[1].path"},
		{"empty path", []InlineFile{{Path: ""}, {Path: "index.html"}}, apperr.InvalidRequest, "files[0].path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files, err := Inline(c.files)
			if c.code == "" {
				require.NoError(t, err)
				assert.Len(t, files, len(c.files))
				return
			}
			e, ok := apperr.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, c.code, e.Code)
			assert.Equal(t, c.field, e.Field)
		})
	}
}

func TestSingleAndHTML(t *testing.T) {
	files, err := Single(strings.Repeat("a", MaxInlineBytes))
	require.NoError(t, err)
	assert.Equal(t, Index, files[0].Path)
	_, err = Single(strings.Repeat("a", MaxInlineBytes+1))
	assert.True(t, apperr.Is(err, apperr.ContentTooLarge))
	_, err = Single("  ")
	assert.True(t, apperr.Is(err, apperr.InvalidRequest))

	files, err = HTML(strings.NewReader("<h1>hi</h1>"))
	require.NoError(t, err)
	assert.Equal(t, []File{{Path: Index, Content: []byte("<h1>hi</h1>")}}, files)
	_, err = HTML(io.LimitReader(zeroReader{}, MaxArchiveBytes+1))
	assert.True(t, apperr.Is(err, apperr.PayloadTooLarge))
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// BenchmarkReadZip20MB500Files reads an archive of 500 files of 40 KB:
// allocation stays near one entry at a time plus the archive itself.
func BenchmarkReadZip20MB500Files(b *testing.B) {
	entries := []entry{{name: "index.html", content: "<h1>report</h1>"}}
	chunk := strings.Repeat("<tr><td>row</td><td>42</td></tr>\n", 40<<10/33)
	for i := range 499 {
		entries = append(entries, entry{name: fmt.Sprintf("pages/%03d.html", i), content: fmt.Sprintf("<!-- %d -->", i) + chunk})
	}
	z := zipOf(b, entries...)
	b.ReportAllocs()
	b.SetBytes(int64(len(z)))
	b.ResetTimer()
	for range b.N {
		err := ReadZip(bytes.NewReader(z), int64(len(z)), func(File) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
}
