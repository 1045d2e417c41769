package publishscan

import (
	"bytes"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/html"
)

// Rules of the HTML checks; each holds the version.
const (
	RulePasswordForm  = "password-form-off-origin"
	RuleMetaRefresh   = "meta-refresh-off-origin"
	RuleJavaScriptURL = "javascript-url"
	RuleBase          = "base-off-origin"
)

// form is a form element as a browser's parser builds it.
type form struct {
	id        string
	offOrigin bool // its action or a submitter's formaction
	password  bool
	line      int
	tag       string
}

// control is a password field or a submitter with a formaction, bound to
// its form once the whole document is read: a form= attribute may name a
// form further down.
type control struct {
	inside    *form   // the form open around it
	formID    *string // its form= attribute, which wins over inside
	password  bool
	offOrigin bool
}

// unsafeHTML finds what would turn a report against its readers. A report
// is served from an origin of its own that its author cannot know, so any
// URL with a host is another origin; relative URLs stay on the report's.
// Tags, attributes and URLs are read as a browser reads them: the
// tokenizer's attribute semantics (names folded, entities decoded, the
// first of a name wins), a form inside a form ignored, form= binding a
// control to a form anywhere, URLs resolved as the URL standard does.
func unsafeHTML(f File) []Finding {
	var out []Finding
	add := func(rule string, line int, tag string) {
		out = append(out, Finding{Rule: rule, File: f.Path, Line: line, Excerpt: clip(redactTag(tag), excerptWidth), Severity: Hold})
	}
	var forms []*form
	var controls []control
	var open *form // the parser's form element pointer
	z := html.NewTokenizer(bytes.NewReader(f.Content))
	line := 1
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := z.Raw()
		at := line
		line += bytes.Count(raw, []byte("\n"))
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken && tt != html.EndTagToken {
			continue
		}
		name, _ := z.TagName()
		tag := string(name)
		if tt == html.EndTagToken {
			if tag == "form" {
				open = nil
			}
			continue
		}
		attrs := attributes(z)
		text := string(raw)
		if runsJavaScript(tag, attrs) {
			add(RuleJavaScriptURL, at, text)
		}
		switch tag {
		case "form":
			if open == nil { // a browser drops a form start tag inside a form
				open = &form{id: attrs["id"], offOrigin: offOrigin(attrs["action"]), line: at, tag: text}
				forms = append(forms, open)
			}
		case "input", "button":
			c := control{inside: open}
			if id, ok := attrs["form"]; ok {
				c.formID = &id
			}
			if fa, ok := attrs["formaction"]; ok {
				c.offOrigin = offOrigin(fa)
			}
			c.password = tag == "input" && strings.EqualFold(strings.TrimSpace(attrs["type"]), "password")
			if c.password || c.offOrigin {
				controls = append(controls, c)
			}
		case "meta":
			if target, ok := refreshURL(attrs["content"]); ok && strings.EqualFold(strings.TrimSpace(attrs["http-equiv"]), "refresh") && offOrigin(target) {
				add(RuleMetaRefresh, at, text)
			}
		case "base":
			if offOrigin(attrs["href"]) {
				add(RuleBase, at, text)
			}
		}
	}
	byID := map[string][]*form{}
	for _, fm := range forms {
		if fm.id != "" {
			byID[fm.id] = append(byID[fm.id], fm)
		}
	}
	for _, c := range controls {
		owners := []*form{c.inside}
		if c.formID != nil {
			// Any form with the id: source order is not always tree order
			// (foster parenting), so the scan does not guess which is first.
			owners = byID[*c.formID]
		}
		for _, fm := range owners {
			if fm != nil {
				fm.password = fm.password || c.password
				fm.offOrigin = fm.offOrigin || c.offOrigin
			}
		}
	}
	for _, fm := range forms {
		if fm.password && fm.offOrigin {
			add(RulePasswordForm, fm.line, fm.tag)
		}
	}
	return out
}

// runsJavaScript says whether a tag navigates to, submits to or frames a
// javascript: URL, in HTML or SVG, or animates an SVG link to one.
func runsJavaScript(tag string, attrs map[string]string) bool {
	for _, name := range []string{"href", "xlink:href", "action", "formaction"} {
		if javascriptURL(attrs[name]) {
			return true
		}
	}
	switch tag {
	case "iframe", "frame", "embed":
		return javascriptURL(attrs["src"])
	case "object":
		return javascriptURL(attrs["data"])
	case "animate", "set":
		if a := strings.ToLower(strings.TrimSpace(attrs["attributename"])); a != "href" && a != "xlink:href" {
			return false
		}
		values := append(strings.Split(attrs["values"], ";"), attrs["to"], attrs["from"], attrs["by"])
		return slices.ContainsFunc(values, javascriptURL)
	}
	return false
}

