package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	netmail "net/mail"
	"strings"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/logging"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/payloadcodec"
	"github.com/assent-hq/assent/internal/publishscan"
	"github.com/assent-hq/assent/internal/ratelimit"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/tracing/otelsetup"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/reportsite"
	"github.com/assent-hq/assent/web"
	"github.com/assent-hq/assent/worker"
)

// parse reads a subcommand's flags on top of the environment: the
// configuration registers every setting (and reads the environment), the
// command offers as flags only those it reads (config.Flags, from each setting's UsedBy); -h lists
// them and returns flag.ErrHelp.
func parse(name string, args []string, stderr io.Writer) (*config.Config, *slog.Logger, error) {
	var cfg config.Config
	all := flag.NewFlagSet("", flag.ContinueOnError)
	cfg.Register(all)
	if name == "temporal" {
		cfg.UseTemporalDataDir(all)
	}
	fs := flag.NewFlagSet("assent "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	offer(fs, all, config.Flags(name))
	fs.Usage = func() { printSettings(stderr, name, fs) }
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("assent %s takes only flags; got %q", name, fs.Arg(0))
	}
	// Only the production processes refuse them; dev and tools may see them.
	if err := cfg.CheckDevSettings(name != "serve" && name != "worker"); err != nil {
		return nil, nil, err
	}
	if err := cfg.CheckOIDC(); err != nil {
		return nil, nil, err
	}
	if err := cfg.CheckTrustedProxies(); err != nil {
		return nil, nil, err
	}
	if err := cfg.CheckOperators(); err != nil {
		return nil, nil, err
	}
	if err := cfg.CheckSlackAPIURL(); err != nil {
		return nil, nil, err
	}
	if err := cfg.CheckTemporalUIWriteActions(); err != nil {
		return nil, nil, err
	}
	if err := cfg.CheckLongPolls(); err != nil {
		return nil, nil, err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, nil, fmt.Errorf("log level: %w", err)
	}
	return &cfg, logging.New(stderr, level), nil
}

// resources are what a subcommand works with: the database and its store
// and, when asked for, the Temporal client and the mailer.
type resources struct {
	db       *gorm.DB
	secrets  *secretkey.Ring
	store    *models.Store
	temporal client.Client
	mailer   mail.Sender
	// blobs and scanner publish reports (serve, dev).
	blobs   *blobstore.Store
	scanner *publishscan.Scanner
	// metrics is the process's registry (serve, worker, dev), nil for the
	// tools.
	metrics *metrics.Metrics
}

// needs says what a subcommand opens.
type needs struct {
	// keys says where the secret key may come from.
	keys config.KeySource
	// migrate applies pending migrations (dev, migrate); otherwise the
	// database must already be up to date.
	migrate bool
	// temporal dials Temporal; searchAttributes also registers the search
	// attributes the workflows upsert (dev, worker).
	temporal, searchAttributes bool
	// mailer sends email over SMTP as configured (serve, worker).
	mailer bool
	// publishing opens the blob store and builds the publish scan (serve,
	// dev).
	publishing bool
	// metrics, when set, counts what the store commits and what the
	// Temporal client and its workers do (serve, worker, dev).
	metrics *metrics.Metrics
}

