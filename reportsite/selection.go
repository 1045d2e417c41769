package reportsite

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/assent-hq/assent/internal/paths"
)

// The selection script lets the app's review page quote what a reader
// selects in a report: a page framed from another origin can tell its
// parent only by postMessage, so every HTML page served carries our
// script, which posts the selection to the app's origin alone.

//go:embed select.js
var selectJS string

// selectTag loads the script; it is added to the bytes served, never to
// the stored file.
const selectTag = `<script src="` + paths.ReportSelectScript + `" defer></script>`

// selectTagSum marks the ETag of a page served with selectTag, so a page
// cached with another tag is not taken for this one.
var selectTagSum = func() string {
	sum := sha256.Sum256([]byte(selectTag))
	return hex.EncodeToString(sum[:4])
}()

// originMark is where the script names the app's origin.
const originMark = `/*APP_ORIGIN*/""`

// selectScriptFor is the script naming appOrigin, the one origin it posts
// to (as a JSON string, which is a JavaScript string).
func selectScriptFor(appOrigin string) []byte {
	if strings.Count(selectJS, originMark) != 1 {
		panic("reportsite: select.js must name the app origin once, as " + originMark)
	}
	quoted, _ := json.Marshal(appOrigin) // a string always marshals
	return []byte(strings.Replace(selectJS, originMark, string(quoted), 1))
}

// selectScript serves the script to a reader with a grant, like any file
// of the report; it changes only with a release, so it may be kept a
// little.
func (s *Site) selectScript(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", types[".js"])
	h.Set("Cache-Control", "private, max-age=300")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(s.selectJS)
	}
}

var (
	headEnd = regexp.MustCompile(`(?i)</head\s*>`)
	// doctype is a document's start up to its doctype, which must stay
	// first (after a byte order mark, spaces or comments) or the page
	// falls into quirks mode.
	doctype = regexp.MustCompile(`(?is)\A\x{FEFF}?(?:\s|<!--.*?-->)*<!doctype[^>]*>`)
)

// withSelectTag returns page with selectTag before its </head>, or else
// at its start, after any doctype.
func withSelectTag(page []byte) []byte {
	at := len(doctype.Find(page))
	if loc := headEnd.FindIndex(page); loc != nil {
		at = loc[0]
	}
	out := make([]byte, 0, len(page)+len(selectTag))
	out = append(out, page[:at]...)
	out = append(out, selectTag...)
	return append(out, page[at:]...)
}
