package mail

import (
	"encoding/json"
	"html/template"
	"net/http"
)

const pageStyle = `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
article{border:1px solid #ccc;border-radius:6px;padding:1rem;margin:1rem 0}pre{white-space:pre-wrap;overflow-wrap:anywhere}
a{color:#0645ad}iframe{width:100%;height:32rem;border:1px solid #ccc}</style>`

// The HTML body goes into srcdoc as a plain string, so html/template
// escapes it as attribute text; the empty sandbox lets it run no script,
// submit no form and reach no cookie of ours.
var (
	listPage = template.Must(template.New("list").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dev mailbox · Assent</title>` + pageStyle + `</head>
<body><h1>Dev mailbox</h1><p>Every email <code>assent dev</code> sends lands here, newest first. As JSON: <a href="/dev/mail.json">/dev/mail.json</a>.</p>
{{range .}}{{template "msg" .}}{{else}}<p>No mail yet.</p>{{end}}</body></html>
{{define "msg"}}<article><h2><a href="/dev/mail/{{.ID}}">{{.Subject}}</a></h2>
<p>To {{range $i, $t := .To}}{{if $i}}, {{end}}{{$t}}{{end}} · <time datetime="{{.SentAt.Format "2006-01-02T15:04:05Z07:00"}}">{{.SentAt.Format "2006-01-02 15:04:05 UTC"}}</time></p>
<pre>{{.Text}}</pre>{{if .Links}}<ul>{{range .Links}}<li><a href="{{.}}">{{.}}</a></li>{{end}}</ul>{{end}}</article>{{end}}`))

	onePage = template.Must(template.Must(listPage.Clone()).New("one").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Subject}} · Dev mailbox</title>` + pageStyle + `</head>
<body><p><a href="/dev/mail">← Dev mailbox</a></p>{{template "msg" .}}
{{if .HTML}}<h3>HTML</h3><iframe sandbox="" title="HTML body" srcdoc="{{.HTML}}"></iframe>{{end}}</body></html>`))
)

// Handler serves the mailbox at GET /dev/mail (page), /dev/mail/{id} (one
// message with its HTML rendered) and /dev/mail.json. The app mounts it
// under /dev/ in `assent dev` only.
func (b *Mailbox) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /dev/mail.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(b.Messages())
	})
	mux.HandleFunc("GET /dev/mail", func(w http.ResponseWriter, r *http.Request) {
		render(w, listPage, b.Messages())
	})
	mux.HandleFunc("GET /dev/mail/{id}", func(w http.ResponseWriter, r *http.Request) {
		s, ok := b.Get(r.PathValue("id"))
		if !ok {
			http.Error(w, "no such message (the dev mailbox keeps only the latest ones)", http.StatusNotFound)
			return
		}
		render(w, onePage, s)
	})
	return mux
}

func render(w http.ResponseWriter, t *template.Template, data any) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// The srcdoc frame inherits this policy: no script anywhere, images
	// allowed so an email's layout shows.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src * data:; frame-src 'self'; base-uri 'none'; form-action 'none'")
	if err := t.Execute(w, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
