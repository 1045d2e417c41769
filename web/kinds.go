package web

import (
	"io/fs"
	"strings"

	"github.com/gin-gonic/gin"
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
