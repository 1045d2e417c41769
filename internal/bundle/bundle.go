// Package bundle turns what an agent publishes as a report into a checked
// list of files: one HTML document (Single, HTML), files given inline
// (Inline), or an uploaded ZIP archive (ReadZip).
//
// Everything published is untrusted. Paths are checked by one rule,
// CleanPath, whichever way they arrive; sizes are counted on the bytes
// actually read, never taken from what a sender declares; and an archive is
// read one entry at a time, so a report never sits unpacked in memory.
//
// Errors are *apperr.Error values:
//   - invalid_request (400): content or files as sent break a rule (the
//     field is named: "content", "files", "files[i].path"); an empty upload.
//   - content_too_large (413): content, or inline files in all, over
//     MaxInlineBytes; more than MaxArchiveEntries inline files.
//   - invalid_archive (400): the upload is not a ZIP archive, is damaged, or
//     holds an entry that breaks a rule (a bad path, a link, an encrypted
//     entry, a duplicate, no index.html). The message names the entry as
//     `entry "<name>": <reason>`, the name as the archive spells it; there is
//     no field, the upload's field name being the caller's.
//   - payload_too_large (413): an upload over one of its limits, bytes
//     unpacked (MaxArchiveBytes) or entries (MaxArchiveEntries).
package bundle

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/assent-hq/assent/internal/apperr"
)

// File is one file of a report version, its path relative to the report's
// root.
type File struct {
	Path    string
	Content []byte
}

// Limits of one report version.
const (
	// MaxInlineBytes bounds content, or the contents of inline files in
	// all: they arrive in a JSON body held in memory.
	MaxInlineBytes = 2 << 20
	// MaxArchiveBytes bounds an upload's bytes, unpacked, in all.
	MaxArchiveBytes = 100 << 20
	// MaxArchiveEntries bounds an archive's entries, and inline files.
	MaxArchiveEntries = 10000
	// Index is the file a report opens on, at its root.
	Index = "index.html"
)

// Single makes one HTML document the report's index.html.
func Single(content string) ([]File, error) {
	if len(content) > MaxInlineBytes {
		return nil, apperr.Field(apperr.ContentTooLarge, "content",
			"content is %d bytes; at most %d are taken inline, upload larger reports", len(content), MaxInlineBytes)
	}
	if strings.TrimSpace(content) == "" {
		return nil, apperr.Field(apperr.InvalidRequest, "content", "content is empty")
	}
	return []File{{Path: Index, Content: []byte(content)}}, nil
}

// InlineFile is one entry of a publish's files field.
type InlineFile struct {
	Path    string `json:"path" validate:"required"`
	Content string `json:"content"`
}

// Inline checks files given inline and returns them in the order given. The
// limits come before the paths so an oversized request is refused without
// looking through it.
func Inline(files []InlineFile) ([]File, error) {
	if len(files) > MaxArchiveEntries {
		return nil, apperr.Field(apperr.ContentTooLarge, "files",
			"files has %d entries; at most %d are taken", len(files), MaxArchiveEntries)
	}
	total := 0
	for _, f := range files {
		total += len(f.Content)
	}
	if total > MaxInlineBytes {
		return nil, apperr.Field(apperr.ContentTooLarge, "files",
			"files hold %d bytes in all; at most %d are taken inline, upload larger reports", total, MaxInlineBytes)
	}
	out := make([]File, len(files))
	at := make(map[string]int, len(files))
	for i, f := range files {
		field := fmt.Sprintf("files[%d].path", i)
		p, err := CleanPath(f.Path)
		if err != nil {
			return nil, apperr.Field(apperr.InvalidRequest, field, "%s: %s", field, err)
		}
		if j, dup := at[p]; dup {
			return nil, apperr.Field(apperr.InvalidRequest, field, "%s %q repeats files[%d].path", field, p, j)
		}
		at[p] = i
		out[i] = File{Path: p, Content: []byte(f.Content)}
	}
	for i, f := range out {
		if above, ok := fileAbove(f.Path, at); ok {
			field := fmt.Sprintf("files[%d].path", i)
			return nil, apperr.Field(apperr.InvalidRequest, field,
				"%s %q is inside %q, which files[%d].path makes a file", field, f.Path, above, at[above])
		}
	}
	if _, ok := at[Index]; !ok {
		return nil, apperr.Field(apperr.InvalidRequest, "files", "files must hold %s at the root", Index)
	}
	return out, nil
}

// HTML reads one uploaded HTML document as the report's index.html. It reads
// at most MaxArchiveBytes+1 bytes, so a sender cannot make it hold more than
// the limit whatever length it announced.
func HTML(r io.Reader) ([]File, error) {
	content, err := readAtMost(r, MaxArchiveBytes)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(content)) == 0 {
		return nil, apperr.New(apperr.InvalidRequest, "the uploaded document is empty")
	}
	return []File{{Path: Index, Content: content}}, nil
}

// readAtMost reads r to its end, refusing it once it passes limit bytes.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	content, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("bundle: reading the upload: %w", err)
	}
	if int64(len(content)) > limit {
		return nil, apperr.New(apperr.PayloadTooLarge, "the upload is larger than %d bytes", limit)
	}
	return content, nil
}
