package mail

import (
	"html/template"
	"net/http"

	"github.com/gin-gonic/gin"
)

var mailboxPage = template.Must(template.New("mail").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dev mailbox · Assent</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
article{border:1px solid #ccc;border-radius:6px;padding:1rem;margin:1rem 0}pre{white-space:pre-wrap}</style></head>
<body><h1>Dev mailbox</h1><p>Every email <code>assent dev</code> sends lands here. JSON: <a href="/dev/mail.json">/dev/mail.json</a>.</p>
{{range .}}<article><h2>{{.Subject}}</h2><p>To {{range $i, $t := .To}}{{if $i}}, {{end}}{{$t}}{{end}} · <time>{{.SentAt.Format "2006-01-02 15:04:05 UTC"}}</time></p>
<pre>{{.Text}}</pre>{{range .Links}}<p><a href="{{.}}">{{.}}</a></p>{{end}}</article>
{{else}}<p>No mail yet.</p>{{end}}</body></html>`))

// Mount serves the mailbox at /dev/mail and /dev/mail.json.
func (b *Mailbox) Mount(r *gin.Engine) {
	r.GET("/dev/mail.json", func(c *gin.Context) { c.JSON(http.StatusOK, b.Messages()) })
	r.GET("/dev/mail", func(c *gin.Context) {
		c.Header("Content-Type", "text/html; charset=utf-8")
		if err := mailboxPage.Execute(c.Writer, b.Messages()); err != nil {
			_ = c.Error(err)
		}
	})
}
