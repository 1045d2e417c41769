package mail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMailboxSize is how many messages the dev mailbox keeps.
const DefaultMailboxSize = 200

// Stored is a message as the dev mailbox keeps it. The JSON names are the
// /dev/mail.json contract that browser tests read sign-in links from.
type Stored struct {
	ID      string    `json:"id"`
	To      []string  `json:"to"`
	Subject string    `json:"subject"`
	Text    string    `json:"text"`
	HTML    string    `json:"html"`
	Links   []string  `json:"links"`
	SentAt  time.Time `json:"sentAt"`
}

// Mailbox is the dev Sender: it keeps the latest messages in memory,
// bounded so a long dev session cannot grow without limit. Safe for
// concurrent use.
type Mailbox struct {
	mu   sync.Mutex
	msgs []Stored // oldest first
	max  int
}

// NewMailbox keeps at most max messages (DefaultMailboxSize if max < 1).
func NewMailbox(max int) *Mailbox {
	if max < 1 {
		max = DefaultMailboxSize
	}
	return &Mailbox{max: max}
}

// Send stores m with its links extracted.
func (b *Mailbox) Send(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.validate(); err != nil {
		return err
	}
	s := Stored{ID: newID(), To: slices.Clone(m.To), Subject: m.Subject, Text: m.Text, HTML: m.HTML,
		Links: Links(m.Text, m.HTML), SentAt: time.Now().UTC()}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, s)
	if over := len(b.msgs) - b.max; over > 0 {
		b.msgs = slices.Delete(b.msgs, 0, over)
	}
	return nil
}

// Messages returns the stored messages, newest first; never nil, so JSON
// shows [].
func (b *Mailbox) Messages() []Stored {
	b.mu.Lock()
	out := append([]Stored{}, b.msgs...)
	b.mu.Unlock()
	slices.Reverse(out)
	return out
}

// Get returns the message with the given id, if still kept.
func (b *Mailbox) Get(id string) (Stored, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.msgs {
		if s.ID == id {
			return s, true
		}
	}
	return Stored{}, false
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return "msg_" + hex.EncodeToString(b[:])
}

var (
	textURL = regexp.MustCompile(`https?://[^\s<>"']+`)
	hrefURL = regexp.MustCompile(`(?i)\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`)
)

// Links returns every absolute http(s) URL in text and in the href
// attributes of htmlBody, de-duplicated, in order of appearance (text
// first). Never nil, so JSON shows [].
func Links(text, htmlBody string) []string {
	links := []string{}
	add := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || slices.Contains(links, raw) {
			return
		}
		links = append(links, raw)
	}
	for _, raw := range textURL.FindAllString(text, -1) {
		// Sentence punctuation after a link is not part of it.
		raw = strings.TrimRight(raw, ".,;:!?")
		if strings.HasSuffix(raw, ")") && !strings.Contains(raw, "(") {
			raw = strings.TrimSuffix(raw, ")")
		}
		add(raw)
	}
	for _, m := range hrefURL.FindAllStringSubmatch(htmlBody, -1) {
		add(strings.TrimSpace(html.UnescapeString(m[1] + m[2] + m[3])))
	}
	return links
}
