package bundle

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/assent-hq/assent/internal/apperr"
)

// ReadZip reads a ZIP upload of size bytes and calls each with its files one
// at a time, in the archive's order. Each File's Content is that entry only,
// so memory holds one entry, never the archive unpacked; each may keep it.
//
// Everything the central directory can tell is checked before any content is
// read: the number of entries (at most MaxArchiveEntries, counted before
// archive/zip parses the directory), every entry's path (CleanPath),
// symbolic links and other special files, encrypted entries, compression
// methods other than store and deflate, the sizes the entries declare, where
// the root is, and duplicates. Then each entry is read through a limit of
// what is left of MaxArchiveBytes, counting the bytes actually unpacked: a
// declared size only ever refuses, never admits.
//
// The root is the archive's top when index.html is there; otherwise, when
// every file is inside one top folder holding index.html, that folder, whose
// name is stripped from every path. Folders are skipped (a file's path makes
// its folders) and so is macOS metadata: anything under __MACOSX/ and any
// .DS_Store file, which Finder adds to archives it makes and no report needs.
//
// Structural problems are 400 invalid_archive, naming the entry as
// `entry "<name>": <reason>`; going over a limit is 413 payload_too_large.
// An error from each is returned as it is, as is an error reading r.
func ReadZip(r io.ReaderAt, size int64, each func(File) error) error {
	if size < 0 {
		return errors.New("bundle: an upload's size cannot be negative")
	}
	// The section answers offsets a crafted archive points outside the
	// upload with io.EOF, so only a real read failure is recorded.
	src := &recordingReaderAt{r: io.NewSectionReader(r, 0, size)}
	// archive/zip builds a record per entry, however many the directory
	// holds; counting first bounds what a directory of tiny entries costs.
	if n := countEntries(src, size, MaxArchiveEntries); n > MaxArchiveEntries {
		return tooManyEntries()
	}
	if src.err != nil {
		return fmt.Errorf("bundle: reading the upload: %w", src.err)
	}
	zr, err := zip.NewReader(src, size)
	// ErrInsecurePath comes with a usable reader; CleanPath refuses those
	// names below, saying which entry it is.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		if src.err != nil {
			return fmt.Errorf("bundle: reading the upload: %w", src.err)
		}
		return apperr.New(apperr.InvalidArchive, "the upload is not a readable ZIP archive (%v)", err)
	}
	if len(zr.File) > MaxArchiveEntries {
		return tooManyEntries()
	}

	entries, err := plan(zr.File)
	if err != nil {
		return err
	}

	left := int64(MaxArchiveBytes)
	for _, e := range entries {
		content, err := readEntry(e.f, left)
		if err != nil {
			if errors.Is(err, errOverBudget) {
				return apperr.New(apperr.PayloadTooLarge,
					"entry %.200q: unpacks past %d bytes, the limit for an upload in all", e.f.Name, MaxArchiveBytes)
			}
			if src.err != nil {
				return fmt.Errorf("bundle: reading the upload: %w", src.err)
			}
			return entryError(e.f.Name, "cannot be read (%v)", err)
		}
		left -= int64(len(content))
		if err := each(File{Path: e.path, Content: content}); err != nil {
			return err
		}
	}
	return nil
}

// entry is a file of the archive to read, at its path under the root.
type entry struct {
	f    *zip.File
	path string
}

