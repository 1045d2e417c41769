package config

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/assent-hq/assent/internal/secretkey"
)

// Setting is one process setting: its environment variable, its flag
// (none for a secret, which would show in the process list, and for the
// dev-only switches), its default, and what it does. Settings is the one
// list: Register declares the flags from it and SettingsTable renders the
// README's table from it.
type Setting struct {
	Env string
	// Flag is the flag's name without dashes; "" reads the environment
	// only.
	Flag string
	// Default is the value when neither the flag nor the variable is set,
	// as the variable would give it.
	Default string
	// Shown is the default as the README states it (Markdown); "" shows
	// Default in code, or "unset".
	Shown string
	// UsedBy names the subcommands that read it (of Commands): those
	// that take its flag, and the README's "Used by" column.
	UsedBy []string
	// UsedByNote, when set, is that column's text instead.
	UsedByNote string
	// Doc says what it does (Markdown); the flag's help is Doc without
	// the backquotes, followed by the variable's name.
	Doc string
	// field is where Register puts the value: a *string or an *int. nil
	// for a setting its command reads itself (ASSENT_API_KEY).
	field func(*Config) any
}

// Commands are the subcommands settings are read by, in the README's order.
var Commands = []string{"dev", "serve", "worker", "migrate", "temporal", "admin", "mcp"}

// Flags are the flags of the settings command reads, in Settings' order.
func Flags(command string) []string {
	var out []string
	for _, s := range Settings {
		if s.Flag != "" && slices.Contains(s.UsedBy, command) {
			out = append(out, s.Flag)
		}
	}
	return out
}

// usedBy is the README's "Used by" cell: the commands named, or "all", or
// "all but …" when at most two are left out.
func (s Setting) usedBy() string {
	if s.UsedByNote != "" {
		return s.UsedByNote
	}
	var missing []string
	for _, c := range Commands {
		if !slices.Contains(s.UsedBy, c) {
			missing = append(missing, c)
		}
	}
	switch {
	case len(missing) == 0:
		return "all"
	case len(missing) <= 2 && len(missing) < len(s.UsedBy):
		return "all but " + strings.Join(missing, ", ")
	}
	return strings.Join(s.UsedBy, ", ")
}

