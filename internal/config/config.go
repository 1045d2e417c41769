// Package config reads the process settings: defaults, then ASSENT_*
// environment variables, then command-line flags.
package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/secretkey"
)

// Config is every setting a subcommand may use.
type Config struct {
	HTTPAddr string
	// WorkerHTTPAddr is where the worker serves its probes and metrics;
	// Off serves none.
	WorkerHTTPAddr string
	// WorkerDeployment is the Temporal worker deployment the worker joins
	// (Worker Versioning); empty runs it unversioned.
	WorkerDeployment string
	// MetricsAddr, when set, serves /metrics alone, and the API's or the
	// worker's listener no longer does.
	MetricsAddr string
	// MetricsToken, when set, is the bearer /metrics needs wherever it is
	// served; serve's API listener serves /metrics only with it.
	MetricsToken string
	BaseURL      string
	DataDir      string
	DatabaseURL  string
	// BlobURL is where report files are kept: s3://… for S3-compatible
	// storage, file:///… for a folder; empty is the data dir's blobs
	// folder.
	BlobURL string
	// ReportsDomain names report hosts: <report key>.<ReportsDomain>.
	ReportsDomain     string
	TemporalAddress   string
	TemporalNamespace string
	TemporalPort      int
	TemporalUIPort    int
	LogLevel          string
	// SMTP settings; an empty SMTPHost means no SMTP (the dev mailbox in
	// `assent dev`). SMTPPort 0 picks the TLS mode's port (587, 465, 25).
	SMTPHost     string
	SMTPPort     int
	SMTPUsername string
	// SMTPPassword comes from the environment only: a flag would show it
	// in the process list.
	SMTPPassword string
	SMTPFrom     string
	SMTPTLS      string
	// DevRetryUnit scales the delivery retry schedule (1s: 1, 4, 16, 64
	// seconds). Dev and tests only.
	DevRetryUnit time.Duration
	// DevAllowLoopback admits receivers on this machine, any port, http.
	// Dev and tests only.
	DevAllowLoopback    bool
	devRetryRaw         string
	devLoopbackRaw      string
	devRetryErr         error
	receiverNetworksRaw string
	// OIDC single sign-on for the pages: all of issuer, client id and
	// secret, or none (off). OIDCLabel is the sign-in button's text.
	OIDCIssuer   string
	OIDCClientID string
	// OIDCClientSecret comes from the environment only, like SMTPPassword.
	OIDCClientSecret string
	OIDCLabel        string
	// TrustedProxies are the addresses (IPs or CIDR ranges) of the load
	// balancers in front of serve, whose X-Forwarded-For names the
	// client. Empty: the connection's own address is the client's.
	TrustedProxies []string
	trustedRaw     string
	// Operators are the emails of the members who run the instance: they
	// may read decoded Temporal payloads in the Temporal UI.
	Operators    []string
	operatorsRaw string
	// TemporalUIURL is the Temporal UI's address, the origin allowed to
	// call the codec endpoint.
	TemporalUIURL string
	// TemporalUIWriteActions lets the embedded Temporal UI change
	// workflows (reset, terminate, cancel, signal, start); nil leaves it
	// to the command: on in `assent dev`, off in `assent temporal`.
	TemporalUIWriteActions *bool
	uiWritesRaw            string
	// TLS to the Temporal frontend: a CA to trust (else the system's), a
	// client certificate and key for mTLS, the name the server's
	// certificate carries. All empty, and no API key: plain gRPC (the
	// embedded server).
	TemporalTLSCA, TemporalTLSCert, TemporalTLSKey, TemporalTLSServerName string
	// TemporalAPIKey is a Temporal Cloud API key, from the environment
	// only, like SMTPPassword; it turns TLS on.
	TemporalAPIKey string
	// SecretKey is the ring the service seals secrets and Temporal
	// payloads with, from the environment only (see SecretKeys).
	SecretKey string
	// SlackAPIURL is Slack's Web API, which organisations' Slack apps are
	// called at; empty is Slack's own. Tests and `assent dev` point it at a
	// fake.
	SlackAPIURL string
	// LongPollsPerKey and LongPolls bound the long-polls (GET …?wait=)
	// open at once: per API key or member token, and in this process.
	LongPollsPerKey int
	LongPolls       int
}

