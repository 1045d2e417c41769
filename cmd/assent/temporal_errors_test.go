package main

import (
	"context"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/server/temporaltest"

	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/secretkey"
)

// A frontend whose certificate the configured CA did not sign, and one
// that speaks TLS to a client that does not: each start fails saying
// which setting to change.
func TestDialTemporalExplainsTLSFailures(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	other := httptest.NewTLSServer(http.NotFoundHandler()) // its CA is not srv's
	defer other.Close()
	wrongCA := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(wrongCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: other.Certificate().Raw}), 0o644))
	keys, err := secretkey.Parse(secretkey.Generate())
	require.NoError(t, err)
	addr := srv.Listener.Addr().String()

	cfg := &config.Config{TemporalAddress: addr, TemporalNamespace: "default", TemporalTLSCA: wrongCA}
	_, err = dialTemporal(context.Background(), cfg, slog.Default(), keys)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "presented a certificate not signed by the CA in ASSENT_TEMPORAL_TLS_CA ("+wrongCA+")")

	cfg = &config.Config{TemporalAddress: addr, TemporalNamespace: "default"}
	_, err = dialTemporal(context.Background(), cfg, slog.Default(), keys)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "may require TLS")
}

// A namespace the server does not have stops the start, named.
func TestDialTemporalRefusesAnUnknownNamespace(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	keys, err := secretkey.Parse(secretkey.Generate())
	require.NoError(t, err)
	cfg := &config.Config{TemporalAddress: ts.GetFrontendHostPort(), TemporalNamespace: "no-such-namespace"}
	_, err = dialTemporal(context.Background(), cfg, slog.Default(), keys)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `namespace "no-such-namespace" does not exist`)
}
