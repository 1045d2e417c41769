package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"slices"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
	gosmtp "github.com/wneessen/go-mail/smtp"

	"github.com/assent-hq/assent/internal/tracing"
)

// TLS modes for SMTPSettings.TLS.
const (
	TLSStartTLS = "starttls" // plain connect, then mandatory STARTTLS (submission, port 587)
	TLSImplicit = "tls"      // TLS from the first byte (SMTPS, port 465)
	TLSNone     = "none"     // no encryption; for a relay on the same host or network
)

// SMTPSettings configure the SMTP sender. The zero values of Port, TLS and
// Timeout pick the defaults.
type SMTPSettings struct {
	Host string
	// Port defaults by TLS mode: 587 for starttls, 465 for tls, 25 for none.
	Port     int
	Username string
	Password string
	// From is an address, optionally with a display name
	// ("Acme <approvals@acme.example>"); without one the name is "Assent".
	From string
	// TLS is starttls (default), tls or none.
	TLS string
	// Timeout bounds connecting and each command; default 30s.
	Timeout time.Duration

	// rootCAs replaces the system roots; set only by tests, which talk to a
	// server with a self-signed certificate.
	rootCAs *x509.CertPool
}

// SMTP sends messages through an SMTP server, one connection per message.
// A fresh go-mail client per Send keeps Sends independent of each other.
type SMTP struct {
	s    SMTPSettings
	from *netmail.Address
	tls  *tls.Config
}

// NewSMTP checks the settings and fills in the defaults. Errors name the
// setting and its environment variable.
func NewSMTP(s SMTPSettings) (*SMTP, error) {
	if s.Host == "" {
		return nil, errors.New("mail: SMTP host is required (ASSENT_SMTP_HOST)")
	}
	s.TLS = strings.ToLower(s.TLS)
	defaultPort := map[string]int{"": 587, TLSStartTLS: 587, TLSImplicit: 465, TLSNone: 25}
	p, ok := defaultPort[s.TLS]
	if !ok {
		return nil, fmt.Errorf("mail: SMTP TLS mode %q is not one of starttls, tls, none (ASSENT_SMTP_TLS)", s.TLS)
	}
	if s.TLS == "" {
		s.TLS = TLSStartTLS
	}
	if s.Port == 0 {
		s.Port = p
	}
	if s.Port < 1 || s.Port > 65535 {
		return nil, fmt.Errorf("mail: SMTP port %d is out of range (ASSENT_SMTP_PORT)", s.Port)
	}
	if s.Password != "" && s.Username == "" {
		return nil, errors.New("mail: SMTP password is set without a username (ASSENT_SMTP_USERNAME)")
	}
	if s.From == "" {
		return nil, errors.New("mail: SMTP from address is required (ASSENT_SMTP_FROM)")
	}
	from, err := netmail.ParseAddress(s.From)
	if err != nil {
		return nil, fmt.Errorf("mail: SMTP from address %q: %v (ASSENT_SMTP_FROM)", s.From, err)
	}
	if from.Name == "" {
		from.Name = "Assent"
	}
	if s.Timeout < 0 {
		return nil, errors.New("mail: SMTP timeout must not be negative")
	}
	if s.Timeout == 0 {
		s.Timeout = 30 * time.Second
	}
	return &SMTP{s: s, from: from,
		tls: &tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12, RootCAs: s.rootCAs}}, nil
}

// Send delivers m in three steps, each with its own error prefix so an
// operator can tell a wrong host from a wrong password from a refused
// recipient. No error carries the password.
func (c *SMTP) Send(ctx context.Context, m Message) (err error) {
	ctx, end := tracing.Call(ctx, "SMTP send", c.s.Host, c.s.Port)
	defer func() { end(err) }()
	if err := m.validate(); err != nil {
		return err
	}
	msg, err := c.build(m)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(c.s.Host, strconv.Itoa(c.s.Port))

	opts := []gomail.Option{gomail.WithPort(c.s.Port), gomail.WithTimeout(c.s.Timeout),
		gomail.WithTLSConfig(c.tls)}
	switch c.s.TLS {
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	client, err := gomail.NewClient(c.s.Host, opts...)
	if err != nil {
		return fmt.Errorf("mail: SMTP client for %s: %w", addr, err)
	}

	// Dial covers TCP, the greeting, EHLO and STARTTLS; authentication is
	// done below so its failure is reported as such.
	conn, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return fmt.Errorf("mail: connect to SMTP server %s (tls mode %s): %w", addr, c.s.TLS, err)
	}
	defer func() { _ = client.CloseWithSMTPClient(conn) }()
	// The session itself ignores ctx; closing the connection ends it.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()

	if c.s.Username != "" {
		if err := c.auth(conn); err != nil {
			return fmt.Errorf("mail: SMTP authentication as %q at %s failed: %w", c.s.Username, addr, err)
		}
	}
	if err := client.SendWithSMTPClient(conn, msg); err != nil {
		return fmt.Errorf("mail: send via SMTP server %s: %w", addr, err)
	}
	return nil
}

// auth uses PLAIN, else LOGIN: one of the two is offered by every
// submission server we know of.
func (c *SMTP) auth(conn *gosmtp.Client) error {
	ok, mechs := conn.Extension("AUTH")
	if !ok {
		return errors.New("server offers no AUTH")
	}
	// In "none" mode the operator chose a plain connection on purpose.
	plain := c.s.TLS == TLSNone
	offered := strings.Fields(strings.ToUpper(mechs))
	switch {
	case slices.Contains(offered, "PLAIN"):
		return conn.Auth(gosmtp.PlainAuth("", c.s.Username, c.s.Password, c.s.Host, plain))
	case slices.Contains(offered, "LOGIN"):
		return conn.Auth(gosmtp.LoginAuth(c.s.Username, c.s.Password, c.s.Host, plain))
	}
	return fmt.Errorf("server offers neither PLAIN nor LOGIN (offers %q)", mechs)
}

func (c *SMTP) build(m Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg()
	if err := msg.FromFormat(c.from.Name, c.from.Address); err != nil {
		return nil, fmt.Errorf("mail: from address: %w", err)
	}
	if err := msg.To(m.To...); err != nil {
		return nil, fmt.Errorf("mail: recipients: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	return msg, nil
}
