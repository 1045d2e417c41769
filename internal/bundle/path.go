package bundle

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Path limits. A report's files end up as object keys and URL paths; these
// keep every one of them storable on common file systems and object stores.
const (
	// MaxPathBytes bounds a whole path, as object stores bound their keys.
	MaxPathBytes = 1024
	// MaxSegmentBytes bounds one file or folder name, as file systems do.
	MaxSegmentBytes = 255
)

// pathError says why a path was refused. Callers put the reason in their own
// sentence (a request field or an archive entry), so it is kept apart from
// the path.
type pathError struct {
	path   string
	reason string
}

func (e *pathError) Error() string { return fmt.Sprintf("path %.200q %s", e.path, e.reason) }

// CleanPath checks one path of a report's file and returns its canonical
// form: relative, forward slashes, no "." or ".." or empty segment, no colon,
// no control character, valid UTF-8, at most MaxPathBytes long with segments
// of at most MaxSegmentBytes.
//
// Every other spelling is refused rather than rewritten, so the canonical
// form is the path itself: two spellings of one file (such as "a/./b" and
// "a/b") can never both pass and later land on the same key.
func CleanPath(p string) (string, error) {
	refuse := func(reason string) (string, error) { return "", &pathError{path: p, reason: reason} }
	switch {
	case p == "":
		return refuse("is empty")
	case len(p) > MaxPathBytes:
		return refuse(fmt.Sprintf("is longer than %d bytes", MaxPathBytes))
	case !utf8.ValidString(p):
		return refuse("is not valid UTF-8")
	case strings.ContainsFunc(p, unicode.IsControl):
		return refuse("has a control character")
	// A backslash is a separator on Windows and an ordinary character
	// elsewhere; converting it would guess which the sender meant.
	case strings.Contains(p, `\`):
		return refuse("has a backslash; separate folders with /")
	case p[0] == '/':
		return refuse("is absolute; give it relative to the report's root")
	// A colon makes a drive letter ("C:x") or an NTFS stream on Windows, and
	// a scheme ("javascript:") when the path is used as a relative link.
	case strings.Contains(p, ":"):
		return refuse("has a colon")
	}
	// The report's own origin answers these paths itself (its datasets
	// and the reader's sign-in): a file there would never be served.
	if first, _, _ := strings.Cut(p, "/"); first == "_data" || first == "_assent" {
		return refuse("is under " + first + "/, which the report's address keeps for itself")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return refuse("has an empty segment")
		case seg == ".":
			return refuse(`has a "." segment`)
		case seg == "..":
			return refuse(`has a ".." segment`)
		case len(seg) > MaxSegmentBytes:
			return refuse(fmt.Sprintf("has a segment longer than %d bytes", MaxSegmentBytes))
		}
	}
	return p, nil
}

// pathReason is the reason CleanPath gave, for callers that name the path
// their own way.
func pathReason(err error) string {
	if pe, ok := err.(*pathError); ok {
		return pe.reason
	}
	return err.Error()
}

// fileAbove returns the ancestor of p that files holds as a file (such as
// "a" for "a/b"). A file cannot also be a folder once the files are laid out
// on disk or behind URLs.
func fileAbove[V any](p string, files map[string]V) (string, bool) {
	for i := range len(p) {
		if p[i] == '/' {
			if _, ok := files[p[:i]]; ok {
				return p[:i], true
			}
		}
	}
	return "", false
}
