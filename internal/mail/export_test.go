package mail

import "crypto/x509"

// WithRootCAs lets tests trust their self-signed SMTP server.
func WithRootCAs(s SMTPSettings, pool *x509.CertPool) SMTPSettings {
	s.rootCAs = pool
	return s
}
