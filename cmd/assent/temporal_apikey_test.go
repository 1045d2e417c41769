package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/secretkey"
)

// With ASSENT_TEMPORAL_API_KEY, serve, worker and admin send the key as a
// bearer token on every call, and only over TLS: the frontend here sits
// behind a TLS front end, as Temporal Cloud's does, and records what
// reaches it.
func TestDialTemporalSendsTheAPIKeyOverTLS(t *testing.T) {
	t.Parallel()
	const key = "tcld-test-key"
	var mu sync.Mutex
	type call struct{ method, auth string }
	var seen []call // each call in the test's namespace, with its authorization header
	var ns string
	var through func(peerAddr string) bool
	record := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		// The test server's own client and worker call the namespace too,
		// without the key: only the calls through the TLS front end are a
		// dial's.
		mu.Lock()
		via := through
		mu.Unlock()
		if p, ok := peer.FromContext(ctx); !ok || via == nil || !via(p.Addr.String()) {
			return next(ctx, req)
		}
		if r, ok := req.(interface{ GetNamespace() string }); ok && r.GetNamespace() == ns {
			md, _ := metadata.FromIncomingContext(ctx)
			mu.Lock()
			seen = append(seen, call{info.FullMethod, strings.Join(md.Get("authorization"), ", ")})
			mu.Unlock()
		}
		return next(ctx, req)
	}
	ts := temporaltest.NewServer(temporaltest.WithT(t),
		temporaltest.WithBaseServerOptions(temporal.WithChainedFrontendGrpcInterceptors(record)))
	ns = ts.GetDefaultNamespace()
	front, ca, via := tlsFront(t, ts.GetFrontendHostPort())
	mu.Lock()
	through = via
	mu.Unlock()
	keys, err := secretkey.Parse(secretkey.Generate())
	require.NoError(t, err)

	cfg := &config.Config{TemporalAddress: front, TemporalNamespace: ns, TemporalTLSCA: ca, TemporalAPIKey: key}
	c, err := dialTemporal(context.Background(), cfg, slog.Default(), keys, nil)
	require.NoError(t, err)
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen, "dialling checks the namespace")
	for _, c := range seen {
		assert.Equal(t, "Bearer "+key, c.auth, c.method)
	}

	// No TLS setting: still TLS, trusting this machine's CAs, which did
	// not sign the front end's certificate.
	cfg = &config.Config{TemporalAddress: front, TemporalNamespace: ns, TemporalAPIKey: key}
	_, err = dialTemporal(context.Background(), cfg, slog.Default(), keys, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "presented a certificate not signed by a CA this machine trusts")

	// A frontend without TLS never gets the key.
	cfg = &config.Config{TemporalAddress: ts.GetFrontendHostPort(), TemporalNamespace: ns, TemporalAPIKey: key}
	_, err = dialTemporal(context.Background(), cfg, slog.Default(), keys, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not speak TLS, which ASSENT_TEMPORAL_API_KEY needs")
	assert.NotContains(t, err.Error(), key)
}

// tlsFront terminates TLS in front of backend, as a load balancer before
// a Temporal frontend would, offering HTTP/2 as gRPC requires. caFile is
// the PEM of its self-signed certificate for 127.0.0.1.
func tlsFront(t *testing.T, backend string) (addr, caFile string, through func(peerAddr string) bool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "temporal frontend"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))

	var relayed sync.Map // the local addresses of its connections to backend
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"h2"}})
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", backend)
				if err != nil {
					return
				}
				defer out.Close()
				relayed.Store(out.LocalAddr().String(), true)
				go func() { io.Copy(out, in); out.Close() }()
				io.Copy(in, out)
			}()
		}
	}()
	return ln.Addr().String(), caFile, func(peerAddr string) bool { _, ok := relayed.Load(peerAddr); return ok }
}
