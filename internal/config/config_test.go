package config_test

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/config"
)

func parse(t *testing.T, args ...string) (*config.Config, *flag.FlagSet) {
	t.Helper()
	var c config.Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	c.Register(fs)
	require.NoError(t, fs.Parse(args))
	return &c, fs
}

func TestSMTPSettingsFromEnvironment(t *testing.T) {
	t.Setenv("ASSENT_SMTP_HOST", "smtp.example.com")
	t.Setenv("ASSENT_SMTP_PORT", "2525")
	t.Setenv("ASSENT_SMTP_USERNAME", "mailer")
	t.Setenv("ASSENT_SMTP_PASSWORD", "s3cret")
	t.Setenv("ASSENT_SMTP_FROM", "Acme <approvals@example.com>")
	t.Setenv("ASSENT_SMTP_TLS", "tls")
	c, _ := parse(t)
	assert.Equal(t, "smtp.example.com", c.SMTPHost)
	assert.Equal(t, 2525, c.SMTPPort)
	assert.Equal(t, "mailer", c.SMTPUsername)
	assert.Equal(t, "s3cret", c.SMTPPassword)
	assert.Equal(t, "Acme <approvals@example.com>", c.SMTPFrom)
	assert.Equal(t, "tls", c.SMTPTLS)

	// Flags win over the environment.
	c, _ = parse(t, "-smtp-host", "relay.local", "-smtp-tls", "none")
	assert.Equal(t, "relay.local", c.SMTPHost)
	assert.Equal(t, "none", c.SMTPTLS)
}

func TestSMTPDefaultsAndNoPasswordFlag(t *testing.T) {
	for _, k := range []string{"ASSENT_SMTP_HOST", "ASSENT_SMTP_PORT", "ASSENT_SMTP_USERNAME",
		"ASSENT_SMTP_PASSWORD", "ASSENT_SMTP_FROM", "ASSENT_SMTP_TLS"} {
		t.Setenv(k, "")
	}
	c, fs := parse(t)
	assert.Empty(t, c.SMTPHost, "no SMTP unless configured")
	assert.Equal(t, 0, c.SMTPPort, "0 lets the TLS mode pick the port")
	assert.Equal(t, "starttls", c.SMTPTLS)
	assert.Empty(t, c.SMTPPassword)
	assert.Nil(t, fs.Lookup("smtp-password"), "a password flag would show in the process list")
}
