package mail_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	netmail "net/mail"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/freeport"
	"github.com/assent-hq/assent/internal/mail"
)

// received is what the test server saw in one SMTP session.
type received struct {
	from, user, pass string
	to               []string
	data             []byte
	tls              bool
}

type testServer struct {
	user, pass string
	got        chan received
}

type session struct {
	srv  *testServer
	conn *smtp.Conn
	r    received
}

func (s *testServer) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{srv: s, conn: c}, nil
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.srv.user || pass != s.srv.pass {
			return smtp.ErrAuthFailed
		}
		s.r.user, s.r.pass = user, pass
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.r.user == "" {
		return smtp.ErrAuthRequired
	}
	_, s.r.tls = s.conn.TLSConnectionState()
	s.r.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.r.to = append(s.r.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	var err error
	if s.r.data, err = io.ReadAll(r); err != nil {
		return err
	}
	s.srv.got <- s.r
	return nil
}

func (s *session) Reset()        { s.r = received{user: s.r.user, pass: s.r.pass} }
func (s *session) Logout() error { return nil }

// startServer runs a real SMTP server on 127.0.0.1 in the given TLS mode
// and returns its port and the pool that trusts its certificate.
func startServer(t *testing.T, mode string) (*testServer, int, *x509.CertPool) {
	t.Helper()
	ts := &testServer{user: "mailer", pass: "s3cret-pass", got: make(chan received, 1)}
	srv := smtp.NewServer(ts)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	cert, pool := selfSigned(t)
	l, err := net.Listen("tcp", "127.0.0.1:0") // kept open, so no port race
	require.NoError(t, err)
	switch mode {
	case mail.TLSNone:
		srv.AllowInsecureAuth = true
	case mail.TLSStartTLS:
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	case mail.TLSImplicit:
		l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}})
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ts, l.Addr().(*net.TCPAddr).Port, pool
}

func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "assent test smtp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

var testMessage = mail.Message{
	To:      []string{"ada@example.com", "Grace Hopper <grace@example.com>"},
	Subject: "Approve “deploy to prod”?",
	Text:    "Open https://assent.test/approvals/apr_1 to decide.",
	HTML:    `<p>Open <a href="https://assent.test/approvals/apr_1">the approval</a> to decide.</p>`,
}

func TestSMTPSendsMultipartAlternative(t *testing.T) {
	for _, mode := range []string{mail.TLSNone, mail.TLSStartTLS, mail.TLSImplicit} {
		t.Run(mode, func(t *testing.T) {
			srv, port, pool := startServer(t, mode)
			s, err := mail.NewSMTP(mail.WithRootCAs(mail.SMTPSettings{Host: "127.0.0.1", Port: port,
				Username: "mailer", Password: "s3cret-pass", From: "approvals@assent.test", TLS: mode}, pool))
			require.NoError(t, err)
			require.NoError(t, s.Send(context.Background(), testMessage))

			var got received
			select {
			case got = <-srv.got:
			case <-time.After(5 * time.Second):
				t.Fatal("the server received no message")
			}
			assert.Equal(t, "approvals@assent.test", got.from)
			assert.Equal(t, []string{"ada@example.com", "grace@example.com"}, got.to)
			assert.Equal(t, "mailer", got.user)
			assert.Equal(t, "s3cret-pass", got.pass)
			assert.Equal(t, mode != mail.TLSNone, got.tls, "encrypted exactly when the mode says so")

			msg, err := netmail.ReadMessage(bytes.NewReader(got.data))
			require.NoError(t, err)
			subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
			require.NoError(t, err)
			assert.Equal(t, testMessage.Subject, subject)
			from, err := netmail.ParseAddress(msg.Header.Get("From"))
			require.NoError(t, err)
			assert.Equal(t, &netmail.Address{Name: "Assent", Address: "approvals@assent.test"}, from)

			parts := readAlternative(t, msg)
			assert.Equal(t, testMessage.Text, strings.TrimSpace(parts["text/plain"]))
			assert.Equal(t, testMessage.HTML, strings.TrimSpace(parts["text/html"]))
		})
	}
}

