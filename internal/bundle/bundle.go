// Package bundle turns what an agent publishes (one HTML document, inline
// files, an uploaded HTML file or ZIP) into the checked files of one
// report version. Paths are held to one safe form; a ZIP is read one
// entry at a time and its size is counted as it is read, so a zip bomb is
// stopped, not unpacked.
package bundle

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/assent-hq/assent/internal/apperr"
)

// File is one file of a report version, its path relative to the
// report's root.
type File struct {
	Path    string
	Content []byte
}

// Limits of what one publish may hold.
const (
	// MaxInlineBytes bounds content, or inline files in all.
	MaxInlineBytes = 2 << 20
	// MaxArchiveBytes bounds an upload: its bytes, and a ZIP's files
	// uncompressed in all.
	MaxArchiveBytes = 100 << 20
	// MaxArchiveEntries bounds the files of a ZIP or an inline publish.
	MaxArchiveEntries = 10000
	// Index is the page a report opens on.
	Index = "index.html"

	maxPath    = 1024
	maxSegment = 255
)

// Single makes one HTML document a report's index.html.
func Single(content string) ([]File, error) {
	if strings.TrimSpace(content) == "" {
		return nil, apperr.Field(apperr.InvalidRequest, "content", "content is empty: send one HTML document")
	}
	if len(content) > MaxInlineBytes {
		return nil, apperr.Field(apperr.ContentTooLarge, "content",
			"content is %d bytes; a report's inline content may be at most %d bytes (upload larger reports)", len(content), MaxInlineBytes)
	}
	return []File{{Path: Index, Content: []byte(content)}}, nil
}

// InlineFile is one entry of a publish's files field.
type InlineFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Inline checks a publish's inline files: safe unique paths, index.html
// at the root, at most 2 MB in all.
func Inline(files []InlineFile) ([]File, error) {
	if len(files) > MaxArchiveEntries {
		return nil, apperr.Field(apperr.InvalidRequest, "files", "at most %d files", MaxArchiveEntries)
	}
	out := make([]File, 0, len(files))
	seen := map[string]bool{}
	total := 0
	for i, f := range files {
		field := fmt.Sprintf("files[%d].path", i)
		p, err := CleanPath(f.Path)
		if err != nil {
			return nil, apperr.Field(apperr.InvalidRequest, field, "%s: %v", field, err)
		}
		if seen[p] {
			return nil, apperr.Field(apperr.InvalidRequest, field, "%s: %q is listed twice", field, p)
		}
		seen[p] = true
		total += len(f.Content)
		if total > MaxInlineBytes {
			return nil, apperr.Field(apperr.ContentTooLarge, "files",
				"files hold more than %d bytes in all (upload larger reports)", MaxInlineBytes)
		}
		out = append(out, File{Path: p, Content: []byte(f.Content)})
	}
	if !seen[Index] {
		return nil, apperr.Field(apperr.InvalidRequest, "files", "files must hold %s at the root: the page the report opens on", Index)
	}
	return out, nil
}

// HTML reads one uploaded HTML document as index.html, at most
// MaxArchiveBytes, counted as it is read.
func HTML(r io.Reader) ([]File, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxArchiveBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxArchiveBytes {
		return nil, tooLarge()
	}
	return []File{{Path: Index, Content: b}}, nil
}

func tooLarge() error {
	return apperr.New(apperr.PayloadTooLarge, "the upload holds more than %d bytes uncompressed", MaxArchiveBytes)
}

// CleanPath checks one file path and returns it: relative, with forward
// slashes, no empty, "." or ".." segment, no control characters, valid
// UTF-8, at most 1024 bytes. Nothing is rewritten, so what is refused is
// never quietly made to mean something else.
func CleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("the path is empty")
	case len(p) > maxPath:
		return "", fmt.Errorf("the path is longer than %d bytes", maxPath)
	case !utf8.ValidString(p):
		return "", errors.New("the path is not valid UTF-8")
	case strings.ContainsRune(p, '\\'):
		return "", errors.New("the path has a backslash; separate folders with /")
	case strings.HasPrefix(p, "/"):
		return "", errors.New("the path is absolute; give it relative to the report's root")
	case len(p) >= 2 && p[1] == ':':
		return "", errors.New("the path names a drive")
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return "", errors.New("the path has a control character")
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return "", errors.New("the path has an empty segment (//, or a trailing /)")
		case seg == "." || seg == "..":
			return "", fmt.Errorf("the path may not contain %s segments", seg)
		case len(seg) > maxSegment:
			return "", fmt.Errorf("a path segment is longer than %d bytes", maxSegment)
		}
	}
	return p, nil
}

