package web

import (
	"context"
	"io/fs"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/requests"
)

// A KindPage is a request kind's own page, which lives in the kind's
// folder (collections/page) and renders through the pages' kit: Render
// and Fail, the signed-in person (CurrentPerson), a refusal in a
// person's words (PersonMessage, Labels) and the form's text (FormText).
// The layout, the CSRF token and the pages' headers come with the group
// it is mounted in.
type KindPage interface {
	// Templates holds its templates, one page a file (<name>.html), each
	// parsed inside the layout and rendered by its name.
	Templates() fs.FS
	// Mount adds its routes to g, the pages' group, rendering through p;
	// each route that needs a person puts RequireSignIn first.
	Mount(g gin.IRouter, p *Pages)
	// Inbox is its section of the inbox: its first limit requests
	// waiting on who, in order, and the counts of all of them, those due
	// before soon among them.
	Inbox(ctx context.Context, who accounts.Actor, order requests.InboxOrder, soon time.Time, limit int) (InboxSection, error)
}

// An InboxSection is a kind's part of the inbox page: the kinds' sections
// follow one another in the order they are listed, and the page's
// summary adds up their counts.
type InboxSection struct {
	// Heading names the section; the first kind's (approvals) has none.
	Heading string
	Rows    []InboxRow
	requests.Counts
}

// More says whether more wait than the section lists.
func (s InboxSection) More() bool { return len(s.Rows) < s.Total }

// Waiter is a request kind's service as its inbox section reads it
// (requests.Lifecycle).
type Waiter[T any] interface {
	Waiting(ctx context.Context, orgID string, who accounts.Actor, order requests.InboxOrder, limit int) ([]T, error)
	WaitingCounts(ctx context.Context, orgID string, who accounts.Actor, dueBefore time.Time) (requests.Counts, error)
}

// InboxOf is a kind's section of the inbox under heading: its first limit
// requests waiting on who, in order, each as row makes it, and the counts
// of all of them, those due before soon among them.
func InboxOf[T any](ctx context.Context, w Waiter[T], who accounts.Actor, order requests.InboxOrder, soon time.Time, limit int,
	heading string, row func(*T) InboxRow) (InboxSection, error) {
	s := InboxSection{Heading: heading}
	var err error
	if s.Counts, err = w.WaitingCounts(ctx, who.OrgID(), who, soon); err != nil {
		return s, err
	}
	recs, err := w.Waiting(ctx, who.OrgID(), who, order, limit)
	for i := range recs {
		s.Rows = append(s.Rows, row(&recs[i]))
	}
	return s, err
}

// An InboxRow is one request in the inbox: its page, its title, its risk
// and a flag when it has them, and what the line under it says, facts
// joined by " · ".
type InboxRow struct {
	Path, Title, Risk, Flag string
	Facts                   []InboxFact
}

// An InboxFact is one part of a row's line: text, and a time after it
// when At is set ("expires in 3 hours").
type InboxFact struct {
	Text string
	At   *time.Time
}

// A ThreadsPage is a kind's page that shows a report's comment threads
// (a review's): a comment posted from it and refused is shown there again.
type ThreadsPage interface {
	KindPage
	// ShowThreads renders the page of request id again with status, after
	// fill adds to its threads the refusal and what was typed.
	ShowThreads(c *gin.Context, id string, status int, fill func(*ThreadsView))
}

// FormText is a form field's text with its line ends as the API takes
// them (a browser sends CRLF).
func FormText(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
