// Package page is a request for information's page: its questions with
// what the person answered, the answer form (a draft or a submission),
// and what others replied, rendered through the pages' kit (web.KindPage).
package page

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/web"
)

//go:embed collection.html
var templates embed.FS

// Page is the page of the requests for information of service.
type Page struct {
	service *collections.Service
	pages   *web.Pages
}

// New is the page of service's requests for information.
func New(service *collections.Service) *Page { return &Page{service: service} }

// Templates holds the page's template.
func (*Page) Templates() fs.FS { return templates }

// Mount adds the page and its answer form to g.
func (p *Page) Mount(g gin.IRouter, pages *web.Pages) {
	p.pages = pages
	g.GET(paths.CollectionPage, web.RequireSignIn, p.show)
	g.POST("/collections/:id/replies", web.RequireSignIn, p.reply)
}

// collectionPage is the page of a request for information.
type collectionPage struct {
	C *collections.Collection
	// Questions are the questions with what this person answered (a
	// submitted reply, else their draft, else what they just typed).
	Questions []answeredQuestion
	// Respondent is whether the viewer was asked; Replied whether they
	// submitted; Open whether anyone still may.
	Respondent, Replied, Open bool
	// Saved is set after a draft was saved.
	Saved      bool
	Submission string
	Problem    string
	// ProblemField is the question the problem is about.
	ProblemField string
}

// answeredQuestion is a question and the person's answer, as form values.
type answeredQuestion struct {
	questions.Question
	// Values are the answer as the form holds it: one value, or the
	// options chosen.
	Values []string
}

// Text is the answer as a person reads it, for the read-only view.
func (q answeredQuestion) Text() string { return strings.Join(q.Values, ", ") }

// Has reports whether v is among the values (a chosen option).
func (q answeredQuestion) Has(v string) bool { return slices.Contains(q.Values, v) }

// Value is the single value of a one-value question.
func (q answeredQuestion) Value() string {
	if len(q.Values) == 0 {
		return ""
	}
	return q.Values[0]
}

// Field is the form field's name.
func (q answeredQuestion) Field() string { return "answer." + q.ID }

func (p *Page) show(c *gin.Context) {
	p.showCollection(c, http.StatusOK, "", "", nil)
}

// showCollection renders the collection in the path for the signed-in
// person, with problem (a refused reply) and what they typed.
func (p *Page) showCollection(c *gin.Context, status int, problem, problemField string, typed map[string][]string) {
	person := web.CurrentPerson(c)
	ctx := c.Request.Context()
	col, err := p.service.View(ctx, person.Actor(), c.Param("id"))
	if err != nil {
		p.pages.Fail(c, err)
		return
	}
	page := collectionPage{C: col, Respondent: slices.Contains(col.RespondentIDs, person.ID()), Replied: col.Replied(person.ID()),
		Open: col.Status == states.Open, Saved: c.Query("saved") == "1", Submission: ids.New("sub"),
		Problem: problem, ProblemField: problemField}
	answers := map[string]json.RawMessage{}
	for _, r := range col.Replies.V {
		if r.RespondentID == person.ID() {
			answers = r.Answers
		}
	}
	if !page.Replied && typed == nil {
		if answers, err = p.service.Draft(ctx, person.Actor(), col.ID); err != nil {
			p.pages.Fail(c, err)
			return
		}
	}
	for _, q := range col.Questions.V {
		aq := answeredQuestion{Question: q}
		if typed != nil {
			aq.Values = typed[q.ID]
		} else {
			aq.Values = formValues(answers[q.ID])
		}
		page.Questions = append(page.Questions, aq)
	}
	p.pages.Render(c, status, "collection", page)
}

// reply handles the answer form: "Save draft" keeps the answers for
// later, "Submit" sends them, through the same code as the REST endpoint.
// Each rendered form is its own Update (its submission id).
func (p *Page) reply(c *gin.Context) {
	person := web.CurrentPerson(c)
	ctx := c.Request.Context()
	col, err := p.service.View(ctx, person.Actor(), c.Param("id"))
	if err != nil {
		p.pages.Fail(c, err)
		return
	}
	typed := map[string][]string{}
	in := collections.ReplyInput{Answers: map[string]json.RawMessage{}, Submit: c.PostForm("action") == "submit"}
	for _, q := range col.Questions.V {
		values := c.PostFormArray("answer." + q.ID)
		for i := range values {
			values[i] = web.FormText(values[i])
		}
		typed[q.ID] = values
		in.Answers[q.ID] = answerJSON(q, values)
	}
	if _, err := p.service.Reply(ctx, person.Actor(), col.ID, c.PostForm("submission"), in); err != nil {
		e, ok := apperr.As(err)
		if !ok {
			p.pages.InternalError(c, err)
			return
		}
		// The page names a question by its prompt, not its id.
		l := web.Labels{}
		for _, q := range col.Questions.V {
			l["answers."+q.ID] = "The answer to “" + q.Prompt + "”"
		}
		p.showCollection(c, e.Status(), web.PersonMessage(e, l), strings.TrimPrefix(e.Field, "answers."), typed)
		return
	}
	target := paths.Collection(col.ID)
	if !in.Submit {
		target += "?saved=1"
	}
	c.Redirect(http.StatusSeeOther, target)
}

// answerJSON turns a question's form values into the JSON the service
// checks: a number or a yes/no as typed JSON when it reads as one (else
// as text, which the check refuses, naming the question), options as a
// list, and nothing as null.
func answerJSON(q questions.Question, values []string) json.RawMessage {
	if q.Kind == questions.MultiChoice {
		b, _ := json.Marshal(nonEmpty(values))
		return b
	}
	v := ""
	if len(values) > 0 {
		v = values[0]
	}
	if q.Kind != questions.Text && q.Kind != questions.LongText {
		v = strings.TrimSpace(v)
	}
	if v == "" {
		return json.RawMessage("null")
	}
	switch q.Kind {
	case questions.Number:
		var n json.Number
		if json.Unmarshal([]byte(v), &n) == nil {
			return json.RawMessage(v)
		}
	case questions.Boolean:
		if v == "true" || v == "false" {
			return json.RawMessage(v)
		}
	}
	b, _ := json.Marshal(v)
	return b
}

// formValues shows a stored answer as form values: text unquoted, a list
// as its items, anything else as its JSON text.
func formValues(raw json.RawMessage) []string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	return []string{string(raw)}
}

func nonEmpty(values []string) []string {
	out := []string{}
	for _, v := range values {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Inbox is the requests for information's section of the inbox: each
// with how many questions it asks, when it is wanted and when it closes.
func (p *Page) Inbox(ctx context.Context, who accounts.Actor, order requests.InboxOrder, soon time.Time, limit int) (web.InboxSection, error) {
	return web.InboxOf(ctx, p.service, who, order, soon, limit, "Requests for information", func(c *collections.Collection) web.InboxRow {
		n := len(c.Questions.V)
		facts := []web.InboxFact{{Text: "Requested by " + c.RequestedBy}, {Text: fmt.Sprintf("%d question%s", n, plural(n))}}
		if c.DueAt != nil {
			facts = append(facts, web.InboxFact{Text: "wanted", At: c.DueAt})
		}
		return web.InboxRow{Path: paths.Collection(c.ID), Title: c.Title, Facts: append(facts, web.InboxFact{Text: "closes", At: &c.ExpiresAt})}
	})
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