// The long-polls allowed at once by default: 20 per key, 1000 in a
// process (each holds a connection and a little memory, no goroutine of
// the watcher's).
const (
	DefaultLongPollsPerKey = 20
	DefaultLongPolls       = 1000
)

// DefaultWorkerHTTPAddr is where the worker serves its probes and metrics
// unless told: this machine only, beside serve's 8080.
const DefaultWorkerHTTPAddr = "127.0.0.1:8090"

// Off, as ASSENT_WORKER_HTTP_ADDR, serves no probes or metrics.
const Off = "off"

// The default data folders: assent dev's (its databases, key, blobs and
// the demo's keys) and assent temporal's (only its server's temporal.db).
// Apart, so an assent temporal started beside assent dev never opens dev's
// Temporal database, and dev's key is not taken for another instance's.
const (
	DataDir         = ".assent"
	TemporalDataDir = ".assent-temporal"
)

// UseTemporalDataDir makes TemporalDataDir the data folder when neither
// ASSENT_DATA_DIR nor --data-dir names one: assent temporal's. Call it
// after Register and before fs is parsed.
func (c *Config) UseTemporalDataDir(fs *flag.FlagSet) {
	if os.Getenv("ASSENT_DATA_DIR") != "" {
		return
	}
	c.DataDir = TemporalDataDir
	if f := fs.Lookup("data-dir"); f != nil {
		f.DefValue = TemporalDataDir
	}
}

// CheckDevSettings refuses the dev-only settings unless dev is true, so a
// production process never shortens retries or delivers inside the network.
func (c *Config) CheckDevSettings(dev bool) error {
	if c.devRetryErr != nil {
		return fmt.Errorf("ASSENT_DEV_RETRY_UNIT: %w", c.devRetryErr)
	}
	if !dev && (c.DevRetryUnit != 0 || c.DevAllowLoopback) {
		return errors.New("ASSENT_DEV_RETRY_UNIT and ASSENT_DEV_ALLOW_LOOPBACK are for `assent dev` and tests only; unset them")
	}
	return nil
}

// CheckWorkerDeployment refuses a worker deployment name Temporal would:
// it names versions as deployment.build.
func (c *Config) CheckWorkerDeployment() error {
	if d := c.WorkerDeployment; strings.ContainsAny(d, ".:") || strings.HasPrefix(d, "__") {
		return fmt.Errorf("ASSENT_WORKER_DEPLOYMENT: %q may not contain '.' or ':' or begin with '__'", d)
	}
	return nil
}

// NetPolicy is where requests to addresses people give (receivers, the
// model screen, push services) may go: public HTTPS on port 443, the
// networks in ASSENT_RECEIVER_NETWORKS, and this machine when
// ASSENT_DEV_ALLOW_LOOPBACK admits it.
func (c *Config) NetPolicy() (*netguard.Policy, error) {
	nets, err := netguard.ParseNetworks(c.receiverNetworksRaw)
	if err != nil {
		return nil, fmt.Errorf("ASSENT_RECEIVER_NETWORKS: %w", err)
	}
	if c.DevAllowLoopback {
		nets = append(nets, netguard.Loopback...)
	}
	if len(nets) == 0 {
		return netguard.Public, nil
	}
	return netguard.Inside(nets), nil
}

// CheckTrustedProxies reads the trusted proxies into TrustedProxies,
// refusing anything that is not an IP address or a CIDR range.
func (c *Config) CheckTrustedProxies() error {
	c.TrustedProxies = nil
	for _, p := range strings.Split(c.trustedRaw, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if _, err := netip.ParseAddr(p); err != nil {
			if _, err := netip.ParsePrefix(p); err != nil {
				return fmt.Errorf("ASSENT_TRUSTED_PROXIES: %q is neither an IP address nor a CIDR range such as 10.0.0.0/8", p)
			}
		}
		c.TrustedProxies = append(c.TrustedProxies, p)
	}
	return nil
}

// CheckOperators reads the operators' emails and the Temporal UI's origin.
func (c *Config) CheckOperators() error {
	c.Operators = nil
	for _, e := range strings.Split(c.operatorsRaw, ",") {
		if e = strings.ToLower(strings.TrimSpace(e)); e != "" {
			if !strings.Contains(e, "@") {
				return fmt.Errorf("ASSENT_OPERATORS: %q is not an email address", e)
			}
			c.Operators = append(c.Operators, e)
		}
	}
	if c.TemporalUIURL != "" {
		u, err := url.Parse(c.TemporalUIURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("ASSENT_TEMPORAL_UI_URL must be the UI's origin, such as https://temporal.example.com; got %q", c.TemporalUIURL)
		}
		c.TemporalUIURL = u.Scheme + "://" + u.Host
	}
	return nil
}

