package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/server/temporaltest"

	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/secretkey"
)

// A frontend whose certificate the configured CA did not sign, and one
// that speaks TLS to a client that does not: each start fails saying
// which setting to change.
func TestDialTemporalExplainsTLSFailures(t *testing.T) {
	t.Parallel()
	// HTTP/2 offered, as gRPC asks for it before any certificate is seen.
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	wrongCA := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(wrongCA, selfSignedCA(t), 0o644))
	keys, err := secretkey.Parse(secretkey.Generate())
	require.NoError(t, err)
	addr := srv.Listener.Addr().String()

	cfg := &config.Config{TemporalAddress: addr, TemporalNamespace: "default", TemporalTLSCA: wrongCA}
	dials := 0
	err = whileTemporalStarts(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), func(ctx context.Context) error {
		dials++
		_, err := dialTemporal(ctx, cfg, slog.Default(), keys, nil)
		return err
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "presented a certificate not signed by the CA in ASSENT_TEMPORAL_TLS_CA ("+wrongCA+")")
	assert.Equal(t, 1, dials, "a start fails at once on a setting to change, not after waiting for Temporal: %v", err)

	cfg = &config.Config{TemporalAddress: addr, TemporalNamespace: "default"}
	_, err = dialTemporal(context.Background(), cfg, slog.Default(), keys, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "may require TLS")
}

// A namespace the server does not have stops the start, named.
func TestDialTemporalRefusesAnUnknownNamespace(t *testing.T) {
	t.Parallel()
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	keys, err := secretkey.Parse(secretkey.Generate())
	require.NoError(t, err)
	cfg := &config.Config{TemporalAddress: ts.GetFrontendHostPort(), TemporalNamespace: "no-such-namespace"}
	_, err = dialTemporal(context.Background(), cfg, slog.Default(), keys, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `namespace "no-such-namespace" does not exist`)
}

// selfSignedCA is the PEM of a CA that signed nothing the test serves.
func selfSignedCA(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestStartWaitsForTemporal: a starting process waits, retrying, while
// Temporal does not answer yet, and fails at once on what waiting cannot
// cure.
func TestStartWaitsForTemporal(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	calls := 0
	err := whileTemporalStarts(context.Background(), log, func(context.Context) error {
		calls++
		switch calls {
		case 1:
			return fmt.Errorf("connect to Temporal at 127.0.0.1:1: %w", errors.New(`failed reaching server: connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`))
		case 2:
			return fmt.Errorf("read the namespace's Assent marker: %w", serviceerror.NewUnavailable("frontend restarting"))
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 3, calls, "refused and unavailable are waited for")

	calls = 0
	err = whileTemporalStarts(context.Background(), log, func(context.Context) error {
		calls++
		// The SDK's dial gives up on its deadline, naming the handshake's
		// failure in its text.
		return explainDial(&config.Config{TemporalAddress: "x"}, errors.New(`context deadline exceeded: last connection error: `+
			`connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`))
	})
	require.Error(t, err)
	assert.Equal(t, 1, calls, "a setting to change fails at once")
}
