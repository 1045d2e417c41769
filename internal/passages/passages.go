// Package passages finds a quoted passage in a report's text: the text a
// reader sees (tags stripped, script and style left out, entities decoded,
// whitespace collapsed), where a comment's quote must occur exactly once.
package passages

import (
	"bytes"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Text is the visible text of an HTML document, its whitespace collapsed
// to single spaces. Elements that start a new block or line are spaced
// from their neighbours, so "<td>a</td><td>b</td>" reads "a b".
func Text(doc []byte) string { return Read(doc).Text }

// Doc is a document's visible text and where each of its blocks starts in
// it, which ends a sentence as surely as a full stop.
type Doc struct {
	Text   string
	Breaks []int
}

// Read reads a document's text (see Text) and its block starts.
func Read(doc []byte) Doc {
	z := html.NewTokenizer(bytes.NewReader(doc))
	var b strings.Builder
	var breaks []int
	space := false // a space is owed before the next word
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return Doc{Text: b.String(), Breaks: breaks}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			raw := string(z.Text())
			if raw != "" && unicode.IsSpace(rune(raw[0])) {
				space = true
			}
			for i, w := range strings.FieldsFunc(raw, unicode.IsSpace) {
				if (i > 0 || space) && b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(w)
				space = false
			}
			if raw != "" && unicode.IsSpace(rune(raw[len(raw)-1])) {
				space = true
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if hidden[a] {
				switch z.Token().Type {
				case html.StartTagToken:
					skip++
				case html.EndTagToken:
					skip = max(skip-1, 0)
				}
				continue
			}
			if !inline[a] {
				space = true
				if n := b.Len(); n > 0 && (len(breaks) == 0 || breaks[len(breaks)-1] != n+1) {
					breaks = append(breaks, n+1)
				}
			}
		}
	}
}

// hidden elements hold no text a reader sees.
var hidden = map[atom.Atom]bool{atom.Script: true, atom.Style: true, atom.Template: true, atom.Noscript: true, atom.Title: true}

// inline elements join the text around them without a space.
var inline = map[atom.Atom]bool{
	atom.A: true, atom.Abbr: true, atom.B: true, atom.Bdi: true, atom.Bdo: true, atom.Cite: true, atom.Code: true,
	atom.Data: true, atom.Dfn: true, atom.Em: true, atom.I: true, atom.Kbd: true, atom.Mark: true, atom.Q: true,
	atom.S: true, atom.Samp: true, atom.Small: true, atom.Span: true, atom.Strong: true, atom.Sub: true,
	atom.Sup: true, atom.Time: true, atom.U: true, atom.Var: true, atom.Wbr: true, atom.Del: true, atom.Ins: true,
	atom.Label: true, atom.Font: true,
}

// Normalize collapses runs of whitespace to one space and trims the ends,
// as Text does, so a quote a browser selected compares with the text.
func Normalize(s string) string { return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ") }

// Count is how many times quote occurs in text, overlapping occurrences
// included, and where the first starts.
func Count(text, quote string) (n, first int) {
	first = -1
	if quote == "" {
		return 0, first
	}
	for from := 0; from <= len(text)-len(quote); {
		i := strings.Index(text[from:], quote)
		if i < 0 {
			break
		}
		if n == 0 {
			first = from + i
		}
		n++
		from += i + 1
	}
	return n, first
}

// maxContext bounds the surrounding sentence a brief quotes.
const maxContext = 600

// Sentence is the sentence around text[at:at+n]: from the end of the
// previous sentence or block to the end of the one the passage ends in,
// at most about maxContext bytes either way.
func (d Doc) Sentence(at, n int) string {
	text := d.Text
	start := max(0, at-maxContext)
	for i := at - 1; i > start; i-- {
		if text[i] == ' ' && strings.ContainsRune(".!?", rune(text[i-1])) {
			start = i + 1
			break
		}
	}
	end := min(len(text), at+n+maxContext)
	for i := at + n; i < end; i++ {
		if strings.ContainsRune(".!?", rune(text[i])) && (i+1 == len(text) || text[i+1] == ' ') {
			end = i + 1
			break
		}
	}
	for _, br := range d.Breaks {
		if br <= at && br > start {
			start = br
		}
		if br >= at+n && br-1 < end {
			end = br - 1
		}
	}
	return strings.ToValidUTF8(strings.TrimSpace(text[start:end]), "")
}
