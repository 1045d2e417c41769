package reportsite

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

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
	// doctype is a document's start up to its doctype, which must stay
	// first (after a byte order mark, spaces or comments) or the page
	// falls into quirks mode.
	doctype = regexp.MustCompile(`(?is)\A\x{FEFF}?(?:\s|<!--.*?-->)*<!doctype[^>]*>`)
)

// selectTagOffset is where selectTag goes in the page r reads: before its
// first </head> (any case, spaces before the >), or else at its start,
// after any doctype. It reads the page as a stream, never holding it: a
// page is served without being loaded (a report's page may be many
// megabytes). When the page has no </head>, r must be an io.Seeker, to
// read its start again.
func selectTagOffset(r io.Reader) (int64, error) {
	var f headEndFinder
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if at := f.feed(buf[:n]); at >= 0 {
			return at, nil
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	seeker, ok := r.(io.Seeker)
	if !ok {
		return 0, errors.New("reportsite: a page without </head> must be read again from its start")
	}
	if _, err := seeker.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	// The doctype is read with the regexp's own semantics, a rune at a
	// time, which holds nothing either, within its first bytes: only
	// comments and spaces may come before it, and a page opening with an
	// unclosed comment would otherwise take seconds.
	br := bufio.NewReaderSize(io.LimitReader(r, maxDoctypeSearch), 4<<10)
	loc := doctype.FindReaderIndex(br)
	if loc == nil {
		return 0, nil
	}
	return int64(loc[1]), nil
}

// maxDoctypeSearch is how far into a page its doctype is looked for.
const maxDoctypeSearch = 256 << 10

// headEndFinder finds the first `(?i)</head\s*>` in bytes fed to it in
// pieces, a match split between pieces included. The pattern's letters
// are ASCII, which no byte of a multi-byte UTF-8 sequence is, so matching
// bytes matches what the regexp matches on runes.
type headEndFinder struct {
	// state counts the bytes of "</head" matched so far; len("</head")
	// means only spaces and the closing > may follow.
	state int
	start int64 // offset of the match's "<"
	pos   int64 // offset of the next byte fed
	found bool
}

const headEndPrefix = "</head"

// feed reads p and returns the offset of the match's "<" once one is
// complete, else -1.
func (f *headEndFinder) feed(p []byte) int64 {
	if f.found {
		return f.start
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if f.state == 0 {
			j := bytes.IndexByte(p[i:], '<')
			if j < 0 {
				break
			}
			i += j
			f.state, f.start = 1, f.pos+int64(i)
			continue
		}
		if f.state < len(headEndPrefix) {
			if lower(c) == headEndPrefix[f.state] {
				f.state++
				continue
			}
		} else {
			switch c {
			case '>':
				f.found = true
				f.pos += int64(i + 1)
				return f.start
			case ' ', '\t', '\n', '\f', '\r': // the regexp's \s
				continue
			}
		}
		// No match here; this byte may start the next one.
		f.state = 0
		i--
	}
	f.pos += int64(len(p))
	return -1
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// tagOffsets remembers where each page's tag goes, by its content
// address: files never change, so each is read for it once per process.
type tagOffsets struct {
	mu sync.Mutex
	m  map[string]int64
}

// maxTagOffsets bounds the memory the offsets take (about 100 bytes each).
const maxTagOffsets = 10000

func (o *tagOffsets) get(sum string) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	at, ok := o.m[sum]
	return at, ok
}

func (o *tagOffsets) put(sum string, at int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]int64{}
	}
	if len(o.m) >= maxTagOffsets {
		for k := range o.m { // any one goes: reading a page again is cheap
			delete(o.m, k)
			break
		}
	}
	o.m[sum] = at
}