// CheckTemporalUIWriteActions reads the embedded UI's write switch.
func (c *Config) CheckTemporalUIWriteActions() error {
	c.TemporalUIWriteActions = nil
	if c.uiWritesRaw == "" {
		return nil
	}
	on, err := strconv.ParseBool(c.uiWritesRaw)
	if err != nil {
		return fmt.Errorf("ASSENT_TEMPORAL_UI_WRITE_ACTIONS must be true or false; got %q", c.uiWritesRaw)
	}
	c.TemporalUIWriteActions = &on
	return nil
}

// UIWriteActions says whether the embedded Temporal UI may change
// workflows: as set, else def, the command's default.
func (c *Config) UIWriteActions(def bool) bool {
	if c.TemporalUIWriteActions != nil {
		return *c.TemporalUIWriteActions
	}
	return def
}

// CheckSlackAPIURL refuses a Slack API address that is not an absolute
// http(s) URL.
func (c *Config) CheckSlackAPIURL() error {
	if c.SlackAPIURL == "" {
		return nil
	}
	u, err := url.Parse(c.SlackAPIURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return fmt.Errorf("ASSENT_SLACK_API_URL must be Slack's Web API address, such as https://slack.com/api/; got %q", c.SlackAPIURL)
	}
	return nil
}

// CheckLongPolls refuses caps that would refuse every long-poll, or a
// per-key cap above the process's.
func (c *Config) CheckLongPolls() error {
	if c.LongPollsPerKey < 1 || c.LongPolls < 1 {
		return fmt.Errorf("ASSENT_LONG_POLLS_PER_KEY (%d) and ASSENT_LONG_POLLS (%d) must be at least 1", c.LongPollsPerKey, c.LongPolls)
	}
	if c.LongPollsPerKey > c.LongPolls {
		return fmt.Errorf("ASSENT_LONG_POLLS_PER_KEY (%d) must not exceed ASSENT_LONG_POLLS (%d), the process's cap", c.LongPollsPerKey, c.LongPolls)
	}
	return nil
}

// OIDCEnabled reports whether single sign-on is configured; CheckOIDC
// says whether the configuration is whole.
func (c *Config) OIDCEnabled() bool { return c.OIDCIssuer != "" }

