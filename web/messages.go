package web

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/assent-hq/assent/internal/apperr"
)

// Labels name a form's fields as its page labels them, keyed by the field
// names the services' refusals carry ("note", "corrections.amount",
// "answers.q1"), so a refusal can name the field as the person sees it.
type Labels map[string]string

// PersonMessage is the one place a refusal becomes the words a page
// shows: the field named by its label on the form, what it must be in a
// person's words, a capital letter and a full stop. The API keeps the
// machine message (e.Message) as it is; the pages never show it raw.
//
// The services word most refusals "<field> must …" or "<field>: …"; the
// field's name is swapped for its label. A refusal that carries
// apperr.Error.Says (a schema's limit, "must be at most 1,000") is said
// with it instead of the library's wording. A field the form does not
// label keeps its name.
func PersonMessage(e *apperr.Error, l Labels) string {
	label, labelled := l.of(e.Field)
	if e.Says != "" && labelled {
		return sentence(label + " " + e.Says)
	}
	rest, named := strings.CutPrefix(e.Message, e.Field+": ")
	if !named && e.Field != "" {
		rest, named = strings.CutPrefix(e.Message, e.Field+" ")
	}
	if !named && labelled {
		// "amount does not meet …" about corrections.amount.
		if last := e.Field[strings.LastIndexAny(e.Field, ".")+1:]; last != e.Field {
			rest, named = strings.CutPrefix(e.Message, last+" ")
		}
	}
	switch {
	case e.Field == "":
		return sentence(e.Message)
	case !labelled && !named && !strings.Contains(strings.ToLower(e.Message), strings.ToLower(e.Field)):
		return sentence(e.Field + ": " + e.Message)
	case !labelled:
		return sentence(e.Message)
	case named:
		rest = predicate(rest)
		if startsWithVerb(rest) {
			return sentence(label + " " + rest)
		}
		return sentence(label + ": " + rest)
	case mentions(e.Message, e.Field) && plainWord(e.Field):
		// Prose that names its field as a word ("needs a written reason").
		return sentence(e.Message)
	case mentions(e.Message, e.Field):
		return sentence(replaceWord(e.Message, e.Field, "“"+label+"”"))
	}
	return sentence(label + ": " + e.Message)
}

// of is the label of field: its own, or the list's it is an element of
// ("fields[2]" is in "fields"); ok is false when the form has none.
func (l Labels) of(field string) (string, bool) {
	if field == "" {
		return "", false
	}
	if s, ok := l[field]; ok {
		return s, true
	}
	// An entry of a list: "Policy, entry 1 (condition)" for
	// policy[0].condition.
	base, rest, cut := strings.Cut(field, "[")
	s, ok := l[base]
	if !cut || !ok {
		return "", false
	}
	index, rest, _ := strings.Cut(rest, "]")
	n, err := strconv.Atoi(index)
	if err != nil {
		return s, true
	}
	s = fmt.Sprintf("%s, entry %d", s, n+1)
	if rest = strings.TrimPrefix(rest, "."); rest != "" {
		s += " (" + rest + ")"
	}
	return s, true
}

// predicates rewrite what follows a field's name where the machine
// wording reads badly after a label.
var predicates = map[string]string{
	"an answer is required":    "is required",
	"must be an email address": "must be an email address, such as name@example.com",
	// A mandate granted from a page starts now.
	"must come after startsAt and be in the future": "must be in the future",
}

func predicate(rest string) string {
	if s, ok := predicates[rest]; ok {
		return s
	}
	return rest
}

// verbs start what can follow a label directly ("Amount must …"); any
// other wording follows it after a colon.
var verbs = map[string]bool{"must": true, "is": true, "may": true, "needs": true, "has": true, "does": true,
	"cannot": true, "can": true, "belongs": true, "should": true, "was": true, "are": true, "holds": true, "leads": true}

func startsWithVerb(s string) bool {
	word, _, _ := strings.Cut(s, " ")
	return verbs[word]
}

// mentions reports whether msg names field as a word of its own.
func mentions(msg, field string) bool {
	return wordOf(field).MatchString(msg)
}

func replaceWord(msg, field, with string) string {
	re := wordOf(field)
	return re.ReplaceAllStringFunc(msg, func(m string) string {
		around := re.FindStringSubmatch(m)
		return around[1] + with + around[2]
	})
}

func wordOf(field string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^\w.\[])` + regexp.QuoteMeta(field) + `($|[^\w\[])`)
}

// plainWord reports whether a field's name is a word of prose (reason,
// quote) rather than a name only a program writes (requiredApprovals,
// escalation.after).
func plainWord(field string) bool {
	return strings.TrimFunc(field, func(r rune) bool { return r >= 'a' && r <= 'z' }) == ""
}

// sentence starts s with a capital, unless its first word is a name whose
// case matters (requiredApprovals, events[1], an email address), and ends
// it with a full stop unless it ends otherwise.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	end := strings.IndexAny(s, " :,;")
	if end < 0 {
		end = len(s)
	}
	word := s[:end]
	if up, ok := initialisms[word]; ok {
		s = up + s[end:]
	} else if strings.TrimFunc(word, func(r rune) bool { return r >= 'a' && r <= 'z' }) == "" {
		s = strings.ToUpper(word[:1]) + s[1:]
	}
	// A message of several lines (a compiler's, pointing at a column)
	// is left to end as it does.
	if r, _ := utf8.DecodeLastRuneInString(s); !strings.ContainsRune(".!?", r) && !strings.Contains(s, "\n") {
		s += "."
	}
	return s
}

// initialisms are the field names a sentence writes in capitals.
var initialisms = map[string]string{"url": "URL", "id": "ID"}
