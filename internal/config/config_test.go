package config_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/netguard"
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

// oidcEnv are the single sign-on variables, cleared so the machine's own
// environment cannot leak into a test.
var oidcEnv = []string{"ASSENT_OIDC_ISSUER", "ASSENT_OIDC_CLIENT_ID", "ASSENT_OIDC_CLIENT_SECRET", "ASSENT_OIDC_LABEL"}

func TestOIDCSettingsFromEnvironment(t *testing.T) {
	t.Setenv("ASSENT_OIDC_ISSUER", "https://acme.okta.com")
	t.Setenv("ASSENT_OIDC_CLIENT_ID", "assent")
	t.Setenv("ASSENT_OIDC_CLIENT_SECRET", "s3cret")
	t.Setenv("ASSENT_OIDC_LABEL", "Sign in with Okta")
	c, fs := parse(t)
	require.NoError(t, c.CheckOIDC())
	assert.True(t, c.OIDCEnabled())
	assert.Equal(t, "https://acme.okta.com", c.OIDCIssuer)
	assert.Equal(t, "assent", c.OIDCClientID)
	assert.Equal(t, "s3cret", c.OIDCClientSecret)
	assert.Equal(t, "Sign in with Okta", c.OIDCLabel)
	assert.Nil(t, fs.Lookup("oidc-client-secret"), "a secret flag would show in the process list")

	c, _ = parse(t, "-oidc-label", "Sign in with Acme SSO")
	assert.Equal(t, "Sign in with Acme SSO", c.OIDCLabel, "flags win over the environment")
}

func TestOIDCIsOffByDefault(t *testing.T) {
	for _, k := range oidcEnv {
		t.Setenv(k, "")
	}
	c, _ := parse(t)
	require.NoError(t, c.CheckOIDC())
	assert.False(t, c.OIDCEnabled())
	assert.Empty(t, c.OIDCClientSecret)
}

func TestOIDCNeedsIssuerClientIDAndSecretTogether(t *testing.T) {
	full := map[string]string{
		"ASSENT_OIDC_ISSUER":        "https://sso.example.com/realms/acme",
		"ASSENT_OIDC_CLIENT_ID":     "assent",
		"ASSENT_OIDC_CLIENT_SECRET": "s3cret",
	}
	for _, missing := range []string{"ASSENT_OIDC_ISSUER", "ASSENT_OIDC_CLIENT_ID", "ASSENT_OIDC_CLIENT_SECRET"} {
		t.Run(missing, func(t *testing.T) {
			for _, k := range oidcEnv {
				t.Setenv(k, full[k])
			}
			t.Setenv(missing, "")
			c, _ := parse(t)
			err := c.CheckOIDC()
			require.Error(t, err)
			assert.Contains(t, err.Error(), missing+" is not", "the message names what is missing")
		})
	}

	for _, k := range oidcEnv {
		t.Setenv(k, "")
	}
	t.Setenv("ASSENT_OIDC_CLIENT_SECRET", "s3cret")
	c, _ := parse(t)
	err := c.CheckOIDC()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ASSENT_OIDC_CLIENT_SECRET is set")
	assert.Contains(t, err.Error(), "ASSENT_OIDC_ISSUER and ASSENT_OIDC_CLIENT_ID are not")

	t.Setenv("ASSENT_OIDC_CLIENT_SECRET", "")
	t.Setenv("ASSENT_OIDC_LABEL", "Sign in with Okta")
	c, _ = parse(t)
	err = c.CheckOIDC()
	require.Error(t, err, "a label without a provider is a mistake, not a silent no-op")
	assert.Contains(t, err.Error(), "ASSENT_OIDC_LABEL")
}

func TestOIDCIssuerMustBeAURL(t *testing.T) {
	t.Setenv("ASSENT_OIDC_CLIENT_ID", "assent")
	t.Setenv("ASSENT_OIDC_CLIENT_SECRET", "s3cret")
	t.Setenv("ASSENT_OIDC_LABEL", "")
	for _, bad := range []string{"acme.okta.com", "ftp://acme.okta.com", "https://", "https://acme.okta.com?x=1"} {
		t.Setenv("ASSENT_OIDC_ISSUER", bad)
		c, _ := parse(t)
		err := c.CheckOIDC()
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "ASSENT_OIDC_ISSUER", bad)
	}
	t.Setenv("ASSENT_OIDC_ISSUER", "http://127.0.0.1:8180/realms/dev")
	c, _ := parse(t)
	assert.NoError(t, c.CheckOIDC(), "a local provider over http is allowed")
}