// CheckOIDC refuses a partial single sign-on configuration, naming what
// is missing: the issuer, client id and client secret go together.
func (c *Config) CheckOIDC() error {
	settings := []struct{ name, value string }{
		{"ASSENT_OIDC_ISSUER", c.OIDCIssuer},
		{"ASSENT_OIDC_CLIENT_ID", c.OIDCClientID},
		{"ASSENT_OIDC_CLIENT_SECRET", c.OIDCClientSecret},
	}
	var set, missing []string
	for _, s := range settings {
		if strings.TrimSpace(s.value) == "" {
			missing = append(missing, s.name)
		} else {
			set = append(set, s.name)
		}
	}
	if len(set) == 0 {
		if c.OIDCLabel != "" {
			return errors.New("ASSENT_OIDC_LABEL is set but single sign-on is not configured: set ASSENT_OIDC_ISSUER, ASSENT_OIDC_CLIENT_ID and ASSENT_OIDC_CLIENT_SECRET, or unset the label")
		}
		return nil
	}
	if len(missing) > 0 {
		return fmt.Errorf("single sign-on needs ASSENT_OIDC_ISSUER, ASSENT_OIDC_CLIENT_ID and ASSENT_OIDC_CLIENT_SECRET together: %s %s set but %s %s not",
			strings.Join(set, " and "), isAre(len(set)), strings.Join(missing, " and "), isAre(len(missing)))
	}
	u, err := url.Parse(c.OIDCIssuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("ASSENT_OIDC_ISSUER must be the issuer URL (https://…) exactly as the provider states it, with no query; got %q", c.OIDCIssuer)
	}
	return nil
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// ReportsDomainFor is the reports domain: the configured one, or, when the
// base URL is on this machine, localhost with its port (browsers resolve
// every *.localhost here); "" when reports cannot be read.
func (c *Config) ReportsDomainFor(baseURL string) string {
	if c.ReportsDomain != "" {
		return c.ReportsDomain
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return ""
	}
	if port := u.Port(); port != "" {
		return "localhost:" + port
	}
	return "localhost"
}

// BlobDir is the folder report files are kept in when BlobURL is empty.
func (c *Config) BlobDir() string { return filepath.Join(c.DataDir, "blobs") }

// RequireBaseURL refuses a serve or worker without its public address:
// without it decision tokens have no issuer, so none would be signed, and
// links in emails and events would point nowhere. dev derives one.
func (c *Config) RequireBaseURL() error {
	if c.BaseURL == "" {
		return errors.New("ASSENT_BASE_URL (or --base-url) is required: the address people and agents reach this instance at, " +
			"such as https://assent.example.com, the same for every serve and worker; decision tokens name it as their issuer " +
			"and every link in emails and events starts with it")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("ASSENT_BASE_URL must be an absolute http(s) address with no query, such as https://assent.example.com; got %q", c.BaseURL)
	}
	return nil
}

// PublicBaseURL is the configured base URL without a trailing slash, so
// paths can be appended; empty when none is set.
func (c *Config) PublicBaseURL() string { return strings.TrimSuffix(c.BaseURL, "/") }

// Database is the database URL, defaulting to SQLite in the data dir.
func (c *Config) Database() string {
	if c.DatabaseURL != "" {
		return c.DatabaseURL
	}
	return "sqlite:" + filepath.Join(c.DataDir, "assent.db")
}

// TemporalTLS is the TLS configuration for the Temporal frontend, nil when
// none of its settings is given. An API key, a bearer credential, is never
// sent in clear: with one and no other setting it is TLS with the system's
// CAs (what the SDK would also pick, left to itself).
func (c *Config) TemporalTLS() (*tls.Config, error) {
	if c.TemporalTLSCA == "" && c.TemporalTLSCert == "" && c.TemporalTLSKey == "" && c.TemporalTLSServerName == "" && c.TemporalAPIKey == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TemporalTLSServerName}
	if c.TemporalTLSCA != "" {
		pem, err := os.ReadFile(c.TemporalTLSCA)
		if err != nil {
			return nil, fmt.Errorf("ASSENT_TEMPORAL_TLS_CA: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ASSENT_TEMPORAL_TLS_CA: %s holds no PEM certificate", c.TemporalTLSCA)
		}
	}
	if (c.TemporalTLSCert == "") != (c.TemporalTLSKey == "") {
		return nil, errors.New("ASSENT_TEMPORAL_TLS_CERT and ASSENT_TEMPORAL_TLS_KEY go together: set both for mTLS, or neither")
	}
	if c.TemporalTLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.TemporalTLSCert, c.TemporalTLSKey)
		if err != nil {
			return nil, fmt.Errorf("ASSENT_TEMPORAL_TLS_CERT/KEY: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// SecretKeyFile is where `assent dev` keeps the key it made, in the data
// directory, when ASSENT_SECRET_KEY is not set.
const SecretKeyFile = "secret.key"

// KeySource says where a subcommand may take the secret key from.
type KeySource int

const (
	// KeyFromEnv: ASSENT_SECRET_KEY only (serve, worker).
	KeyFromEnv KeySource = iota
	// KeyOrDataDir: also the data directory's key, when there is one
	// (the tools run beside a dev instance: admin, migrate).
	KeyOrDataDir
	// KeyOrNewInDataDir: also the data directory's key, made on first
	// start (dev).
	KeyOrNewInDataDir
)

// SecretKeys is the instance's key ring, from ASSENT_SECRET_KEY or, as
// from allows, the data directory.
func (c *Config) SecretKeys(from KeySource) (*secretkey.Ring, error) {
	if c.SecretKey != "" {
		return secretkey.Parse(c.SecretKey)
	}
	path := filepath.Join(c.DataDir, SecretKeyFile)
	switch from {
	case KeyOrNewInDataDir:
		return secretkey.LoadOrCreate(path)
	case KeyOrDataDir:
		if _, err := os.Stat(path); err == nil {
			return secretkey.LoadOrCreate(path)
		}
	}
	return nil, fmt.Errorf("%s is required: a random 32-byte key in base64 (openssl rand -base64 32), the same for every serve and worker process; it seals the secrets kept in the database and every Temporal payload", secretkey.Env)
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
