// Package mail sends the service's email: over SMTP in production, into an
// in-process Mailbox in `assent dev` and tests.
package mail

import (
	"context"
	"errors"
	"fmt"
	netmail "net/mail"
)

// Message is one email. Text is required; HTML, when set, is sent as the
// alternative part so clients that render HTML show it.
type Message struct {
	To      []string
	Subject string
	Text    string
	HTML    string
}

// Sender delivers messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// validate applies the same rules in every sender, so a message the dev
// mailbox accepts is one SMTP would accept too.
func (m Message) validate() error {
	if len(m.To) == 0 {
		return errors.New("mail: message has no recipient")
	}
	for _, to := range m.To {
		if _, err := netmail.ParseAddress(to); err != nil {
			return fmt.Errorf("mail: recipient %q: %w", to, err)
		}
	}
	if m.Subject == "" {
		return errors.New("mail: message has no subject")
	}
	if m.Text == "" {
		return errors.New("mail: message has no text body")
	}
	return nil
}
