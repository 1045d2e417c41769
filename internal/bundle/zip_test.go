package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/apperr"
)

// entryFunc adds one entry to an archive being made.
type entryFunc func(w *zip.Writer) error

// file is an entry of name holding body, its header changed by edit first.
func file(name, body string, edit ...func(*zip.FileHeader)) entryFunc {
	return func(w *zip.Writer) error {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		for _, e := range edit {
			e(h)
		}
		f, err := w.CreateHeader(h)
		if err != nil {
			return err
		}
		_, err = io.WriteString(f, body)
		return err
	}
}

func dir(name string) entryFunc {
	return file(name, "", func(h *zip.FileHeader) { h.SetMode(fs.ModeDir | 0o755) })
}

// zerosEntry is an entry that unpacks to size zero bytes and says it unpacks
// to declared. Its deflate stream is made by hand, since compress/flate takes
// seconds over 200 MB under the race detector.
func zerosEntry(name string, size int, declared uint64) entryFunc {
	return func(w *zip.Writer) error {
		data := zerosDeflate(size)
		crc := crc32.NewIEEE()
		chunk := make([]byte, 1<<20)
		for left := size; left > 0; left -= len(chunk) {
			crc.Write(chunk[:min(left, len(chunk))])
		}
		f, err := w.CreateRaw(&zip.FileHeader{
			Name: name, Method: zip.Deflate, CRC32: crc.Sum32(),
			CompressedSize64: uint64(len(data)), UncompressedSize64: declared,
		})
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return err
	}
}

// zerosDeflate is a deflate stream of size zero bytes: one block with fixed
// Huffman codes, a literal 0 and then copies of 258 bytes from 1 byte back,
// 13 bits each (RFC 1951 3.2.6), about 160 times smaller than what it unpacks to.
func zerosDeflate(size int) []byte {
	var w bitWriter
	w.bits(1, 1)    // last block
	w.bits(1, 2)    // fixed Huffman codes
	w.code(0x30, 8) // literal 0
	left := size - 1
	for ; left >= 258; left -= 258 {
		w.code(0xc5, 8) // length 258
		w.code(0, 5)    // distance 1
	}
	for ; left > 0; left-- {
		w.code(0x30, 8)
	}
	w.code(0, 7) // end of block
	return w.flush()
}

type bitWriter struct {
	out   []byte
	acc   uint64
	nbits uint
}

// code writes a Huffman code, which deflate packs most significant bit first.
func (w *bitWriter) code(c uint64, n uint) {
	var r uint64
	for i := range n {
		r |= (c >> i & 1) << (n - 1 - i)
	}
	w.bits(r, n)
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.nbits
	w.nbits += n
	for w.nbits >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nbits -= 8
	}
}

func (w *bitWriter) flush() []byte {
	if w.nbits > 0 {
		w.out = append(w.out, byte(w.acc))
	}
	return w.out
}

func makeZip(t testing.TB, entries ...entryFunc) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		require.NoError(t, e(w))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func readZip(data []byte) ([]File, error) {
	var files []File
	err := ReadZip(bytes.NewReader(data), int64(len(data)), func(f File) error {
		files = append(files, f)
		return nil
	})
	return files, err
}

