package mail_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/mail"
)

func TestLinksFromTextAndHrefs(t *testing.T) {
	text := "Sign in: https://assent.test/signin?t=abc&x=1.\nOr (see https://assent.test/help) and http://localhost:8080/a, again https://assent.test/help"
	html := `<a href="https://assent.test/signin?t=abc&amp;x=1">in</a> <a href='mailto:a@b.c'>m</a>
<a HREF=https://assent.test/html-only>h</a> <a href="/relative">r</a> <img src="https://img.test/x.png">`
	assert.Equal(t, []string{
		"https://assent.test/signin?t=abc&x=1",
		"https://assent.test/help",
		"http://localhost:8080/a",
		"https://assent.test/html-only",
	}, mail.Links(text, html))
	assert.Equal(t, []string{}, mail.Links("no links", ""))
}

func send(t *testing.T, b *mail.Mailbox, m mail.Message) {
	t.Helper()
	require.NoError(t, b.Send(context.Background(), m))
}

func TestMailboxNewestFirstWithinBound(t *testing.T) {
	b := mail.NewMailbox(3)
	for i := range 5 {
		send(t, b, mail.Message{To: []string{"a@example.com"}, Subject: fmt.Sprintf("m%d", i),
			Text: fmt.Sprintf("open https://assent.test/a/%d now", i)})
	}
	msgs := b.Messages()
	require.Len(t, msgs, 3)
	assert.Equal(t, []string{"m4", "m3", "m2"}, []string{msgs[0].Subject, msgs[1].Subject, msgs[2].Subject})
	assert.Equal(t, []string{"https://assent.test/a/4"}, msgs[0].Links)
	assert.Equal(t, time.UTC, msgs[0].SentAt.Location())
	assert.NotEqual(t, msgs[0].ID, msgs[1].ID)

	got, ok := b.Get(msgs[1].ID)
	require.True(t, ok)
	assert.Equal(t, "m3", got.Subject)
	_, ok = b.Get("msg_gone")
	assert.False(t, ok)
}

func TestMailboxIsSafeForConcurrentUse(t *testing.T) {
	b := mail.NewMailbox(mail.DefaultMailboxSize)
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Go(func() {
			send(t, b, mail.Message{To: []string{"a@example.com"}, Subject: fmt.Sprint(i), Text: "x"})
			_ = b.Messages()
		})
	}
	wg.Wait()
	assert.Len(t, b.Messages(), mail.DefaultMailboxSize)
}

func TestMailboxRefusesWhatSMTPWould(t *testing.T) {
	b := mail.NewMailbox(10)
	assert.Error(t, b.Send(context.Background(), mail.Message{Subject: "s", Text: "t"}))
	assert.Error(t, b.Send(context.Background(), mail.Message{To: []string{"not an address"}, Subject: "s", Text: "t"}))
	assert.Empty(t, b.Messages())
}

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w
}

func TestMailJSONShape(t *testing.T) {
	b := mail.NewMailbox(10)
	send(t, b, mail.Message{To: []string{"a@example.com"}, Subject: "first", Text: "https://assent.test/1"})
	send(t, b, mail.Message{To: []string{"b@example.com", "c@example.com"}, Subject: "second",
		Text: "hi", HTML: `<a href="https://assent.test/2">x</a>`})

	w := get(t, b.Handler(), "/dev/mail.json")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	var raw []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &raw))
	require.Len(t, raw, 2)
	keys := []string{}
	for k := range raw[0] {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"id", "to", "subject", "text", "html", "links", "sentAt"}, keys)

	var msgs []struct {
		ID      string    `json:"id"`
		To      []string  `json:"to"`
		Subject string    `json:"subject"`
		Text    string    `json:"text"`
		HTML    string    `json:"html"`
		Links   []string  `json:"links"`
		SentAt  time.Time `json:"sentAt"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &msgs))
	assert.Equal(t, "second", msgs[0].Subject)
	assert.Equal(t, []string{"b@example.com", "c@example.com"}, msgs[0].To)
	assert.Equal(t, []string{"https://assent.test/2"}, msgs[0].Links)
	assert.Equal(t, `<a href="https://assent.test/2">x</a>`, msgs[0].HTML)
	assert.NotEmpty(t, msgs[0].ID)
	assert.WithinDuration(t, time.Now(), msgs[0].SentAt, time.Minute)
	assert.Equal(t, []string{"https://assent.test/1"}, msgs[1].Links)

	empty := get(t, mail.NewMailbox(1).Handler(), "/dev/mail.json")
	assert.JSONEq(t, "[]", empty.Body.String())
}

func TestMailPagesEscapeContent(t *testing.T) {
	b := mail.NewMailbox(10)
	send(t, b, mail.Message{To: []string{"a@example.com"}, Subject: "<script>alert(1)</script>",
		Text: "see https://assent.test/x", HTML: `<p onclick="x()">hi</p><script>alert(2)</script>`})
	h := b.Handler()

	w := get(t, h, "/dev/mail")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Header().Get("Content-Type"), "text/html")
	body := w.Body.String()
	assert.NotContains(t, body, "<script>")
	assert.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.Contains(t, body, `<a href="https://assent.test/x">https://assent.test/x</a>`)

	id := b.Messages()[0].ID
	w = get(t, h, "/dev/mail/"+id)
	require.Equal(t, http.StatusOK, w.Code)
	body = w.Body.String()
	assert.NotContains(t, body, "<script>")
	assert.Contains(t, body, `sandbox=""`)
	assert.Contains(t, body, `srcdoc="&lt;p onclick=&#34;x()&#34;&gt;hi&lt;/p&gt;&lt;script&gt;alert(2)&lt;/script&gt;"`)
	assert.NotContains(t, w.Header().Get("Content-Security-Policy"), "script-src")

	assert.Equal(t, http.StatusNotFound, get(t, h, "/dev/mail/msg_nope").Code)
	assert.True(t, strings.HasPrefix(id, "msg_"))
}