// readAlternative returns the body of each part of a multipart/alternative
// message by media type.
func readAlternative(t *testing.T, msg *netmail.Message) map[string]string {
	t.Helper()
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	require.NoError(t, err)
	require.Equal(t, "multipart/alternative", mt)
	parts := map[string]string{}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart() // decodes quoted-printable itself
		if err == io.EOF {
			return parts
		}
		require.NoError(t, err)
		var body io.Reader = p
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
			body = base64.NewDecoder(base64.StdEncoding, p)
		}
		b, err := io.ReadAll(body)
		require.NoError(t, err)
		ct, _, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		require.NoError(t, err)
		parts[ct] = string(b)
	}
}

func TestSMTPWrongPasswordIsAnAuthenticationError(t *testing.T) {
	_, port, _ := startServer(t, mail.TLSNone)
	s, err := mail.NewSMTP(mail.SMTPSettings{Host: "127.0.0.1", Port: port, Username: "mailer",
		Password: "not-the-password", From: "approvals@assent.test", TLS: mail.TLSNone})
	require.NoError(t, err)
	err = s.Send(context.Background(), testMessage)
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), "authentication")
	assert.Contains(t, err.Error(), `"mailer"`)
	assert.NotContains(t, err.Error(), "not-the-password")
}

func TestSMTPRefusedConnectionSaysConnect(t *testing.T) {
	port, err := freeport.Pick("127.0.0.1") // free, so nothing listens there
	require.NoError(t, err)
	s, err := mail.NewSMTP(mail.SMTPSettings{Host: "127.0.0.1", Port: port, Username: "mailer",
		Password: "s3cret-pass", From: "approvals@assent.test", TLS: mail.TLSNone, Timeout: 5 * time.Second})
	require.NoError(t, err)
	err = s.Send(context.Background(), testMessage)
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), "connect to SMTP server 127.0.0.1:"+strconv.Itoa(port))
	assert.Contains(t, err.Error(), "refused")
	assert.NotContains(t, err.Error(), "s3cret-pass")
}

func TestSMTPStartTLSRefusesAnUntrustedCertificate(t *testing.T) {
	_, port, _ := startServer(t, mail.TLSStartTLS)
	s, err := mail.NewSMTP(mail.SMTPSettings{Host: "127.0.0.1", Port: port, Username: "mailer",
		Password: "s3cret-pass", From: "approvals@assent.test"}) // system roots only
	require.NoError(t, err)
	err = s.Send(context.Background(), testMessage)
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), "connect to SMTP server")
	assert.Contains(t, err.Error(), "certificate")
}

func TestNewSMTPNamesTheBadSetting(t *testing.T) {
	ok := mail.SMTPSettings{Host: "smtp.example.com", From: "a@example.com"}
	for name, tc := range map[string]struct {
		edit func(*mail.SMTPSettings)
		want string
	}{
		"no host":          {func(s *mail.SMTPSettings) { s.Host = "" }, "ASSENT_SMTP_HOST"},
		"bad tls":          {func(s *mail.SMTPSettings) { s.TLS = "ssl" }, "ASSENT_SMTP_TLS"},
		"bad port":         {func(s *mail.SMTPSettings) { s.Port = 70000 }, "ASSENT_SMTP_PORT"},
		"no from":          {func(s *mail.SMTPSettings) { s.From = "" }, "ASSENT_SMTP_FROM"},
		"bad from":         {func(s *mail.SMTPSettings) { s.From = "not an address" }, "ASSENT_SMTP_FROM"},
		"password alone":   {func(s *mail.SMTPSettings) { s.Password = "pw" }, "ASSENT_SMTP_USERNAME"},
		"negative timeout": {func(s *mail.SMTPSettings) { s.Timeout = -time.Second }, "timeout"},
	} {
		t.Run(name, func(t *testing.T) {
			s := ok
			tc.edit(&s)
			_, err := mail.NewSMTP(s)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := mail.NewSMTP(ok)
	assert.NoError(t, err)
}