// Settings lists every setting, in the README's order.
var Settings = []Setting{
	{Env: "ASSENT_HTTP_ADDR", Flag: "http-addr", Default: "127.0.0.1:8080", UsedBy: []string{"dev", "serve"},
		Doc:   "address the API and pages listen on; port 0 picks a free one",
		field: func(c *Config) any { return &c.HTTPAddr }},
	{Env: "ASSENT_WORKER_HTTP_ADDR", Flag: "worker-http-addr", Default: DefaultWorkerHTTPAddr, UsedBy: []string{"worker"},
		Doc: "address the worker serves `/healthz`, `/readyz` (database and Temporal reachable) and `/metrics` on; `off` serves none, " +
			"port 0 picks a free one. Keep it off the public network: `0.0.0.0:8090` lets probes and Prometheus on other hosts reach it",
		field: func(c *Config) any { return &c.WorkerHTTPAddr }},
	{Env: "ASSENT_WORKER_DEPLOYMENT", Flag: "worker-deployment", Shown: "unset: an unversioned worker", UsedBy: []string{"worker"},
		Doc: "Temporal worker deployment the worker joins (Worker Versioning), such as `assent`: the worker is the version of it " +
			"named by its build, every workflow type auto-upgrades, and the worker makes its build the current version as it starts " +
			"(docs/operations.md, \"Upgrading with requests pending\")",
		field: func(c *Config) any { return &c.WorkerDeployment }},
	{Env: "ASSENT_METRICS_ADDR", Flag: "metrics-addr",
		Shown:  "unset: `/metrics` on the API's listener (`dev`; `serve` only with `ASSENT_METRICS_TOKEN`), the worker's for `worker`",
		UsedBy: []string{"dev", "serve", "worker"},
		Doc: "address of a listener of its own serving only `/metrics` (Prometheus text format), such as `10.0.0.5:9464`; " +
			"the API's listener (or the worker's) then no longer serves it. Keep it off the public network",
		field: func(c *Config) any { return &c.MetricsAddr }},
	{Env: "ASSENT_METRICS_TOKEN", Shown: "unset: `serve` serves `/metrics` only on `ASSENT_METRICS_ADDR`", UsedBy: []string{"dev", "serve", "worker"},
		Doc: "a bearer token `/metrics` then needs wherever it is served (`Authorization: Bearer <token>`, Prometheus's " +
			"`authorization` in its scrape config), answering 401 without it; with it `serve`'s API listener serves `/metrics` too. " +
			"Environment only, so it stays out of the process list",
		field: func(c *Config) any { return &c.MetricsToken }},
	{Env: "ASSENT_BASE_URL", Flag: "base-url", Shown: "dev: `http://<http addr>`; **required** by serve and worker", UsedBy: []string{"dev", "serve", "worker", "mcp"},
		Doc: "public address of the API and pages, such as `https://assent.example.com`, the same for every serve and worker: " +
			"the links in emails, pages and event data, and the issuer of decision tokens; `assent mcp` calls the API there",
		field: func(c *Config) any { return &c.BaseURL }},
	{Env: "ASSENT_DATA_DIR", Flag: "data-dir", Default: DataDir, Shown: "`.assent`; `assent temporal`: `.assent-temporal`", UsedBy: []string{"dev", "serve", "worker", "migrate", "temporal", "admin"},
		Doc: "folder for this machine's state: the default SQLite database and report files, the embedded Temporal server's database, " +
			"and `assent dev`'s secret key and `bootstrap.json`; one per instance",
		field: func(c *Config) any { return &c.DataDir }},
	{Env: "ASSENT_DATABASE_URL", Flag: "database-url", Shown: "`sqlite:<data dir>/assent.db`", UsedBy: []string{"dev", "serve", "worker", "migrate", "admin"},
		Doc:   "`postgres://…` (production) or `sqlite:<path>`",
		field: func(c *Config) any { return &c.DatabaseURL }},
	{Env: "ASSENT_REPORTS_DOMAIN", Flag: "reports-domain", Shown: "`localhost:<port>` when the base URL is on this machine, else unset (reports unreadable)", UsedBy: []string{"dev", "serve"},
		Doc: "domain whose subdomains serve reports, one origin each, such as `reports.example.com` with a wildcard DNS record and certificate; " +
			"never the app's own host",
		field: func(c *Config) any { return &c.ReportsDomain }},
	{Env: "ASSENT_BLOB_URL", Flag: "blob-url", Shown: "the `blobs` folder of the data dir", UsedBy: []string{"dev", "serve"},
		Doc: "where report files are kept: `s3://bucket?region=…&endpoint=…&use_path_style=true` for S3-compatible storage " +
			"(credentials from `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`), shared by every serve, or `file:///path`",
		field: func(c *Config) any { return &c.BlobURL }},
	{Env: "ASSENT_TEMPORAL_ADDRESS", Flag: "temporal-address", Default: "127.0.0.1:7233", UsedBy: []string{"serve", "worker", "admin"},
		Doc:   "Temporal frontend host:port",
		field: func(c *Config) any { return &c.TemporalAddress }},
	{Env: "ASSENT_TEMPORAL_NAMESPACE", Flag: "temporal-namespace", Default: "default", UsedBy: []string{"dev", "serve", "worker", "temporal", "admin"},
		Doc:   "Temporal namespace",
		field: func(c *Config) any { return &c.TemporalNamespace }},
	{Env: "ASSENT_TEMPORAL_PORT", Flag: "temporal-port", Default: "7233", UsedBy: []string{"dev", "temporal"},
		Doc:   "the embedded Temporal frontend's port; 0 picks a free one",
		field: func(c *Config) any { return &c.TemporalPort }},
	{Env: "ASSENT_TEMPORAL_UI_PORT", Flag: "temporal-ui-port", Default: "8233", UsedBy: []string{"dev", "temporal"},
		Doc:   "the embedded Temporal UI's port; 0 picks a free one, -1 turns the UI off",
		field: func(c *Config) any { return &c.TemporalUIPort }},
	{Env: "ASSENT_LOG_LEVEL", Flag: "log-level", Default: "info", UsedBy: []string{"dev", "serve", "worker", "migrate", "temporal"},
		Doc:   "`debug`, `info`, `warn` or `error`; logs are JSON lines on stderr",
		field: func(c *Config) any { return &c.LogLevel }},
	{Env: "ASSENT_SMTP_HOST", Flag: "smtp-host", Shown: "unset (no email)", UsedBy: []string{"serve", "worker"},
		Doc: "SMTP server that sign-in links and notifications are sent through; unset sends none, so nobody can sign in by email " +
			"(`assent dev` keeps its own mailbox at `/dev/mail` instead)",
		field: func(c *Config) any { return &c.SMTPHost }},
	{Env: "ASSENT_SMTP_PORT", Flag: "smtp-port", Default: "0", Shown: "`0`: 587 for `starttls`, 465 for `tls`, 25 for `none`", UsedBy: []string{"serve", "worker"},
		Doc:   "SMTP port; 0 picks the TLS mode's",
		field: func(c *Config) any { return &c.SMTPPort }},
	{Env: "ASSENT_SMTP_TLS", Flag: "smtp-tls", Default: "starttls", UsedBy: []string{"serve", "worker"},
		Doc:   "`starttls`, `tls` (implicit, SMTPS) or `none`",
		field: func(c *Config) any { return &c.SMTPTLS }},
	{Env: "ASSENT_SMTP_FROM", Flag: "smtp-from", Shown: "unset; required with `ASSENT_SMTP_HOST`", UsedBy: []string{"serve", "worker"},
		Doc:   "sender address, such as `Assent <assent@example.com>`",
		field: func(c *Config) any { return &c.SMTPFrom }},
	{Env: "ASSENT_SMTP_USERNAME", Flag: "smtp-username", Shown: "unset (no authentication)", UsedBy: []string{"serve", "worker"},
		Doc:   "SMTP user name; the password is read from `ASSENT_SMTP_PASSWORD` only",
		field: func(c *Config) any { return &c.SMTPUsername }},
	{Env: "ASSENT_SMTP_PASSWORD", UsedBy: []string{"serve", "worker"},
		Doc:   "the SMTP password (environment only, so it stays out of the process list)",
		field: func(c *Config) any { return &c.SMTPPassword }},
	{Env: "ASSENT_OIDC_ISSUER", Flag: "oidc-issuer", Shown: "unset (single sign-on off)", UsedBy: []string{"dev", "serve"},
		Doc: "OpenID Connect issuer URL for single sign-on (\"Sign in with …\" on the sign-in page); needs the client id and secret; " +
			"register `<base URL>/signin/oidc/callback` as the redirect URL",
		field: func(c *Config) any { return &c.OIDCIssuer }},
	{Env: "ASSENT_OIDC_CLIENT_ID", Flag: "oidc-client-id", UsedBy: []string{"dev", "serve"},
		Doc:   "the OpenID Connect client id registered with the provider; the secret is read from `ASSENT_OIDC_CLIENT_SECRET` only",
		field: func(c *Config) any { return &c.OIDCClientID }},
	{Env: "ASSENT_OIDC_CLIENT_SECRET", UsedBy: []string{"dev", "serve"},
		Doc:   "the OpenID Connect client secret (environment only, so it stays out of the process list)",
		field: func(c *Config) any { return &c.OIDCClientSecret }},
	{Env: "ASSENT_OIDC_LABEL", Flag: "oidc-label", Shown: "`Sign in with single sign-on`", UsedBy: []string{"dev", "serve"},
		Doc:   "the sign-in button's text, such as `Sign in with Okta`",
		field: func(c *Config) any { return &c.OIDCLabel }},
	{Env: secretkey.Env, Shown: "dev: made on first start and kept in `<data dir>/secret.key`", UsedBy: []string{"dev", "serve", "worker", "migrate", "admin"}, UsedByNote: "**required** by serve and worker; dev, migrate and admin also read the data dir's key",
		Doc: "a random 32-byte key in base64 (`openssl rand -base64 32`), the same for every process; it seals webhook and callback " +
			"secrets and stored idempotent responses, and encrypts every Temporal payload. Several keys, comma-separated: the first seals, " +
			"all open (rotation: `docs/security.md`)",
		field: func(c *Config) any { return &c.SecretKey }},
	{Env: "ASSENT_OPERATORS", Flag: "operators", Shown: "dev: `owner@example.com`", UsedBy: []string{"dev", "serve"},
		Doc:   "comma-separated emails of the members who run the instance; signed in, they see decoded payloads in the Temporal UI",
		field: func(c *Config) any { return &c.operatorsRaw }},
	{Env: "ASSENT_TEMPORAL_UI_URL", Flag: "temporal-ui-url", Shown: "dev: the embedded UI", UsedBy: []string{"dev", "serve"},
		Doc:   "the Temporal UI's origin, such as `https://temporal.example.com`, the only one allowed to decode payloads through `/temporal/codec`",
		field: func(c *Config) any { return &c.TemporalUIURL }},
	{Env: "ASSENT_TEMPORAL_UI_WRITE_ACTIONS", Flag: "temporal-ui-write-actions", Shown: "unset: on in dev, off in temporal", UsedBy: []string{"dev", "temporal"},
		Doc:   "`true` lets the embedded Temporal UI reset, terminate, cancel, signal and start workflows; `false` keeps it read-only",
		field: func(c *Config) any { return &c.uiWritesRaw }},
	{Env: "ASSENT_TRUSTED_PROXIES", Flag: "trusted-proxies", Shown: "unset (none)", UsedBy: []string{"dev", "serve"},
		Doc: "comma-separated IPs or CIDR ranges of the load balancers whose `X-Forwarded-For` names the client; " +
			"the sign-in limit counts per client",
		field: func(c *Config) any { return &c.trustedRaw }},
	{Env: "ASSENT_RECEIVER_NETWORKS", Flag: "receiver-networks", Shown: "unset (public HTTPS on port 443 only)", UsedBy: []string{"dev", "serve", "worker"},
		Doc: "comma-separated CIDR networks of your own (`10.20.0.0/16`) where webhook and callback receivers, the model screen and push " +
			"services may also be reached, at any port and over http; a network holding the cloud metadata address is refused",
		field: func(c *Config) any { return &c.receiverNetworksRaw }},
	{Env: "ASSENT_SLACK_API_URL", Flag: "slack-api-url", Shown: "`https://slack.com/api/`", UsedBy: []string{"dev", "serve", "worker"},
		Doc:   "Slack's Web API, which organisations' Slack apps are called at; tests and `assent dev` point it at a fake Slack",
		field: func(c *Config) any { return &c.SlackAPIURL }},
	{Env: "ASSENT_LONG_POLLS_PER_KEY", Flag: "long-polls-per-key", Default: strconv.Itoa(DefaultLongPollsPerKey), UsedBy: []string{"dev", "serve"},
		Doc:   "long-polls (`GET …?wait=`) one API key or token may hold open at once; one more is answered 429 `rate_limited`",
		field: func(c *Config) any { return &c.LongPollsPerKey }},
	{Env: "ASSENT_LONG_POLLS", Flag: "long-polls", Default: strconv.Itoa(DefaultLongPolls), UsedBy: []string{"dev", "serve"},
		Doc:   "long-polls this process holds open at once, all keys together; more are answered 429",
		field: func(c *Config) any { return &c.LongPolls }},
	{Env: "ASSENT_TEMPORAL_TLS_CA", Flag: "temporal-tls-ca", Shown: "unset (plain gRPC, or TLS with the system's CAs under an API key)", UsedBy: []string{"serve", "worker", "admin"},
		Doc:   "PEM file of the CA that signed the Temporal frontend's certificate; setting any TLS option, or `ASSENT_TEMPORAL_API_KEY`, turns TLS on",
		field: func(c *Config) any { return &c.TemporalTLSCA }},
	{Env: "ASSENT_TEMPORAL_TLS_CERT", Flag: "temporal-tls-cert", UsedBy: []string{"serve", "worker", "admin"},
		Doc:   "PEM client certificate for mTLS to Temporal",
		field: func(c *Config) any { return &c.TemporalTLSCert }},
	{Env: "ASSENT_TEMPORAL_TLS_KEY", Flag: "temporal-tls-key", UsedBy: []string{"serve", "worker", "admin"},
		Doc:   "PEM private key of the client certificate",
		field: func(c *Config) any { return &c.TemporalTLSKey }},
	{Env: "ASSENT_TEMPORAL_TLS_SERVER_NAME", Flag: "temporal-tls-server-name", Shown: "the address's host", UsedBy: []string{"serve", "worker", "admin"},
		Doc:   "name on the Temporal frontend's certificate, when not its address's host",
		field: func(c *Config) any { return &c.TemporalTLSServerName }},
	{Env: "ASSENT_TEMPORAL_API_KEY", UsedBy: []string{"serve", "worker", "admin"},
		Doc: "a Temporal Cloud API key, sent as `authorization: Bearer <key>` on every call, always over TLS " +
			"(environment only, so it stays out of the process list; `docs/operations.md`)",
		field: func(c *Config) any { return &c.TemporalAPIKey }},
	// OpenTelemetry's own variables, read by internal/tracing and the
	// exporter (docs/tracing.md); listed so the table is the whole story.
	{Env: "OTEL_EXPORTER_OTLP_ENDPOINT", Shown: "unset (no traces)", UsedBy: []string{"dev", "serve", "worker"},
		Doc: "an OTLP collector, such as `http://otel-collector:4318` (`:4317` with `grpc`), turns tracing on: one trace per request " +
			"from the API through the workflows to the webhook receiver, which is sent a `traceparent`; `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` " +
			"and `OTEL_EXPORTER_OTLP_HEADERS` are read too"},
	{Env: "OTEL_TRACES_EXPORTER", Shown: "unset", UsedBy: []string{"dev", "serve", "worker"},
		Doc: "`otlp` turns tracing on at the default endpoint (`localhost:4318`) without `OTEL_EXPORTER_OTLP_ENDPOINT`; `none` turns it off"},
	{Env: "OTEL_EXPORTER_OTLP_PROTOCOL", Shown: "`http/protobuf`", UsedBy: []string{"dev", "serve", "worker"},
		Doc: "`http/protobuf` or `grpc`"},
	{Env: "OTEL_SERVICE_NAME", Shown: "`assent-<command>`", UsedBy: []string{"dev", "serve", "worker"},
		Doc: "the service name spans carry: `assent-serve`, `assent-worker` or `assent-dev` unless set"},
	{Env: "ASSENT_DEV_RETRY_UNIT", Shown: "`1m`", UsedBy: []string{"dev"}, UsedByNote: "dev only; serve and worker refuse it",
		Doc:   "scales the delivery retries (`1s` gives waits of 1, 4, 16, 64 s)",
		field: func(c *Config) any { return &c.devRetryRaw }},
	{Env: "ASSENT_DEV_ALLOW_LOOPBACK", UsedBy: []string{"dev"}, UsedByNote: "dev only; serve and worker refuse it",
		Doc:   "`1` admits webhook and callback receivers on this machine (`http://127.0.0.1:<any port>`)",
		field: func(c *Config) any { return &c.devLoopbackRaw }},
	{Env: "ASSENT_API_KEY", UsedBy: []string{"mcp"},
		Doc: "the agent key `assent mcp` calls the API with"},
}

