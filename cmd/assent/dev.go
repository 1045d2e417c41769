package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/web"
	"github.com/assent-hq/assent/worker"
)

// runDev runs the whole service in one process for a newcomer's laptop.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, log, err := parse("dev", args, stderr)
	if err != nil {
		return err
	}
	stopTracing, err := startTracing(ctx, "dev", log)
	if err != nil {
		return err
	}
	defer stopTracing()
	keepTracingFromEmbeddedTemporal()
	// Every fixed port is checked before anything starts, and every one
	// taken is named.
	ports := append([]port{httpPort(cfg)}, temporalPorts(cfg)...)
	if cfg.MetricsAddr != "" {
		ports = append(ports, metricsPort(cfg))
	}
	if err := checkPorts(ports...); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}

	l, baseURL, err := listen(cfg)
	if err != nil {
		return err
	}
	defer l.Close()
	ml, err := listenMetrics(cfg)
	if err != nil {
		return err
	}
	if ml != nil {
		defer ml.Close()
	}

	// The embedded UI decodes payloads through this process, for the
	// demo owner unless other operators are named.
	opts := embeddedTemporal(cfg, log, true)
	opts.CodecEndpoint = baseURL + web.CodecPath
	temporal, err := startTemporal(ctx, opts)
	if err != nil {
		return err
	}
	defer temporal.Stop()
	cfg.TemporalAddress = temporal.FrontendAddress()
	if temporal.UIAddress() != "" && cfg.TemporalUIURL == "" {
		cfg.TemporalUIURL = "http://" + temporal.UIAddress()
	}
	if len(cfg.Operators) == 0 {
		cfg.Operators = []string{demoMembers[0].Email}
	}

	m := metrics.New()
	defer m.Close()
	r, err := open(ctx, cfg, log, needs{keys: config.KeyOrNewInDataDir, migrate: true, temporal: true, searchAttributes: true, publishing: true,
		metrics: m})
	if err != nil {
		return err
	}
	defer r.Close()
	readDatabase(m, r.store)
	mailbox := mail.NewMailbox(mail.DefaultMailboxSize)
	r.mailer = mailbox

	policy, err := cfg.NetPolicy()
	if err != nil {
		return err
	}
	svc := r.services(log, baseURL, policy, cfg.SlackAPIURL)
	boot, created, err := ensureBootstrap(ctx, r.store, svc.Admin, cfg.DataDir, baseURL)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	handler, pages, err := r.handler(cfg, log, baseURL, svc, mountMailbox(mailbox), &web.DevSettings{Mailbox: devMailPath, People: demoEmails()})
	if err != nil {
		return err
	}

	w := worker.New(r.temporal, worker.Deps{Kinds: app.Workers(), Store: r.store, BaseURL: baseURL, Logger: log, NetPolicy: policy, Mailer: mailbox,
		PushSubject: pushSubject(cfg, baseURL), SlackAPIURL: cfg.SlackAPIURL})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	defer w.Stop()
	// Runs first: the worker's stop cuts its long polls off.
	defer temporal.Stopping()

	printBanner(stdout, cfg, baseURL, temporal.UIAddress(), boot, created)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := serveHTTP(gctx, l, handler, log, r.store.Changes().Drain)
		pages.Wait()
		return err
	})
	serveMetrics(gctx, g, ml, m, cfg.MetricsToken, log)
	runBackground(gctx, g, log, r.store, svc.Reports)
	g.Go(func() error { mendEarlierVersions(gctx, log, svc.Reports); return nil })
	g.Go(func() error { requests.RunReconciler(gctx, log, svc.Owned()...); return nil })
	dispatcher := &worker.Dispatcher{Client: r.temporal, Store: r.store, Log: log, RetryUnit: cfg.DevRetryUnit, Interval: dispatchInterval}
	g.Go(func() error { dispatcher.Run(gctx); return nil })
	return g.Wait()
}

// devMailPath is where the dev mailbox shows the email dev sends.
const devMailPath = "/dev/mail"

// mountMailbox adds the dev mailbox's routes.
func mountMailbox(mailbox *mail.Mailbox) func(*gin.Engine) {
	return func(e *gin.Engine) {
		h := gin.WrapH(mailbox.Handler())
		e.GET(devMailPath, h)
		e.GET(devMailPath+".json", h)
		e.GET(devMailPath+"/:id", h)
	}
}

// demoEmails are the demo people's addresses, for the sign-in page.
func demoEmails() []string {
	emails := make([]string, len(demoMembers))
	for i, m := range demoMembers {
		emails[i] = m.Email
	}
	return emails
}

func printBanner(w io.Writer, cfg *config.Config, baseURL, uiAddr string, b *bootstrap, created bool) {
	state := "Restarted with the existing data"
	if created {
		state = "Created the demo organisation"
	}
	ui := "disabled"
	if uiAddr != "" {
		ui = "http://" + uiAddr
	}
	loopback := "off: receivers on this machine are refused; ASSENT_DEV_ALLOW_LOOPBACK=1 admits them"
	if cfg.DevAllowLoopback {
		loopback = "on: webhooks and callbacks may go to this machine (ASSENT_DEV_ALLOW_LOOPBACK=1)"
	}
	retries := "off: a failed delivery waits 1, 4, 16, 64 minutes, as in production; ASSENT_DEV_RETRY_UNIT=1s makes those seconds"
	if cfg.DevRetryUnit > 0 {
		retries = fmt.Sprintf("on: a failed delivery waits 1, 4, 16, 64 times %s (ASSENT_DEV_RETRY_UNIT=%s)", cfg.DevRetryUnit, cfg.DevRetryUnit)
	}
	fmt.Fprintf(w, `
Assent is running (dev). %s in %s.

  API and pages       %s
  API reference       %s/api/docs
  Sign in             %s/signin
  Temporal UI         %s
  Dev mailbox         %s%s
  Agent key           %s
  Admin key           %s
  Loopback receivers  %s
  Short retries       %s

  Try it:   curl -H "Authorization: Bearer %s" %s/api/v1/me

  Sign in as one of the demo people (owner@example.com, admin@example.com, mia@example.com, …);
  the sign-in link lands in the dev mailbox. Their member tokens are in %s.

`, state, cfg.DataDir, baseURL, baseURL, baseURL, ui, baseURL, devMailPath, b.AgentKey, b.AdminKey, loopback, retries, b.AgentKey, baseURL,
		filepath.Join(cfg.DataDir, bootstrapFile))
}