func TestTrustedProxies(t *testing.T) {
	t.Setenv("ASSENT_TRUSTED_PROXIES", "")
	c, _ := parse(t)
	require.NoError(t, c.CheckTrustedProxies())
	assert.Empty(t, c.TrustedProxies, "none trusted unless told")

	t.Setenv("ASSENT_TRUSTED_PROXIES", " 10.0.0.0/8, 192.168.1.10 ,fd00::/8,")
	c, _ = parse(t)
	require.NoError(t, c.CheckTrustedProxies())
	assert.Equal(t, []string{"10.0.0.0/8", "192.168.1.10", "fd00::/8"}, c.TrustedProxies)

	c, _ = parse(t, "-trusted-proxies", "lb.internal")
	err := c.CheckTrustedProxies()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ASSENT_TRUSTED_PROXIES")
	assert.Contains(t, err.Error(), `"lb.internal"`)
}

func TestTemporalTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "assent-worker"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))

	var none config.Config
	conf, err := none.TemporalTLS()
	require.NoError(t, err)
	assert.Nil(t, conf, "no setting: plain gRPC")

	c := config.Config{TemporalTLSCA: certFile, TemporalTLSCert: certFile, TemporalTLSKey: keyFile, TemporalTLSServerName: "temporal.internal"}
	conf, err = c.TemporalTLS()
	require.NoError(t, err)
	assert.Equal(t, "temporal.internal", conf.ServerName)
	assert.Len(t, conf.Certificates, 1)
	assert.NotNil(t, conf.RootCAs)
	assert.GreaterOrEqual(t, conf.MinVersion, uint16(tls.VersionTLS12))

	// An API key alone: TLS, trusting the system's CAs (Temporal Cloud's).
	conf, err = (&config.Config{TemporalAPIKey: "key"}).TemporalTLS()
	require.NoError(t, err)
	require.NotNil(t, conf, "an API key is never sent in clear")
	assert.Nil(t, conf.RootCAs)
	assert.Empty(t, conf.Certificates)
	assert.GreaterOrEqual(t, conf.MinVersion, uint16(tls.VersionTLS12))

	_, err = (&config.Config{TemporalTLSCert: certFile}).TemporalTLS()
	assert.ErrorContains(t, err, "go together")
	_, err = (&config.Config{TemporalTLSCA: keyFile}).TemporalTLS()
	assert.ErrorContains(t, err, "no PEM certificate")
}

func TestTemporalAPIKeyFromEnvironmentOnly(t *testing.T) {
	t.Setenv("ASSENT_TEMPORAL_API_KEY", "tcld-key")
	c, fs := parse(t)
	assert.Equal(t, "tcld-key", c.TemporalAPIKey)
	assert.Nil(t, fs.Lookup("temporal-api-key"), "a key flag would show in the process list")
}

// Reports get localhost:<port> on this machine and nothing elsewhere,
// unless a domain is set.
func TestReportsDomainFor(t *testing.T) {
	c := &config.Config{}
	for base, want := range map[string]string{
		"http://127.0.0.1:8080": "localhost:8080", "http://localhost:9000": "localhost:9000", "http://[::1]:80": "localhost:80",
		"http://localhost": "localhost", "https://assent.example.com": "", "http://10.0.0.5:8080": "",
	} {
		if got := c.ReportsDomainFor(base); got != want {
			t.Errorf("ReportsDomainFor(%q) = %q, want %q", base, got, want)
		}
	}
	c.ReportsDomain = "reports.example.com"
	if got := c.ReportsDomainFor("https://assent.example.com"); got != "reports.example.com" {
		t.Errorf("the setting wins, got %q", got)
	}
}

func TestSlackAPIURL(t *testing.T) {
	t.Setenv("ASSENT_SLACK_API_URL", "")
	c, _ := parse(t)
	require.NoError(t, c.CheckSlackAPIURL())
	assert.Empty(t, c.SlackAPIURL, "Slack's own unless told")

	t.Setenv("ASSENT_SLACK_API_URL", "http://127.0.0.1:9000/api/")
	c, _ = parse(t)
	require.NoError(t, c.CheckSlackAPIURL())
	assert.Equal(t, "http://127.0.0.1:9000/api/", c.SlackAPIURL)

	for _, bad := range []string{"slack.com/api", "ftp://slack.com/api/", "https://user:pw@slack.com/api/", "https://slack.com/api/?token=x"} {
		c, _ = parse(t, "-slack-api-url", bad)
		err := c.CheckSlackAPIURL()
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "ASSENT_SLACK_API_URL")
	}
}