// Register declares the flags, with defaults taken from the environment,
// and reads the settings that have no flag.
func (c *Config) Register(fs *flag.FlagSet) {
	for _, s := range Settings {
		if s.field == nil {
			continue
		}
		switch p := s.field(c).(type) {
		case *string:
			if s.Flag == "" {
				*p = os.Getenv(s.Env)
			} else {
				fs.StringVar(p, s.Flag, env(s.Env, s.Default), s.help())
			}
		case *int:
			def, err := strconv.Atoi(s.Default)
			if err != nil {
				panic(fmt.Sprintf("config: %s's default %q is not a number", s.Env, s.Default))
			}
			fs.IntVar(p, s.Flag, envInt(s.Env, def), s.help())
		}
	}
	c.DevRetryUnit, c.devRetryErr = 0, nil
	if c.devRetryRaw != "" {
		c.DevRetryUnit, c.devRetryErr = time.ParseDuration(c.devRetryRaw)
	}
	c.DevAllowLoopback = c.devLoopbackRaw == "1"
}

// help is the flag's help: Doc as plain text (flag.UnquoteUsage would
// take a backquoted word for the argument's name), then the variable.
func (s Setting) help() string {
	return strings.ReplaceAll(s.Doc, "`", "") + " (" + s.Env + ")"
}

// SettingsTable is the README's table of settings, in Markdown.
func SettingsTable() string {
	var b strings.Builder
	b.WriteString("| Variable | Flag | Default | Used by | What it does |\n|---|---|---|---|---|\n")
	for _, s := range Settings {
		flagName := "—"
		if s.Flag != "" {
			flagName = "`--" + s.Flag + "`"
		}
		shown := s.Shown
		switch {
		case shown != "":
		case s.Default != "":
			shown = "`" + s.Default + "`"
		default:
			shown = "unset"
		}
		cells := []string{"`" + s.Env + "`", flagName, shown, s.usedBy(), s.Doc}
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "|", `\|`)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}
