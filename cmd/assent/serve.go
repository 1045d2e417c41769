package main

import (
	"context"
	"io"
	"log/slog"

	"golang.org/x/sync/errgroup"

	"github.com/assent-hq/assent/actions"
	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/web"
)

// runServe runs the API and pages only. It keeps no state of its own, so
// several can run behind a load balancer.
func runServe(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, log, err := parse("serve", args, stderr)
	if err != nil {
		return err
	}
	db, err := openDB(cfg, log)
	if err != nil {
		return err
	}
	defer models.Close(db)
	if err := models.RequireMigrated(db); err != nil {
		return err
	}
	store := models.NewStore(db)
	tc, err := dialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	mailer, err := newMailer(cfg, log)
	if err != nil {
		return err
	}
	l, baseURL, err := listen(cfg)
	if err != nil {
		return err
	}
	log.Info("serving", "address", l.Addr().String(), "baseUrl", baseURL)
	pages := web.New(web.Deps{Store: store, Mailer: mailer, BaseURL: baseURL, Logger: log,
		OIDC: oidcSettings(cfg), Actions: &actions.Service{Store: store, Temporal: tc}})
	handler := api.New(api.Deps{Store: store, Temporal: tc, Logger: log, BaseURL: baseURL, TrustedProxies: cfg.TrustedProxies, Mount: pages.Mount})
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
	return g.Wait()
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

// oidcSettings is single sign-on for the pages, nil when not configured.
func oidcSettings(cfg *config.Config) *web.OIDCSettings {
	if !cfg.OIDCEnabled() {
		return nil
	}
	return &web.OIDCSettings{Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID,
		ClientSecret: cfg.OIDCClientSecret, Label: cfg.OIDCLabel}
}
