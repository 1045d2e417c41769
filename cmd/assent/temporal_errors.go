package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/config"
)

// explainDial turns a failure to reach Temporal into what to change,
// marked as a wrong setting when it names one. gRPC flattens TLS failures
// into text, so the handshake's own words are what there is to go on.
func explainDial(cfg *config.Config, err error) error {
	msg := err.Error()
	at := "Temporal at " + cfg.TemporalAddress
	ca := "a CA this machine trusts"
	if cfg.TemporalTLSCA != "" {
		ca = "the CA in ASSENT_TEMPORAL_TLS_CA (" + cfg.TemporalTLSCA + ")"
	}
	switch {
	case strings.Contains(msg, "certificate signed by unknown authority"):
		return wrongSetting{fmt.Errorf("%s presented a certificate not signed by %s: %w", at, ca, err)}
	case strings.Contains(msg, "certificate has expired or is not yet valid"):
		return wrongSetting{fmt.Errorf("%s: a certificate in the TLS handshake has expired or is not yet valid (the server's, or this process's in ASSENT_TEMPORAL_TLS_CERT): %w", at, err)}
	case strings.Contains(msg, "certificate is valid for"), strings.Contains(msg, "certificate is not valid for"):
		return wrongSetting{fmt.Errorf("%s presented a certificate for another name: set ASSENT_TEMPORAL_TLS_SERVER_NAME to the name it carries: %w", at, err)}
	case strings.Contains(msg, "bad certificate"), strings.Contains(msg, "certificate required"), strings.Contains(msg, "unknown certificate authority"):
		return wrongSetting{fmt.Errorf("%s refused this process's client certificate: it needs ASSENT_TEMPORAL_TLS_CERT and ASSENT_TEMPORAL_TLS_KEY signed by a CA it trusts: %w", at, err)}
	case strings.Contains(msg, "first record does not look like a TLS handshake") && cfg.TemporalAPIKey != "":
		return wrongSetting{fmt.Errorf("%s does not speak TLS, which ASSENT_TEMPORAL_API_KEY needs (the key is never sent in clear): point ASSENT_TEMPORAL_ADDRESS at a TLS endpoint, such as Temporal Cloud's <region>.<cloud>.api.temporal.io:7233: %w", at, err)}
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return wrongSetting{fmt.Errorf("%s does not speak TLS: unset the ASSENT_TEMPORAL_TLS_* settings, or point ASSENT_TEMPORAL_ADDRESS at its TLS port: %w", at, err)}
	case strings.Contains(msg, "error reading server preface"), strings.Contains(msg, "http2: frame too large"):
		// Also what a server going down may answer: not surely a setting.
		return fmt.Errorf("%s may require TLS (set ASSENT_TEMPORAL_TLS_CA, and the certificate and key for mutual TLS): %w", at, err)
	}
	return fmt.Errorf("connect to %s: %w", at, err)
}

// wrongSetting is a failure to reach Temporal that a setting causes:
// waiting for Temporal to start cannot cure it.
type wrongSetting struct{ error }

func (w wrongSetting) Unwrap() error { return w.error }

// checkNamespace fails when the namespace does not exist, rather than
// leaving every workflow start to fail later.
func checkNamespace(ctx context.Context, cfg *config.Config, c client.Client) error {
	_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: cfg.TemporalNamespace})
	if _, missing := errors.AsType[*serviceerror.NamespaceNotFound](err); missing {
		return fmt.Errorf("namespace %q does not exist at Temporal at %s: create it (temporal operator namespace create --namespace %s) or set ASSENT_TEMPORAL_NAMESPACE to one that does",
			cfg.TemporalNamespace, cfg.TemporalAddress, cfg.TemporalNamespace)
	}
	if err != nil {
		return explainDial(cfg, err)
	}
	return nil
}

// temporalStartWait is how long a starting process waits for a Temporal
// that does not answer yet (restarting, or started after this process),
// so that start order does not matter; a wrong setting fails at once.
const temporalStartWait = time.Minute

// whileTemporalStarts runs step until it succeeds, fails for a reason
// waiting cannot cure, or temporalStartWait has passed, saying in the log
// what it waits for.
func whileTemporalStarts(ctx context.Context, log *slog.Logger, step func(context.Context) error) error {
	deadline := time.Now().Add(temporalStartWait)
	for wait := 500 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		err := step(ctx)
		if err == nil || !temporalStarting(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		log.Warn("Temporal does not answer yet; trying again", "in", wait.String(), "error", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// temporalStarting reports whether err is Temporal not answering yet
// (refused, unavailable, out of time), rather than a setting to change.
func temporalStarting(err error) bool {
	if _, wrong := errors.AsType[wrongSetting](err); wrong {
		return false
	}
	if apperr.Transient(err) != nil || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// The SDK's dial flattens the gRPC error into text.
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "context deadline exceeded")
}
