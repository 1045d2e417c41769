package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/assent-hq/assent/actions"
	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/internal/bootstrap"
	"github.com/assent-hq/assent/internal/devtemporal"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/web"
	"github.com/assent-hq/assent/worker"
)

// runDev runs the whole service in one process for a newcomer's laptop.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, log, err := parse("dev", args, stderr)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}

	temporal, err := devtemporal.Start(ctx, embeddedTemporal(cfg, log))
	if err != nil {
		return err
	}
	defer temporal.Stop()
	cfg.TemporalAddress = temporal.FrontendAddress()

	db, err := openDB(cfg, log)
	if err != nil {
		return err
	}
	defer models.Close(db)
	if err := models.Migrate(db); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	store := models.NewStore(db)

	tc, err := dialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	if err := worker.RegisterSearchAttributes(ctx, tc, cfg.TemporalNamespace); err != nil {
		return err
	}

	l, baseURL, err := listen(cfg)
	if err != nil {
		return err
	}
	boot, created, err := bootstrap.Ensure(ctx, store, cfg.DataDir, baseURL)
	if err != nil {
		l.Close()
		return fmt.Errorf("bootstrap: %w", err)
	}

	mailbox := mail.NewMailbox(mail.DefaultMailboxSize)
	policy := netguard.Public
	if cfg.DevAllowLoopback {
		policy = netguard.DevLoopback
	}
	pages := web.New(web.Deps{Store: store, Mailer: mailbox, BaseURL: baseURL, Logger: log, NetPolicy: policy,
		OIDC: oidcSettings(cfg), Actions: &actions.Service{Store: store, Temporal: tc}})
	handler := api.New(api.Deps{Store: store, Temporal: tc, Logger: log, BaseURL: baseURL, TrustedProxies: cfg.TrustedProxies, NetPolicy: policy,
		Mount: func(r *gin.Engine) {
			h := gin.WrapH(mailbox.Handler())
			r.GET("/dev/mail", h)
			r.GET("/dev/mail.json", h)
			r.GET("/dev/mail/:id", h)
			pages.Mount(r)
		}})

	w := worker.New(tc, worker.Deps{Store: store, BaseURL: baseURL, Logger: log, NetPolicy: policy, Mailer: mailbox})
	if err := w.Start(); err != nil {
		l.Close()
		return fmt.Errorf("start worker: %w", err)
	}
	defer w.Stop()

	printBanner(stdout, cfg.DataDir, baseURL, temporal.UIAddress(), boot, created)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := serveHTTP(gctx, l, handler, log)
		pages.Wait()
		return err
	})
	g.Go(func() error {
		purgeHourly(gctx, log, "idempotency keys", store.PurgeExpiredIdempotencyKeys)
		return nil
	})
	g.Go(func() error { purgeHourly(gctx, log, "sessions and links", store.PurgeSignIns); return nil })
	g.Go(func() error { worker.RunReconciler(gctx, tc, store, log, reconcileInterval); return nil })
	dispatcher := &worker.Dispatcher{Client: tc, Store: store, Log: log, RetryUnit: cfg.DevRetryUnit, Interval: dispatchInterval}
	g.Go(func() error { dispatcher.Run(gctx); return nil })
	return g.Wait()
}

func printBanner(w io.Writer, dataDir, baseURL, uiAddr string, b *bootstrap.Bootstrap, created bool) {
	state := "Restarted with the existing data"
	if created {
		state = "Created the demo organisation"
	}
	ui := "disabled"
	if uiAddr != "" {
		ui = "http://" + uiAddr
	}
	fmt.Fprintf(w, `
Assent is running (dev). %s in %s.

  API and pages   %s
  Sign in         %s/signin
  Temporal UI     %s
  Dev mailbox     %s/dev/mail
  Agent key       %s

  Try it:   curl -H "Authorization: Bearer %s" %s/api/v1/me

  Sign in as one of the demo people (owner@example.com, admin@example.com, mia@example.com, …);
  the sign-in link lands in the dev mailbox. Their member tokens are in %s.

`, state, dataDir, baseURL, baseURL, ui, baseURL, b.AgentKey, b.AgentKey, baseURL, filepath.Join(dataDir, bootstrap.FileName))
}
