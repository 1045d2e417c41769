package publishscan

import (
	"bytes"
	"net/url"
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

// form is an open <form> while the tokenizer is inside it.
type form struct {
	offOrigin bool // its action or a submit button's formaction
	password  bool
	line      int
	tag       string
}

// unsafeHTML finds what would turn a report against its readers. A report
// is served from an origin of its own that its author cannot know, so any
// URL with a host is another origin; relative URLs stay on the report's.
func unsafeHTML(f File) []Finding {
	var out []Finding
	add := func(rule string, line int, tag string) {
		out = append(out, Finding{Rule: rule, File: f.Path, Line: line, Excerpt: clip(redactTag(tag), excerptWidth), Severity: Hold})
	}
	var forms []*form
	closeForm := func() {
		fm := forms[len(forms)-1]
		forms = forms[:len(forms)-1]
		if fm.password && fm.offOrigin {
			add(RulePasswordForm, fm.line, fm.tag)
		}
	}
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
			if tag == "form" && len(forms) > 0 {
				closeForm()
			}
			continue
		}
		attrs := attributes(z)
		text := string(raw)
		switch tag {
		case "a", "area":
			if javascriptURL(attrs["href"]) {
				add(RuleJavaScriptURL, at, text)
			}
		case "iframe":
			if javascriptURL(attrs["src"]) {
				add(RuleJavaScriptURL, at, text)
			}
		case "form":
			action := attrs["action"]
			if javascriptURL(action) {
				add(RuleJavaScriptURL, at, text)
			}
			forms = append(forms, &form{offOrigin: offOrigin(action), line: at, tag: text})
		case "input", "button":
			if fa, ok := attrs["formaction"]; ok {
				if javascriptURL(fa) {
					add(RuleJavaScriptURL, at, text)
				}
				if len(forms) > 0 && offOrigin(fa) {
					forms[len(forms)-1].offOrigin = true
				}
			}
			if tag == "input" && strings.EqualFold(strings.TrimSpace(attrs["type"]), "password") && len(forms) > 0 {
				forms[len(forms)-1].password = true
			}
		case "meta":
			if strings.EqualFold(strings.TrimSpace(attrs["http-equiv"]), "refresh") && offOrigin(refreshURL(attrs["content"])) {
				add(RuleMetaRefresh, at, text)
			}
		case "base":
			if offOrigin(attrs["href"]) {
				add(RuleBase, at, text)
			}
		}
	}
	for len(forms) > 0 { // forms left open at the end still count
		closeForm()
	}
	return out
}

// attributes reads the tag's attributes, the first of each name winning as
// in browsers; the tokenizer has decoded entities.
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
	return strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
}

func javascriptURL(s string) bool {
	return strings.HasPrefix(strings.ToLower(browserURL(s)), "javascript:")
}

// offOrigin says whether s names a host: an absolute or protocol-relative
// URL, which browsers also read with backslashes for slashes.
func offOrigin(s string) bool {
	s = strings.ReplaceAll(browserURL(s), `\`, "/")
	if strings.HasPrefix(s, "//") {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && u.Host != ""
}

// refreshURL is the address in a meta refresh's content: "5; url=…",
// "0;URL='…'", "3, …".
func refreshURL(content string) string {
	i := strings.IndexAny(content, ";,")
	if i < 0 {
		return ""
	}
	rest := strings.TrimSpace(content[i+1:])
	if len(rest) >= 4 && strings.EqualFold(rest[:3], "url") {
		if after := strings.TrimSpace(rest[3:]); strings.HasPrefix(after, "=") {
			rest = strings.TrimSpace(after[1:])
		}
	}
	return strings.Trim(rest, `'"`)
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