// plan checks the archive's entries from the central directory alone and
// returns the files to read, their paths under the root.
func plan(files []*zip.File) ([]entry, error) {
	var entries []entry
	var declared uint64
	for _, f := range files {
		mode := f.Mode()
		name := f.Name
		if mode.IsDir() && len(name) > 1 {
			name = strings.TrimSuffix(name, "/")
		}
		p, err := CleanPath(name)
		if err != nil {
			return nil, entryError(f.Name, "%s", pathReason(err))
		}
		if mode.IsDir() || macOSMetadata(p) {
			continue
		}
		// Mode reads the Unix bits only when the archive says a Unix
		// system made it; some Windows tools store them all the same.
		if mode&fs.ModeSymlink != 0 || (f.ExternalAttrs>>16)&0xF000 == 0xA000 {
			return nil, entryError(f.Name, "is a symbolic link; put the file itself in the archive")
		}
		if !mode.IsRegular() {
			return nil, entryError(f.Name, "is not a regular file")
		}
		if f.Flags&0x1 != 0 {
			return nil, entryError(f.Name, "is encrypted")
		}
		if f.Method != zip.Store && f.Method != zip.Deflate {
			return nil, entryError(f.Name, "uses compression method %d; use deflate", f.Method)
		}
		// archive/zip refuses an entry that unpacks to more than its
		// declared size, so declared sizes over the limit in all make an
		// archive that cannot be read within it: refuse it now.
		declared += f.UncompressedSize64
		if declared > MaxArchiveBytes {
			return nil, apperr.New(apperr.PayloadTooLarge,
				"entry %.200q: takes the archive past %d bytes unpacked, the limit for an upload in all", f.Name, MaxArchiveBytes)
		}
		entries = append(entries, entry{f: f, path: p})
	}

	root, ok := findRoot(entries)
	if !ok {
		return nil, apperr.New(apperr.InvalidArchive,
			"%s is missing: put it at the archive's top, or in the one folder that holds everything else", Index)
	}
	at := make(map[string]*zip.File, len(entries))
	for i := range entries {
		e := &entries[i]
		e.path = strings.TrimPrefix(e.path, root)
		if _, dup := at[e.path]; dup {
			return nil, entryError(e.f.Name, "appears twice in the archive")
		}
		at[e.path] = e.f
	}
	for _, e := range entries {
		if above, ok := fileAbove(e.path, at); ok {
			return nil, entryError(e.f.Name, "is inside %.200q, which is a file in the archive", at[above].Name)
		}
	}
	return entries, nil
}

// macOSMetadata reports whether p is what Finder adds to an archive: resource
// forks under __MACOSX/ and folder view settings in .DS_Store.
func macOSMetadata(p string) bool {
	return strings.HasPrefix(p, "__MACOSX/") || p == ".DS_Store" || strings.HasSuffix(p, "/.DS_Store")
}

// findRoot returns the prefix to strip from every path: none when index.html
// is at the top, else the one top folder everything is in, if it holds
// index.html.
func findRoot(entries []entry) (string, bool) {
	if len(entries) == 0 {
		return "", false
	}
	for _, e := range entries {
		if e.path == Index {
			return "", true
		}
	}
	top, _, ok := strings.Cut(entries[0].path, "/")
	if !ok {
		return "", false
	}
	root := top + "/"
	hasIndex := false
	for _, e := range entries {
		if !strings.HasPrefix(e.path, root) {
			return "", false
		}
		hasIndex = hasIndex || e.path == root+Index
	}
	return root, hasIndex
}

// errOverBudget is readEntry's answer for an entry that unpacks past what is
// left of the limit.
var errOverBudget = errors.New("bundle: over the unpacked limit")

// readEntry unpacks f, refusing it once it passes left bytes.
func readEntry(f *zip.File, left int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return readCounted(rc, int64(min(f.UncompressedSize64, uint64(left))), left)
}

// readCounted reads r to its end, refusing it with errOverBudget once it
// passes left bytes; it never reads more than left+1. The buffer starts at
// hint, the size the entry declares, so an honest entry is read without
// copying; the hint is capped by left, so a lie cannot make it allocate past
// the limit either.
func readCounted(r io.Reader, hint, left int64) ([]byte, error) {
	buf := make([]byte, 0, hint+1) // +1: room to see the end without growing
	r = io.LimitReader(r, left+1)
	for {
		if len(buf) == cap(buf) {
			// Only an entry longer than it declared gets here. Grow by
			// doubling, never past left+1.
			buf = slices.Grow(buf, int(min(max(int64(len(buf)), 4096), left+1-int64(len(buf)))))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > left {
			return nil, errOverBudget
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func entryError(name, format string, args ...any) error {
	return apperr.New(apperr.InvalidArchive, "entry %.200q: %s", name, fmt.Sprintf(format, args...))
}

func tooManyEntries() error {
	return apperr.New(apperr.PayloadTooLarge, "the archive has more than %d entries", MaxArchiveEntries)
}

// recordingReaderAt keeps the first error the upload itself gave, so a
// failing disk or connection is not reported as a damaged archive.
type recordingReaderAt struct {
	r   io.ReaderAt
	err error
}

func (x *recordingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := x.r.ReadAt(p, off)
	if err != nil && err != io.EOF && x.err == nil {
		x.err = err
	}
	return n, err
}
