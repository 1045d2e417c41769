package tls_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/freeport"
)

// tool finds a proxy's binary; without it the test skips, unless
// ASSENT_REQUIRE_PROXIES=1 (CI installs nginx-light and caddy).
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("ASSENT_REQUIRE_PROXIES") == "1" {
			t.Fatalf("%s is required (ASSENT_REQUIRE_PROXIES=1): apt-get install nginx-light caddy", name)
		}
		t.Skipf("no %s", name)
	}
	return path
}

// certificate writes a self-signed certificate for the examples' names
// and returns its paths and a client that trusts it.
func certificate(t *testing.T, dir string) (crt, key string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "assent.example.com"},
		DNSNames: []string{"assent.example.com", "*.reports.example.com"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(priv)
	require.NoError(t, err)
	crt, key = filepath.Join(dir, "c.crt"), filepath.Join(dir, "k.key")
	require.NoError(t, os.WriteFile(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return crt, key, pool
}

// withCertificates points an example's certificate paths at crt and key.
func withCertificates(t *testing.T, name, crt, key string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		for _, f := range strings.Fields(line) {
			f = strings.TrimSuffix(f, ";")
			switch {
			case strings.HasPrefix(f, "/etc/ssl/assent/") && strings.HasSuffix(f, ".crt"):
				line = strings.Replace(line, f, crt, 1)
			case strings.HasPrefix(f, "/etc/ssl/assent/") && strings.HasSuffix(f, ".key"):
				line = strings.Replace(line, f, key, 1)
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func TestCaddyfileValidates(t *testing.T) {
	caddy := tool(t, "caddy")
	dir := t.TempDir()
	crt, key, _ := certificate(t, dir)
	conf := filepath.Join(dir, "Caddyfile")
	require.NoError(t, os.WriteFile(conf, []byte(withCertificates(t, "Caddyfile", crt, key)), 0o600))
	cmd := exec.Command(caddy, "validate", "--config", conf, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Valid configuration")
}

// TestNginxInFront runs the nginx example for real, on free ports, in
// front of a stand-in for serve: HTTPS reaches it with the host, the
// client's address and the scheme, a streamed answer is not held back
// (long-polls, /mcp), and report hosts are proxied by their own names.
func TestNginxInFront(t *testing.T) {
	nginx := tool(t, "nginx")
	dir := t.TempDir()
	crt, key, pool := certificate(t, dir)

	type seen struct{ host, forwardedFor, proto string }
	got := make(chan seen, 8)
	serve := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Host, r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Forwarded-Proto")}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "first")
		w.(http.Flusher).Flush()
		time.Sleep(700 * time.Millisecond)
		fmt.Fprintln(w, "second")
	}))
	defer serve.Close()

	https, err := freeport.Pick("127.0.0.1")
	require.NoError(t, err)
	plain, err := freeport.Pick("127.0.0.1")
	require.NoError(t, err)
	site := strings.NewReplacer(
		"server 127.0.0.1:8080;", "server "+strings.TrimPrefix(serve.URL, "http://")+";",
		"listen 443 ssl http2;", fmt.Sprintf("listen 127.0.0.1:%d ssl http2;", https),
		"listen [::]:443 ssl http2;", "",
		"listen 80;", fmt.Sprintf("listen 127.0.0.1:%d;", plain),
		"listen [::]:80;", "",
	).Replace(withCertificates(t, "nginx.conf", crt, key))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "assent.conf"), []byte(site), 0o600))
	// One process, in the foreground, so that ending the test ends it.
	main := fmt.Sprintf("pid %[1]s/nginx.pid;\nerror_log %[1]s/error.log;\ndaemon off;\nmaster_process off;\nevents {}\nhttp {\n"+
		"  access_log off;\n  client_body_temp_path %[1]s;\n  proxy_temp_path %[1]s;\n  include %[1]s/assent.conf;\n}\n", dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.conf"), []byte(main), 0o600))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, nginx, "-c", filepath.Join(dir, "main.conf"), "-p", dir, "-e", filepath.Join(dir, "error.log"))
	require.NoError(t, cmd.Start())
	defer func() { cancel(); _ = cmd.Wait() }()
	logged := func() string { b, _ := os.ReadFile(filepath.Join(dir, "error.log")); return string(b) }
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", https))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "nginx did not listen")
	defer func() {
		if t.Failed() {
			t.Log(logged())
		}
	}()

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", https))
		}}}
	for _, host := range []string{"assent.example.com", "q3-7f3a.reports.example.com"} {
		start := time.Now()
		resp, err := client.Get("https://" + host + "/api/v1/approvals/apr_1?wait=60s")
		require.NoError(t, err, host)
		r := bufio.NewReader(resp.Body)
		first, err := r.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "first\n", first)
		if host == "assent.example.com" {
			assert.Less(t, time.Since(start), 600*time.Millisecond, "nothing is buffered")
		}
		resp.Body.Close()
		s := <-got
		assert.Equal(t, host, s.host)
		assert.Equal(t, "127.0.0.1", s.forwardedFor, "the client's address, for ASSENT_TRUSTED_PROXIES=127.0.0.1/32 to trust")
		assert.Equal(t, "https", s.proto)
	}

	// Plain HTTP is sent to HTTPS.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(fmt.Sprintf("http://127.0.0.1:%d/", plain))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
}
