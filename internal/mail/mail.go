// Package mail sends the service's email. In dev every message lands in an
// in-process mailbox instead of an SMTP server.
package mail

import (
	"context"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/assent-hq/assent/internal/ids"
)

// Message is one email.
type Message struct {
	ID      string    `json:"id"`
	To      []string  `json:"to"`
	Subject string    `json:"subject"`
	Text    string    `json:"text"`
	HTML    string    `json:"html"`
	Links   []string  `json:"links"`
	SentAt  time.Time `json:"sentAt"`
}

// Sender delivers messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Mailbox is the dev sender: it keeps every message in memory, newest
// first, bounded so a long dev session cannot grow without limit.
type Mailbox struct {
	mu       sync.Mutex
	messages []Message
	max      int
}

// NewMailbox keeps at most max messages.
func NewMailbox(max int) *Mailbox { return &Mailbox{max: max} }

var linkPattern = regexp.MustCompile(`https?://[^\s"'<>]+`)

// Send stores m with its links extracted from the text.
func (b *Mailbox) Send(_ context.Context, m Message) error {
	m.ID = ids.New("msg")
	m.SentAt = time.Now().UTC()
	m.Links = linkPattern.FindAllString(m.Text, -1)
	if m.Links == nil {
		m.Links = []string{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.messages = append([]Message{m}, b.messages...)
	if len(b.messages) > b.max {
		b.messages = b.messages[:b.max]
	}
	return nil
}

// Messages returns a copy of the stored messages, newest first.
func (b *Mailbox) Messages() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.messages)
}