// ReadZip reads a ZIP upload one entry at a time, calling each with a file
// whose Content is that entry alone, so memory holds one entry, never the
// archive unpacked. index.html must be at the root or inside one top
// folder, which then is the root. Structural refusals are 400
// invalid_archive naming the entry; more than MaxArchiveBytes
// uncompressed is 413, refused before it is unpacked.
func ReadZip(r io.ReaderAt, size int64, each func(File) error) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return apperr.New(apperr.InvalidArchive, "the upload is not a readable ZIP archive: %v", err)
	}
	if len(zr.File) > MaxArchiveEntries {
		return apperr.New(apperr.InvalidArchive, "the archive has %d entries; at most %d", len(zr.File), MaxArchiveEntries)
	}
	entries, root, err := plan(zr.File)
	if err != nil {
		return err
	}
	// archive/zip refuses an entry that holds more than its header declares
	// (ErrFormat), so the declared sizes bound what is read: they are added
	// up before anything is.
	var total uint64
	for _, f := range entries {
		if total += f.UncompressedSize64; total > MaxArchiveBytes || f.UncompressedSize64 > MaxArchiveBytes {
			return tooLarge()
		}
	}
	for _, f := range entries {
		b, err := readEntry(f)
		if err != nil {
			return err
		}
		if err := each(File{Path: strings.TrimPrefix(f.Name, root), Content: b}); err != nil {
			return err
		}
	}
	return nil
}

// readEntry reads one entry of its declared size, then to its end, where
// archive/zip checks the checksum.
func readEntry(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, entryError(f.Name, "cannot be read (%v)", err)
	}
	defer rc.Close()
	b := make([]byte, f.UncompressedSize64)
	if _, err = io.ReadFull(rc, b); err == nil {
		var one [1]byte
		if n, end := rc.Read(one[:]); n > 0 {
			err = zip.ErrFormat
		} else if end != io.EOF {
			err = end
		}
	}
	if err != nil {
		return nil, entryError(f.Name, "damaged (%v)", err)
	}
	return b, nil
}

// plan checks every entry's name and kind from the central directory,
// before any content is read, and finds the root: it returns the files to
// read and the prefix to strip.
func plan(files []*zip.File) ([]*zip.File, string, error) {
	var out []*zip.File
	seen := map[string]bool{}
	tops := map[string]bool{}
	for _, f := range files {
		name := f.Name
		if skipped(name) {
			continue
		}
		dir := strings.HasSuffix(name, "/")
		if _, err := CleanPath(strings.TrimSuffix(name, "/")); err != nil {
			return nil, "", entryError(name, "%v", err)
		}
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return nil, "", entryError(name, "a symbolic link; archives may hold files and folders only")
		case f.Flags&0x1 != 0:
			return nil, "", entryError(name, "encrypted; send the archive without a password")
		case dir || mode.IsDir():
			continue
		case !mode.IsRegular():
			return nil, "", entryError(name, "not a regular file")
		}
		if seen[name] {
			return nil, "", entryError(name, "listed twice")
		}
		seen[name] = true
		top, _, nested := strings.Cut(name, "/")
		if !nested {
			top = ""
		}
		tops[top] = true
		out = append(out, f)
	}
	if seen[Index] {
		return out, "", nil
	}
	if len(tops) == 1 {
		for top := range tops {
			if top != "" && seen[top+"/"+Index] {
				return out, top + "/", nil
			}
		}
	}
	return nil, "", apperr.New(apperr.InvalidArchive, "the archive has no %s at its root or inside one top folder", Index)
}

// skipped are the metadata macOS adds to archives it makes.
func skipped(name string) bool {
	return strings.HasPrefix(name, "__MACOSX/") || path.Base(name) == ".DS_Store"
}

func entryError(name, format string, args ...any) error {
	return apperr.Field(apperr.InvalidArchive, "entries["+name+"]", "entry %q: %s", name, fmt.Sprintf(format, args...))
}