// attributes reads the tag's attributes, the first of each name winning as
// in browsers; the tokenizer has folded names to lower case and decoded
// entities.
func attributes(z *html.Tokenizer) map[string]string {
	out := map[string]string{}
	for {
		k, v, more := z.TagAttr()
		if _, seen := out[string(k)]; !seen && len(k) > 0 {
			out[string(k)] = string(v)
		}
		if !more {
			return out
		}
	}
}

// browserURL is a URL attribute as a browser reads it: leading and
// trailing spaces and control characters dropped, tabs and newlines
// removed anywhere.
func browserURL(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	return urlBreaks.Replace(s)
}

// urlBreaks is built once: building a Replacer allocates a table of 256
// entries, which per attribute made the scan of a 2 MB page take seconds.
var urlBreaks = strings.NewReplacer("\t", "", "\n", "", "\r", "")

func javascriptURL(s string) bool {
	return strings.HasPrefix(strings.ToLower(browserURL(s)), "javascript:")
}

// servedOver are the schemes a report's page may have: https, and http on
// a developer's machine. A URL such as "http:evil.example" is a path on an
// http page but another host on an https one, so both are tried.
var servedOver = []string{"https", "http"}

// offOrigin says whether a browser on a report's page would take s to a
// host s names, on either scheme the page may have.
func offOrigin(s string) bool {
	for _, page := range servedOver {
		if hostIn(s, page) != "" {
			return true
		}
	}
	return false
}

// special are the URL standard's special schemes, whose URLs read
// backslashes as slashes and always have a host.
var special = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true, "file": true}

// hostIn is the host a browser reads in ref on a page served over page,
// or "" when ref resolves against the page's own origin (a path, a query,
// a fragment) or does not parse. It follows the URL standard where
// net/url does not: "http:evil.example" from an https page and
// "https:\\evil.example" from any page name evil.example.
func hostIn(ref, page string) string {
	s := browserURL(ref)
	scheme, rest, ok := splitScheme(s)
	if ok && !special[scheme] {
		if u, err := url.Parse(s); err == nil {
			return u.Host
		}
		return ""
	}
	if !ok {
		rest = s // relative to the page, whose scheme is special
	}
	rest = strings.ReplaceAll(rest, `\`, "/")
	if (!ok || scheme == page) && !strings.HasPrefix(rest, "//") {
		return "" // resolved against the page's own origin
	}
	if !ok {
		scheme = page
	}
	// The authority follows however many slashes, up to a path, query or
	// fragment.
	authority := strings.TrimLeft(rest, "/")
	if i := strings.IndexAny(authority, "/?#"); i >= 0 {
		authority = authority[:i]
	}
	if u, err := url.Parse(scheme + "://" + authority + "/"); err == nil {
		return u.Host
	}
	// Beyond net/url (an escape in the name, say): what follows the user
	// information still names a host.
	return authority[strings.LastIndex(authority, "@")+1:]
}

// splitScheme splits a URL's scheme, lower case, from the rest, as the URL
// standard reads one: a letter, then letters, digits, "+", "-" or ".",
// then ":".
func splitScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c|0x20 && c|0x20 <= 'z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(s[:i]), s[i+1:], true
		default:
			return "", s, false
		}
	}
	return "", s, false
}

// refreshURL is the address in a meta refresh's content, read as the HTML
// standard's declarative refresh does: "5; url=…", "0;URL='…'", "3, …",
// "0 https://…"; ok is false when the content is no refresh.
func refreshURL(content string) (target string, ok bool) {
	ws := func(s string) string { return strings.TrimLeft(s, " \t\n\f\r") }
	s := ws(content)
	n := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if n < 0 {
		n = len(s)
	}
	if n == 0 && !strings.HasPrefix(s, ".") {
		return "", false
	}
	s = strings.TrimLeft(s[n:], "0123456789.")
	if s == "" {
		return "", true // a reload of the page itself
	}
	if !strings.ContainsRune(";, \t\n\f\r", rune(s[0])) {
		return "", false
	}
	s = ws(s)
	if s != "" && (s[0] == ';' || s[0] == ',') {
		s = s[1:]
	}
	s = ws(s)
	// "url =" is optional; a quote around the address is dropped.
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		if after := ws(s[3:]); strings.HasPrefix(after, "=") {
			s = ws(after[1:])
		}
	}
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		quote := s[0]
		s = s[1:]
		if i := strings.IndexByte(s, quote); i >= 0 {
			s = s[:i]
		}
	}
	return s, true
}

// redactTag keeps an excerpt of a tag free of any secret its attributes
// might carry in a URL's user information.
func redactTag(tag string) string {
	for _, field := range strings.FieldsFunc(tag, func(r rune) bool { return r == '"' || r == '\'' || r == ' ' || r == '=' }) {
		if u, err := url.Parse(field); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				tag = redact(tag, pw)
			}
		}
	}
	return tag
}