func paths(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

func TestReadZip(t *testing.T) {
	stored := func(h *zip.FileHeader) { h.Method = zip.Store }
	cases := []struct {
		name    string
		entries []entryFunc
		want    []File
	}{
		{"root", []entryFunc{
			dir("assets/"),
			file("index.html", "<h1>Report</h1>"),
			file("assets/app.css", "body{}", stored),
			dir("assets/empty/"),
			file("other/x.txt", "x"),
		}, []File{
			{Index, []byte("<h1>Report</h1>")},
			{"assets/app.css", []byte("body{}")},
			{"other/x.txt", []byte("x")},
		}},
		{"nested root", []entryFunc{
			dir("site/"),
			file("site/index.html", "<h1>Report</h1>"),
			file("site/a.css", "body{}"),
			file("site/img/x.png", "png"),
		}, []File{
			{Index, []byte("<h1>Report</h1>")},
			{"a.css", []byte("body{}")},
			{"img/x.png", []byte("png")},
		}},
		{"macOS metadata", []entryFunc{
			dir("site/"),
			file("site/index.html", "<h1>Report</h1>"),
			file("site/.DS_Store", "ds"),
			file("site/img/.DS_Store", "ds"),
			dir("__MACOSX/"),
			dir("__MACOSX/site/"),
			file("__MACOSX/site/._index.html", "fork"),
			file(".DS_Store", "ds"),
		}, []File{
			{Index, []byte("<h1>Report</h1>")},
		}},
		{"an empty file", []entryFunc{file(Index, "<p>"), file("empty.js", "")}, []File{
			{Index, []byte("<p>")},
			{"empty.js", []byte{}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files, err := readZip(makeZip(t, c.entries...))
			require.NoError(t, err)
			require.Equal(t, paths(c.want), paths(files))
			for i := range c.want {
				require.Equal(t, string(c.want[i].Content), string(files[i].Content))
			}
		})
	}
}

func TestReadZipRefuses(t *testing.T) {
	index := file(Index, "<h1>Report</h1>")
	symlink := func(h *zip.FileHeader) { h.SetMode(fs.ModeSymlink | 0o777) }
	// A FAT creator with Unix bits saying symlink: archive/zip reads the
	// DOS bits only.
	fatSymlink := func(h *zip.FileHeader) {
		h.CreatorVersion = 0 // FAT
		h.ExternalAttrs = 0o120777 << 16
	}
	valid := makeZip(t, index)

	cases := []struct {
		name    string
		data    []byte
		code    string
		message string
	}{
		{"parent", makeZip(t, index, file("../x", "x")), apperr.InvalidArchive, `entry "../x": has a ".." segment`},
		{"parent inside", makeZip(t, index, file("a/../../x", "x")), apperr.InvalidArchive, `entry "a/../../x": has a ".." segment`},
		{"absolute", makeZip(t, index, file("/etc/passwd", "x")), apperr.InvalidArchive, `entry "/etc/passwd": is absolute`},
		{"drive", makeZip(t, index, file(`C:\x`, "x")), apperr.InvalidArchive, `entry "C:\\x": has a backslash`},
		{"drive, forward", makeZip(t, index, file("C:/x", "x")), apperr.InvalidArchive, `entry "C:/x": has a colon`},
		{"backslash", makeZip(t, index, file(`a\b`, "x")), apperr.InvalidArchive, `entry "a\\b": has a backslash`},
		{"empty name", makeZip(t, index, file("", "x")), apperr.InvalidArchive, `entry "": is empty`},
		{"control", makeZip(t, index, file("a\x00.html", "x")), apperr.InvalidArchive, `entry "a\x00.html": has a control character`},
		{"parent folder", makeZip(t, index, dir("../")), apperr.InvalidArchive, `entry "../": has a ".." segment`},
		{"symlink", makeZip(t, index, file("link.html", "/etc/passwd", symlink)), apperr.InvalidArchive, `entry "link.html": is a symbolic link`},
		{"symlink, FAT creator", makeZip(t, index, file("link.html", "/etc/passwd", fatSymlink)), apperr.InvalidArchive, `entry "link.html": is a symbolic link`},
		{"named pipe", makeZip(t, index, file("fifo", "", func(h *zip.FileHeader) { h.SetMode(fs.ModeNamedPipe | 0o644) })), apperr.InvalidArchive, `entry "fifo": is not a regular file`},
		{"encrypted", makeZip(t, index, file("secret.html", "x", func(h *zip.FileHeader) { h.Flags |= 0x1 })), apperr.InvalidArchive, `entry "secret.html": is encrypted`},
		{"bzip2", makeZip(t, index, func(w *zip.Writer) error {
			f, err := w.CreateRaw(&zip.FileHeader{Name: "a.html", Method: 12, CompressedSize64: 3, UncompressedSize64: 3})
			if err == nil {
				_, err = f.Write([]byte("BZh"))
			}
			return err
		}), apperr.InvalidArchive, `entry "a.html": uses compression method 12`},
		{"duplicate", makeZip(t, index, file("a.css", "1"), file("a.css", "2")), apperr.InvalidArchive, `entry "a.css": appears twice`},
		{"duplicate in nested root", makeZip(t, file("site/index.html", "x"), file("site/index.html", "y")), apperr.InvalidArchive, `entry "site/index.html": appears twice`},
		{"file and folder", makeZip(t, index, file("a/b.css", "1"), file("a", "2")), apperr.InvalidArchive, `entry "a/b.css": is inside "a", which is a file`},
		{"two top folders", makeZip(t, file("a/index.html", "x"), file("b/index.html", "y")), apperr.InvalidArchive, "index.html is missing"},
		{"index deeper", makeZip(t, file("site/docs/index.html", "x"), file("site/a.css", "y")), apperr.InvalidArchive, "index.html is missing"},
		{"no index", makeZip(t, file("report.html", "x")), apperr.InvalidArchive, "index.html is missing"},
		{"only folders", makeZip(t, dir("site/")), apperr.InvalidArchive, "index.html is missing"},
		{"only metadata", makeZip(t, file("__MACOSX/index.html", "x")), apperr.InvalidArchive, "index.html is missing"},
		{"empty", makeZip(t), apperr.InvalidArchive, "index.html is missing"},
		{"not a zip", []byte("<h1>Report</h1>"), apperr.InvalidArchive, "not a readable ZIP archive"},
		{"nothing", nil, apperr.InvalidArchive, "not a readable ZIP archive"},
		{"cut short", valid[:len(valid)/2], apperr.InvalidArchive, "not a readable ZIP archive"},
		{"damaged", func() []byte {
			b := bytes.Clone(valid)
			i := bytes.Index(b, []byte(Index)) + len(Index) // the content follows the local header's name
			b[i] ^= 0xff
			return b
		}(), apperr.InvalidArchive, `entry "index.html": cannot be read`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			called := 0
			err := ReadZip(bytes.NewReader(c.data), int64(len(c.data)), func(File) error { called++; return nil })
			e := requireAppErr(t, err, c.code, "")
			require.Contains(t, e.Message, c.message)
			require.Zero(t, called, "refused before any content is handed on")
		})
	}
}

// archive/zip's Mode reports a symlink only when a Unix system made the
// archive; ReadZip reads the Unix bits itself too.
func TestModeSeesSymlinksOnlyFromUnix(t *testing.T) {
	data := makeZip(t,
		file("unix", "", func(h *zip.FileHeader) { h.SetMode(fs.ModeSymlink | 0o777) }),
		file("fat", "", func(h *zip.FileHeader) { h.CreatorVersion = 0; h.ExternalAttrs = 0o120777 << 16 }),
	)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	require.NotZero(t, zr.File[0].Mode()&fs.ModeSymlink)
	require.Zero(t, zr.File[1].Mode()&fs.ModeSymlink)
}

// With GODEBUG=zipinsecurepath=0 archive/zip refuses such names itself;
// ReadZip still names the entry.
func TestReadZipInsecurePathSetting(t *testing.T) {
	t.Setenv("GODEBUG", "zipinsecurepath=0")
	data := makeZip(t, file(Index, "x"), file("../x", "x"))
	_, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.ErrorIs(t, err, zip.ErrInsecurePath)
	_, err = readZip(data)
	e := requireAppErr(t, err, apperr.InvalidArchive, "")
	require.Contains(t, e.Message, `entry "../x": has a ".." segment`)
}

func TestReadZipPassesOnErrors(t *testing.T) {
	data := makeZip(t, file(Index, "x"), file("a.css", "y"))
	stop := errors.New("stop")
	calls := 0
	err := ReadZip(bytes.NewReader(data), int64(len(data)), func(File) error { calls++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, calls)

	// A failing upload is not a damaged archive.
	big := strings.Repeat("0123456789abcdef", 8<<10)
	data = makeZip(t, file(Index, big, func(h *zip.FileHeader) { h.Method = zip.Store }))
	boom := errors.New("disk failed")
	failing := &failingReaderAt{r: bytes.NewReader(data), below: int64(len(data)) / 2, err: boom}
	err = ReadZip(failing, int64(len(data)), func(File) error { return nil })
	require.ErrorIs(t, err, boom)
	_, isAppErr := apperr.As(err)
	require.False(t, isAppErr)

	err = ReadZip(bytes.NewReader(data), -1, func(File) error { return nil })
	require.Error(t, err)
}

// failingReaderAt fails every read that starts below an offset, where the
// entries' contents are; the central directory, at the end, reads fine.
type failingReaderAt struct {
	r     io.ReaderAt
	below int64
	err   error
}

func (f *failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < f.below {
		return 0, f.err
	}
	return f.r.ReadAt(p, off)
}

// countingReaderAt counts the bytes an upload serves.
type countingReaderAt struct {
	r io.ReaderAt
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// allocated returns the bytes allocated while f ran. No test of this file
// runs in parallel, so the count is f's.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadZipBombs(t *testing.T) {
	const bomb = 200 << 20
	index := file(Index, "<h1>Report</h1>")
	cases := []struct {
		name    string
		data    []byte
		code    string
		message string
	}{
		// Honest about its size: refused from the central directory.
		{"200 MB of zeros", makeZip(t, index, zerosEntry("zeros.html", bomb, bomb)), apperr.PayloadTooLarge,
			`entry "zeros.html": takes the archive past 104857600 bytes unpacked`},
		{"two entries over the limit in all", makeZip(t, index, zerosEntry("a.bin", 60<<20, 60<<20), zerosEntry("b.bin", 60<<20, 60<<20)),
			apperr.PayloadTooLarge, `entry "b.bin": takes the archive past`},
		// Lying about its size: archive/zip stops at the declared size,
		// and the entry is damaged.
		{"200 MB of zeros declared as 1 KB", makeZip(t, index, zerosEntry("zeros.html", bomb, 1<<10)), apperr.InvalidArchive,
			`entry "zeros.html": cannot be read`},
		{"200 MB of zeros declared as 0 bytes", makeZip(t, index, zerosEntry("zeros.html", bomb, 0)), apperr.InvalidArchive,
			`entry "zeros.html": cannot be read`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := &countingReaderAt{r: bytes.NewReader(c.data)}
			var err error
			alloc := allocated(func() {
				err = ReadZip(src, int64(len(c.data)), func(File) error { return nil })
			})
			e := requireAppErr(t, err, c.code, "")
			require.Contains(t, e.Message, c.message)
			require.Less(t, alloc, uint64(4<<20), "allocated %d bytes", alloc)
			require.Less(t, src.n, int64(len(c.data))/8, "read %d of %d bytes", src.n, len(c.data))
		})
	}
}

// readCounted counts what it reads, whatever an entry declared: the limit
// ReadZip keeps does not rest on archive/zip's check of declared sizes.
func TestReadCounted(t *testing.T) {
	var z zeros
	_, err := readCounted(&z, 10, 1000)
	require.ErrorIs(t, err, errOverBudget)
	require.LessOrEqual(t, z.n, int64(1001))

	got, err := readCounted(strings.NewReader(strings.Repeat("x", 1000)), 10, 1000)
	require.NoError(t, err)
	require.Len(t, got, 1000)

	got, err = readCounted(strings.NewReader(strings.Repeat("x", 100_000)), 0, 1<<20)
	require.NoError(t, err)
	require.Len(t, got, 100_000)

	// An honest size is one allocation.
	body := strings.NewReader(strings.Repeat("x", 1<<20))
	alloc := allocated(func() { got, err = readCounted(body, 1<<20, 1<<20) })
	require.NoError(t, err)
	require.Len(t, got, 1<<20)
	require.Less(t, alloc, uint64(1<<20+64<<10))

	boom := errors.New("boom")
	_, err = readCounted(io.MultiReader(strings.NewReader("x"), errReader{boom}), 1, 10)
	require.ErrorIs(t, err, boom)
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestReadZipEntries(t *testing.T) {
	entries := func(n int) []entryFunc {
		out := []entryFunc{file(Index, "x")}
		for i := 1; i < n; i++ {
			out = append(out, file(fmt.Sprintf("f%05d.txt", i), "", func(h *zip.FileHeader) { h.Method = zip.Store }))
		}
		return out
	}
	files, err := readZip(makeZip(t, entries(MaxArchiveEntries)...))
	require.NoError(t, err)
	require.Len(t, files, MaxArchiveEntries)

	// Folders and metadata count: the limit is on what archive/zip parses.
	more := append(entries(MaxArchiveEntries), dir("site/"))
	_, err = readZip(makeZip(t, more...))
	e := requireAppErr(t, err, apperr.PayloadTooLarge, "")
	require.Contains(t, e.Message, "more than 10000 entries")
}

// archive/zip reads a directory whose end record understates its count, as
// long as the count's low 16 bits match, and builds a record per entry:
// ReadZip counts the entries itself before archive/zip reads them.
func TestReadZipCountsTheDirectory(t *testing.T) {
	const n = 1<<16 + 1
	entries := []entryFunc{file(Index, "x")}
	for i := 1; i < n; i++ {
		entries = append(entries, file(fmt.Sprintf("%x", i), "", func(h *zip.FileHeader) { h.Method = zip.Store }))
	}
	data := makeZip(t, entries...)
	// More than 65535 entries: the writer wrote a zip64 end record; make it
	// say there is 1.
	end64 := bytes.LastIndex(data, []byte{0x50, 0x4b, 0x06, 0x06})
	require.Positive(t, end64)
	binary.LittleEndian.PutUint64(data[end64+24:], 1)
	binary.LittleEndian.PutUint64(data[end64+32:], 1)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	require.Len(t, zr.File, n, "archive/zip believes the directory, not the count")
	require.Equal(t, n, countEntries(bytes.NewReader(data), int64(len(data)), n))

	alloc := allocated(func() { _, err = readZip(data) })
	requireAppErr(t, err, apperr.PayloadTooLarge, "")
	require.Less(t, alloc, uint64(1<<20), "allocated %d bytes; archive/zip takes about 16 MB for this directory", alloc)
}

// countEntries finds the directory as archive/zip does: after a comment,
// behind a prefix (a self-extractor), through a zip64 end record.
func TestCountEntries(t *testing.T) {
	three := []entryFunc{file(Index, "x"), file("a", "y"), dir("b/")}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	require.NoError(t, w.SetComment(strings.Repeat("a report, version 1. ", 100)))
	for _, e := range three {
		require.NoError(t, e(w))
	}
	require.NoError(t, w.Close())
	commented := buf.Bytes()

	prefixed := append([]byte(strings.Repeat("#!/bin/sh\n", 1000)), makeZip(t, three...)...)

	for name, data := range map[string][]byte{
		"plain":     makeZip(t, three...),
		"commented": commented,
		"prefixed":  prefixed,
	} {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err, name)
		require.Len(t, zr.File, 3, name)
		require.Equal(t, 3, countEntries(bytes.NewReader(data), int64(len(data)), MaxArchiveEntries), name)
		files, err := readZip(data)
		require.NoError(t, err, name)
		require.Equal(t, []string{Index, "a"}, paths(files), name)
	}
	plain := makeZip(t, three...)
	require.Equal(t, 2, countEntries(bytes.NewReader(plain), int64(len(plain)), 1), "stops past the limit")
	require.Zero(t, countEntries(bytes.NewReader([]byte("not a zip")), 9, MaxArchiveEntries))
}

// One entry at a time: while each holds one entry, the heap holds that
// entry, not the archive unpacked.
func TestReadZipHoldsOneEntry(t *testing.T) {
	const n, size = 40, 1 << 20
	entries := []entryFunc{file(Index, "x")}
	for i := range n {
		entries = append(entries, zerosEntry(fmt.Sprintf("%d.bin", i), size, size))
	}
	data := makeZip(t, entries...)

	runtime.GC()
	var base, now runtime.MemStats
	runtime.ReadMemStats(&base)
	peak := uint64(0)
	err := ReadZip(bytes.NewReader(data), int64(len(data)), func(File) error {
		runtime.GC()
		runtime.ReadMemStats(&now)
		peak = max(peak, now.HeapAlloc)
		return nil
	})
	require.NoError(t, err)
	require.Less(t, int64(peak)-int64(base.HeapAlloc), int64(4*size),
		"%d entries of %d bytes; the heap grew by %d", n, size, int64(peak)-int64(base.HeapAlloc))
}

// BenchmarkReadZip20MB500Files reads an archive of 500 files of 40 KB. Its
// B/op is about the 20 MB unpacked, each entry allocated once at its
// declared size; each entry is garbage once handed on, so what is live at
// once is one entry (TestReadZipHoldsOneEntry).
func BenchmarkReadZip20MB500Files(b *testing.B) {
	const n, size = 500, 20 << 20 / 500
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	line := []byte("<tr><td>row</td><td>0123456789</td><td>a report's table</td></tr>\n")
	for i := range n {
		f, err := w.Create(fmt.Sprintf("site/page%03d.html", i))
		require.NoError(b, err)
		content := bytes.Repeat(line, size/len(line)+1)[:size]
		copy(content, fmt.Sprintf("<!-- page %d -->", i))
		_, err = f.Write(content)
		require.NoError(b, err)
	}
	f, err := w.Create("site/index.html")
	require.NoError(b, err)
	_, err = f.Write([]byte("<h1>Report</h1>"))
	require.NoError(b, err)
	require.NoError(b, w.Close())
	data := buf.Bytes()

	b.ReportAllocs()
	b.SetBytes(n * size)
	for b.Loop() {
		files := 0
		err := ReadZip(bytes.NewReader(data), int64(len(data)), func(File) error { files++; return nil })
		if err != nil || files != n+1 {
			b.Fatalf("%d files, %v", files, err)
		}
	}
}