// open opens what n asks for, the same way for every subcommand. On error
// it closes what it had opened.
func open(ctx context.Context, cfg *config.Config, log *slog.Logger, n needs) (_ *resources, err error) {
	r := &resources{metrics: n.metrics}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if r.db, err = models.Open(cfg.Database()); err != nil {
		return nil, err
	}
	log.Info("database opened", "driver", r.db.Dialector.Name())
	if r.secrets, err = cfg.SecretKeys(n.keys); err != nil {
		return nil, err
	}
	if n.migrate {
		err = models.Migrate(r.db)
	} else {
		err = models.RequireMigrated(r.db)
	}
	if err != nil {
		return nil, err
	}
	r.store = models.NewStore(r.db, r.secrets)
	r.store.SetMetrics(n.metrics)
	if n.migrate {
		// Values kept in clear by earlier versions are sealed now.
		if resealed, err := r.store.ResealSecrets(ctx); err != nil {
			return nil, fmt.Errorf("seal secrets: %w", err)
		} else if resealed > 0 {
			log.Info("sealed secrets under the current key", "count", resealed)
		}
		// The keys evidence exports and decision tokens are signed with
		// exist from the first start, so their public halves can be
		// published before anything is signed.
		for _, f := range []models.KeyFamily{models.EvidenceFamily, models.DecisionFamily} {
			if _, _, err := r.store.ActiveSigningKey(ctx, f); err != nil {
				return nil, err
			}
		}
		// So is the VAPID key browsers subscribe to pushes with.
		if _, _, err := r.store.VAPIDKey(ctx); err != nil {
			return nil, err
		}
	}
	if n.temporal {
		err = whileTemporalStarts(ctx, log, func(ctx context.Context) error {
			if r.temporal == nil {
				c, err := dialTemporal(ctx, cfg, log, r.secrets, n.metrics)
				if err != nil {
					return err
				}
				r.temporal = c
			}
			// Another instance's workflows on the same namespace and task
			// queue would be taken by this one's worker and its by them:
			// refuse a namespace marked for a key this ring lacks.
			if err := payloadcodec.ClaimMarker(ctx, r.temporal, cfg.TemporalNamespace, r.secrets); err != nil {
				return err
			}
			if n.searchAttributes {
				return worker.RegisterSearchAttributes(ctx, r.temporal, cfg.TemporalNamespace)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		log.Info("Temporal namespace marked for this instance's key", "namespace", cfg.TemporalNamespace,
			"key", r.secrets.CurrentID(), "marker", payloadcodec.MarkerWorkflowID)
	}
	if n.mailer {
		if r.mailer, err = newMailer(cfg, log); err != nil {
			return nil, err
		}
	}
	if n.publishing {
		if r.blobs, err = blobstore.Open(ctx, cfg.BlobURL, cfg.BlobDir()); err != nil {
			return nil, err
		}
		if r.scanner, err = publishscan.New(); err != nil {
			return nil, fmt.Errorf("publish scan: %w", err)
		}
	}
	return r, nil
}

// Close releases what open opened.
func (r *resources) Close() {
	if r.blobs != nil {
		r.blobs.Close()
	}
	if r.temporal != nil {
		r.temporal.Close()
	}
	if r.db != nil {
		models.Close(r.db)
	}
}

// services builds the domain services once for the process (app.Build),
// shared by the API, the pages and the reconciler; policy says where
// requests to addresses people give may go (nil is netguard.Public),
// slackAPI where Slack's Web API is ("" is Slack's own).
func (r *resources) services(log *slog.Logger, baseURL string, policy *netguard.Policy, slackAPI string) *app.Services {
	return app.Build(app.Deps{Store: r.store, Temporal: r.temporal, Blobs: r.blobs, Scanner: r.scanner, Logger: log,
		BaseURL: baseURL, NetPolicy: policy, SlackAPIURL: slackAPI})
}

// handler is the API and the pages over svc. mount adds the dev-only
// routes and dev what the pages show of them (both nil outside dev).
func (r *resources) handler(cfg *config.Config, log *slog.Logger, baseURL string, svc *app.Services, mount func(*gin.Engine), dev *web.DevSettings) (http.Handler, *web.Pages, error) {
	var site *reportsite.Site
	var hosts web.ReportHosts // nil, not a nil *reportsite.Site, without a domain
	if domain := cfg.ReportsDomainFor(baseURL); domain != "" {
		var err error
		if site, err = reportsite.New(reportsite.Deps{Reports: svc.Reports, Blobs: r.blobs, AppURL: baseURL, Domain: domain,
			Logger: log, Metrics: r.metrics}); err != nil {
			return nil, nil, err
		}
		hosts = site
	} else {
		log.Warn("ASSENT_REPORTS_DOMAIN is not set: published reports cannot be read; set it to a domain whose subdomains reach this server, such as reports.example.com")
	}
	pages := web.New(web.Deps{Mailer: r.mailer, BaseURL: baseURL, Logger: log, OIDC: oidcSettings(cfg),
		Services: svc.Web(), Site: hosts, SigningKey: r.secrets.Derive("web-signing"),
		Codec: &web.CodecSettings{Decode: converter.NewPayloadCodecHTTPHandler(payloadcodec.AcceptingPlain(r.secrets)),
			UIOrigin: cfg.TemporalUIURL, Operators: cfg.Operators, Namespace: cfg.TemporalNamespace}, Dev: dev})
	h := api.New(api.Deps{Logger: log, BaseURL: baseURL, TrustedProxies: cfg.TrustedProxies,
		LongPolls: ratelimit.NewSlots(cfg.LongPollsPerKey, cfg.LongPolls), Services: svc.API(),
		Metrics: r.metrics, NoMetrics: !metricsOnAPI(cfg, dev != nil), MetricsToken: cfg.MetricsToken,
		Mount: func(e *gin.Engine) {
			if mount != nil {
				mount(e)
			}
			mountMCP(e, log, baseURL)
			pages.Mount(e)
		}})
	return site.Route(h), pages, nil
}

// dialTemporal connects with every payload encrypted under keys and bound
// to where it is used; workers made from the client check the binding.
// With an API key (Temporal Cloud) every call carries it as a bearer
// token; cfg.TemporalTLS has then turned TLS on. The SDK's client and
// worker metrics go into m (nil: none).
func dialTemporal(ctx context.Context, cfg *config.Config, log *slog.Logger, keys *secretkey.Ring, m *metrics.Metrics) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tlsConf, err := cfg.TemporalTLS()
	if err != nil {
		return nil, err
	}
	opts := client.Options{
		ConnectionOptions: client.ConnectionOptions{TLS: tlsConf},
		HostPort:          cfg.TemporalAddress,
		Namespace:         cfg.TemporalNamespace,
		Logger:            logging.SDK(log.With("component", "temporal-sdk")),
		MetricsHandler: m.Temporal(func(err error) {
			log.Debug("a Temporal SDK metric could not be registered", "error", err)
		}),
	}
	if cfg.TemporalAPIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(cfg.TemporalAPIKey)
	}
	c, err := client.DialContext(ctx, payloadcodec.ClientOptions(otelsetup.TemporalClient(opts), payloadcodec.New(keys)))
	if err != nil {
		return nil, explainDial(cfg, err)
	}
	if err := checkNamespace(ctx, cfg, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// newMailer is SMTP when ASSENT_SMTP_HOST is set. Without it the process
// still starts, so the API works, but cannot email: sign-in answers as
// usual and logs an error per email not sent.
func newMailer(cfg *config.Config, log *slog.Logger) (mail.Sender, error) {
	if cfg.SMTPHost == "" {
		log.Warn("ASSENT_SMTP_HOST is not set: no email can be sent, so nobody can sign in by email and approvers are not emailed")
		return nil, nil
	}
	return mail.NewSMTP(mail.SMTPSettings{Host: cfg.SMTPHost, Port: cfg.SMTPPort, Username: cfg.SMTPUsername,
		Password: cfg.SMTPPassword, From: cfg.SMTPFrom, TLS: cfg.SMTPTLS})
}

// pushSubject is the contact the Web Push services are given (VAPID's
// sub): the instance's https:// address, else the sender address of its
// emails, else a placeholder a push service may accept from a dev
// machine.
func pushSubject(cfg *config.Config, baseURL string) string {
	if strings.HasPrefix(baseURL, "https://") {
		return baseURL
	}
	if a, err := netmail.ParseAddress(cfg.SMTPFrom); err == nil {
		return a.Address
	}
	return "assent@localhost"
}

// oidcSettings is single sign-on for the pages, nil when not configured.
func oidcSettings(cfg *config.Config) *web.OIDCSettings {
	if !cfg.OIDCEnabled() {
		return nil
	}
	return &web.OIDCSettings{Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID,
		ClientSecret: cfg.OIDCClientSecret, Label: cfg.OIDCLabel}
}

// runBackground runs what every process that serves HTTP runs beside it:
// the hourly purges of what expires (uploads, idempotency keys, sign-ins,
// reader tickets, and events whose deliveries ended past their retention).
func runBackground(ctx context.Context, g *errgroup.Group, log *slog.Logger, store *models.Store, rep *reports.Service) {
	g.Go(func() error { purgeHourly(ctx, log, "uploads", rep.PurgeUploads); return nil })
	g.Go(func() error {
		purgeHourly(ctx, log, "idempotency keys", store.PurgeExpiredIdempotencyKeys)
		return nil
	})
	g.Go(func() error { purgeHourly(ctx, log, "sessions and links", store.PurgeSignIns); return nil })
	g.Go(func() error { purgeHourly(ctx, log, "reader tickets and sessions", store.PurgeReaders); return nil })
	g.Go(func() error {
		purgeHourly(ctx, log, "events whose deliveries ended", store.PurgeDeliveries)
		return nil
	})
}

// mendEarlierVersions mends what an earlier version left behind and only
// a running worker can: schedules saved before each form was held to once
// a minute, whose Temporal Schedules change too, which a migration cannot
// do. A rolling upgrade restarts workers after the migration, so the last
// one restarted mends what the old processes did.
func mendEarlierVersions(ctx context.Context, log *slog.Logger, rep *reports.Service) {
	if _, err := rep.MendSchedules(ctx); err != nil {
		log.Error("bring schedules to their minimum of once a minute", "error", err)
	}
}

// listen opens the HTTP listener and derives the base URL from the bound
// address when none is configured, so port 0 works.
func listen(cfg *config.Config) (net.Listener, string, error) {
	l, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		p := httpPort(cfg)
		return nil, "", cannotListen(p.addr, p.setting, err)
	}
	base := cfg.PublicBaseURL()
	if base == "" {
		base = "http://" + l.Addr().String()
	}
	return l, base, nil
}

// port is an address a command binds and the setting that moves it.
type port struct{ addr, setting string }

// httpPort is the API's and pages' address.
func httpPort(cfg *config.Config) port { return port{cfg.HTTPAddr, "ASSENT_HTTP_ADDR or --http-addr"} }

// checkPorts binds each address for a moment, before anything starts, and
// reports every one that cannot be bound in one error, a line each with
// its setting: a person moves them all at once, not one per attempt. An
// address on port 0 is picked free later, so skipped.
func checkPorts(ports ...port) error {
	var errs []error
	for _, p := range ports {
		if _, n, err := net.SplitHostPort(p.addr); err == nil && n == "0" {
			continue
		}
		l, err := net.Listen("tcp", p.addr)
		if err != nil {
			errs = append(errs, cannotListen(p.addr, p.setting, err))
			continue
		}
		_ = l.Close()
	}
	return errors.Join(errs...)
}

// cannotListen is the one line a person reads when a port cannot be
// bound: the address, why, and the setting that moves it.
func cannotListen(addr, setting string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is in use by another program (is assent already running?); choose another port with %s", addr, setting)
	}
	return fmt.Errorf("cannot listen on %s (%v); choose another address with %s", addr, err, setting)
}

// A stopping serve first fails readiness and keeps serving for stopDelay,
// so that load balancers, which check readiness every few seconds, stop
// sending it requests before it closes its listener and kept-alive
// connections (a request sent on one as it closes would fail); then it
// lets the requests it is answering finish for up to shutdownGrace before
// it closes the database and Temporal under them: long enough for a
// decision whose workflow task waits for a worker that was just replaced
// (its sticky queue times out after 5 s, more than once in a hand-over).
// Both together stay within the 30 s an orchestrator gives by default.
const (
	stopDelay     = 5 * time.Second
	shutdownGrace = 20 * time.Second
)

// lameDuck is a context that ends stopDelay after ctx does, having called
// stopping when ctx ended.
func lameDuck(ctx context.Context, stopping func()) context.Context {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	context.AfterFunc(ctx, func() {
		stopping()
		time.AfterFunc(stopDelay, cancel)
	})
	return out
}

// serveHTTP serves h on l until ctx ends, then stops taking requests,
// calls onShutdown (which ends long-polls) and lets those in flight
// finish for up to shutdownGrace.
func serveHTTP(ctx context.Context, l net.Listener, h http.Handler, log *slog.Logger, onShutdown ...func()) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	for _, f := range onShutdown {
		srv.RegisterOnShutdown(f)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down http server")
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// purgeHourly runs purge at start and then hourly while ctx lives,
// logging what it removed; what names the rows for the log.
func purgeHourly(ctx context.Context, log *slog.Logger, what string, purge func(context.Context) (int64, error)) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := purge(ctx); err != nil && ctx.Err() == nil {
			log.Warn("purge "+what, "error", err)
		} else if n > 0 {
			log.Info("purged "+what, "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