func TestLongPollCaps(t *testing.T) {
	t.Setenv("ASSENT_LONG_POLLS_PER_KEY", "")
	t.Setenv("ASSENT_LONG_POLLS", "")
	c, _ := parse(t)
	require.NoError(t, c.CheckLongPolls())
	assert.Equal(t, 20, c.LongPollsPerKey)
	assert.Equal(t, 1000, c.LongPolls)

	t.Setenv("ASSENT_LONG_POLLS_PER_KEY", "5")
	c, _ = parse(t, "-long-polls", "50")
	require.NoError(t, c.CheckLongPolls())
	assert.Equal(t, 5, c.LongPollsPerKey)
	assert.Equal(t, 50, c.LongPolls)

	for _, bad := range [][]string{{"-long-polls-per-key", "0"}, {"-long-polls", "-1"}, {"-long-polls-per-key", "60", "-long-polls", "50"}} {
		c, _ = parse(t, bad...)
		err := c.CheckLongPolls()
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "ASSENT_LONG_POLLS_PER_KEY", bad)
	}
}

// assent temporal keeps its data apart from assent dev's unless told
// otherwise, by ASSENT_DATA_DIR or --data-dir.
func TestTemporalHasADataDirOfItsOwn(t *testing.T) {
	temporal := func(args ...string) *config.Config {
		var c config.Config
		fs := flag.NewFlagSet("temporal", flag.ContinueOnError)
		c.Register(fs)
		c.UseTemporalDataDir(fs)
		require.NoError(t, fs.Parse(args))
		return &c
	}
	t.Setenv("ASSENT_DATA_DIR", "")
	dev, _ := parse(t)
	assert.Equal(t, ".assent", dev.DataDir)
	assert.Equal(t, ".assent-temporal", temporal().DataDir)
	assert.Equal(t, "/srv/t", temporal("--data-dir", "/srv/t").DataDir)
	t.Setenv("ASSENT_DATA_DIR", "/srv/data")
	assert.Equal(t, "/srv/data", temporal().DataDir)
}

func TestReceiverNetworks(t *testing.T) {
	ctx := context.Background()
	t.Setenv("ASSENT_RECEIVER_NETWORKS", "")
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "")
	c, _ := parse(t)
	p, err := c.NetPolicy()
	require.NoError(t, err)
	assert.Same(t, netguard.Public, p, "public HTTPS only unless told")

	t.Setenv("ASSENT_RECEIVER_NETWORKS", "10.20.0.0/16")
	c, _ = parse(t)
	p, err = c.NetPolicy()
	require.NoError(t, err)
	assert.NoError(t, p.CheckURL(ctx, "http://10.20.1.2:8080/hook"))
	assert.Error(t, p.CheckURL(ctx, "http://127.0.0.1:8080/hook"), "this machine is not one of the networks")

	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	c, _ = parse(t)
	p, err = c.NetPolicy()
	require.NoError(t, err)
	assert.NoError(t, p.CheckURL(ctx, "http://10.20.1.2:8080/hook"))
	assert.NoError(t, p.CheckURL(ctx, "http://127.0.0.1:8080/hook"), "dev adds this machine")

	c, _ = parse(t, "-receiver-networks", "169.254.0.0/16")
	_, err = c.NetPolicy()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ASSENT_RECEIVER_NETWORKS: 169.254.0.0/16 holds the cloud metadata address")
}

func TestWorkerDeployment(t *testing.T) {
	t.Setenv("ASSENT_WORKER_DEPLOYMENT", "")
	c, _ := parse(t)
	require.NoError(t, c.CheckWorkerDeployment())
	assert.Empty(t, c.WorkerDeployment, "unversioned unless told")

	t.Setenv("ASSENT_WORKER_DEPLOYMENT", "assent-prod")
	c, _ = parse(t)
	require.NoError(t, c.CheckWorkerDeployment())
	assert.Equal(t, "assent-prod", c.WorkerDeployment)

	for _, bad := range []string{"assent.prod", "assent:1", "__assent"} {
		c, _ = parse(t, "-worker-deployment", bad)
		err := c.CheckWorkerDeployment()
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "ASSENT_WORKER_DEPLOYMENT")
	}
}
