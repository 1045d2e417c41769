// Command local runs Assent's production shape on this machine, every part
// its own process (see package cluster):
//
//	go run ./deploy/local up      # builds, starts, prints the addresses
//	go run ./deploy/local down    # stops everything it started
//
// State, logs and data stay in --dir (.assent-cluster), so a later `up`
// resumes with the same database, key and ports. `proxy` and `ui` are the
// processes the cluster runs from this binary.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"

	"github.com/assent-hq/assent/deploy/local/cluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "deploy/local:", err)
		os.Exit(1)
	}
}

const usage = `usage: go run ./deploy/local <command> [flags]

  up     build and start the cluster, make its first organisation and keys
         once, print them and its addresses (--dir, --tls, --base-port,
         --ports, --org, --owner-email)
  down   stop the cluster started from --dir
  backup back up the cluster running from --dir into --to: a base backup
         of its PostgreSQL (Assent's and Temporal's databases at one
         instant), then its report files
  restore
         make --dir a new cluster from the backup in --from, with the
         secret key and first keys of the backed-up cluster (--keys-from:
         its folder, or a copy of its cluster.json and init.json kept apart
         from backups); then up --dir starts it where the backed-up one ran
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".assent-cluster", "folder for the cluster's data, logs and state")
	switch args[0] {
	case "up":
		tls := fs.Bool("tls", false, "serve Temporal's frontend over mutual TLS, with certificates made in <dir>/tls")
		basePort := fs.Int("base-port", 0, "give the processes ports from this one upwards (skipping ports in use); 0 picks free ones")
		var ports portsFlag
		fs.Var(&ports, "ports", "fix some processes' ports: "+strings.Join(cluster.Names(), "=…,")+"=…, comma-separated (proxy=8443,temporal-ui=8233)")
		org := fs.String("org", "Local", "the first organisation's name")
		owner := fs.String("owner-email", "owner@example.com", "its owner's email")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		c, err := cluster.Start(ctx, cluster.Options{Dir: *dir, TLS: *tls, Progress: stderr, Ports: ports, BasePort: *basePort})
		if err != nil {
			return err
		}
		made, err := c.Init(ctx, *org, *owner)
		if err != nil {
			return err
		}
		a := c.Addresses()
		fmt.Fprintf(stdout, `Assent (proxy)     %[1]s (API %[1]s/api/v1)
  serve            %[2]s, %[3]s
Temporal frontend  %[4]s (namespace %[5]s)
Temporal UI        %[6]s
Assent's database  %[7]s
Organisation       %[8]s (%[9]s), owner %[10]s
Agent key          %[11]s
Admin key          %[12]s
Owner's token      %[13]s (no email is sent here: the owner decides through the API with it)
Keys saved in      %[14]s (readable by you alone)
Secret key         ASSENT_SECRET_KEY in %[15]s
Logs               %[16]s
Stop with          go run ./deploy/local down --dir %[17]s
`, a.Assent, a.Serve[0], a.Serve[1], a.TemporalFrontend, cluster.Namespace, a.TemporalUI, a.Postgres,
			made.Organization.Name, made.Organization.ID, made.Owner.Email, made.AgentKey, made.AdminKey, made.OwnerToken,
			c.InitPath(), filepath.Join(c.Dir(), "cluster.json"), filepath.Join(c.Dir(), "logs"), *dir)
		return nil
	case "down":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		stopped, err := cluster.Down(*dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "stopped %d processes\n", len(stopped))
		return nil
	case "backup":
		to := fs.String("to", "", "a new folder for the backup")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *to == "" {
			return errors.New("backup: --to is required")
		}
		if err := cluster.Backup(ctx, *dir, *to); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "backed up %s into %s (it holds no keys: keep %s and %s apart from it)\n", *dir, *to,
			filepath.Join(*dir, "cluster.json"), filepath.Join(*dir, "init.json"))
		return nil
	case "restore":
		from := fs.String("from", "", "the backup's folder")
		keys := fs.String("keys-from", "", "the backed-up cluster's folder, or a copy of its cluster.json and init.json")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *from == "" || *keys == "" {
			return errors.New("restore: --from and --keys-from are required")
		}
		if err := cluster.Restore(ctx, *from, *dir, *keys); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "restored %s into %s; start it with: go run ./deploy/local up --dir %s\n", *from, *dir, *dir)
		return nil
	case "proxy":
		listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
		var backends listFlag
		fs.Var(&backends, "backend", "a serve process's URL (repeat)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return runProxy(ctx, *listen, backends)
	case "ui":
		listen := fs.String("listen", "127.0.0.1:8233", "address to listen on")
		frontend := fs.String("frontend", "127.0.0.1:7233", "Temporal frontend")
		namespace := fs.String("namespace", "default", "namespace shown first")
		codec := fs.String("codec", "", "codec endpoint decoding payloads")
		tlsDir := fs.String("tls-dir", "", "folder with ca.pem, client.pem and client.key for the frontend's mutual TLS")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return runUI(ctx, *listen, *frontend, *namespace, *codec, *tlsDir)
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// portsFlag is --ports: name=port, comma-separated.
type portsFlag map[string]int

func (p *portsFlag) String() string { return fmt.Sprint(map[string]int(*p)) }

func (p *portsFlag) Set(v string) error {
	if *p == nil {
		*p = portsFlag{}
	}
	for _, pair := range strings.Split(v, ",") {
		name, port, ok := strings.Cut(strings.TrimSpace(pair), "=")
		n, err := strconv.Atoi(port)
		if !ok || err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q: want name=port, such as proxy=8443", pair)
		}
		if !slices.Contains(cluster.Names(), name) {
			return fmt.Errorf("%q: no process %s (the processes: %s)", pair, name, strings.Join(cluster.Names(), ", "))
		}
		(*p)[name] = n
	}
	return nil
}

type listFlag []string

func (l *listFlag) String() string     { return fmt.Sprint(*l) }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// runProxy spreads requests over the backends that answer /readyz, as a
// load balancer's health check does; a killed serve leaves the rotation
// within half a second and joins it again once ready.
func runProxy(ctx context.Context, listen string, backends []string) error {
	if len(backends) == 0 {
		return errors.New("proxy: no --backend")
	}
	targets := make([]*url.URL, len(backends))
	healthy := make([]atomic.Bool, len(backends))
	for i, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			return fmt.Errorf("proxy: --backend %q: %w", b, err)
		}
		targets[i] = u
		healthy[i].Store(true)
	}
	check := &http.Client{Timeout: time.Second}
	go func() {
		for {
			for i, u := range targets {
				resp, err := check.Get(u.String() + "/readyz")
				healthy[i].Store(err == nil && resp.StatusCode == http.StatusOK)
				if err == nil {
					resp.Body.Close()
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	// A backend that refuses the connection (killed before the health
	// check noticed) is skipped at dial time: the request never reached
	// it, so sending it to the next one is safe for any method. The Host
	// header is the client's, so the swapped connection is transparent.
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			return conn, nil
		}
		for i, u := range targets {
			if u.Host == addr {
				healthy[i].Store(false)
				continue
			}
			if other, otherErr := dialer.DialContext(ctx, network, u.Host); otherErr == nil {
				return other, nil
			}
		}
		return nil, err
	}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{
		Transport: retryElsewhere{transport, targets, healthy},
		Rewrite: func(r *httputil.ProxyRequest) {
			n := next.Add(1)
			pick := targets[n%uint64(len(targets))]
			for i := range targets {
				j := (n + uint64(i)) % uint64(len(targets))
				if healthy[j].Load() {
					pick = targets[j]
					break
				}
			}
			r.SetURL(pick)
			r.SetXForwarded()
			r.Out.Host = r.In.Host
		},
		// Long-polls (GET …?wait=) stream nothing until they answer.
		FlushInterval: -1,
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: resendable(proxy), ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// maxResent is the largest body resendable keeps to send again.
const maxResent = 1 << 20

// resendable keeps the body of a request that carries an Idempotency-Key,
// which the API answers with its first outcome however often it comes, so
// that it may be sent again when the kept-alive connection it went out on
// was closed before an answer (retryElsewhere): a serve of 0.1.0, which
// has no lame duck, closes those connections the moment it is stopped.
func resendable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Idempotency-Key") != "" && r.ContentLength > 0 && r.ContentLength <= maxResent {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "proxy: reading the request: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		next.ServeHTTP(w, r)
	})
}

// retryElsewhere sends a request once more, to another backend, when its
// connection broke before an answer: a serve stopping for a deploy closes
// its kept-alive connections, and one the proxy had just picked answers
// EOF, or fails while the body is still being written. Only a request that
// may come twice is sent again: a bodiless GET or HEAD, or one carrying an
// Idempotency-Key whose body resendable kept. A load balancer retries these
// the same way.
type retryElsewhere struct {
	next    http.RoundTripper
	targets []*url.URL
	healthy []atomic.Bool
}

func (t retryElsewhere) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err == nil || !mayComeTwice(r) {
		return resp, err
	}
	for i, u := range t.targets {
		if u.Host == r.URL.Host {
			t.healthy[i].Store(false)
			continue
		}
		again := r.Clone(r.Context())
		again.URL.Host = u.Host
		if r.GetBody != nil {
			body, bodyErr := r.GetBody()
			if bodyErr != nil {
				return resp, err
			}
			again.Body = body
		}
		if resp, retryErr := t.next.RoundTrip(again); retryErr == nil {
			return resp, nil
		}
	}
	return resp, err
}

// mayComeTwice says whether a request may be sent again after its
// connection broke, whatever of it the backend had read.
func mayComeTwice(r *http.Request) bool {
	bodiless := r.Body == nil || r.Body == http.NoBody
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return bodiless
	}
	return r.Header.Get("Idempotency-Key") != "" && (bodiless || r.GetBody != nil)
}

// runUI serves the Temporal UI for the cluster's frontend.
func runUI(ctx context.Context, listen, frontend, namespace, codec, tlsDir string) error {
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return err
	}
	var port int
	if _, err := fmt.Sscan(portText, &port); err != nil {
		return fmt.Errorf("ui: --listen %q: %w", listen, err)
	}
	conf := &uiconfig.Config{
		Host:                host,
		Port:                port,
		TemporalGRPCAddress: frontend,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
		Codec:               uiconfig.Codec{Endpoint: codec, IncludeCredentials: codec != ""},
		DisableWriteActions: true,
	}
	if tlsDir != "" {
		conf.TLS = uiconfig.TLS{
			CaFile:                 filepath.Join(tlsDir, "ca.pem"),
			CertFile:               filepath.Join(tlsDir, "client.pem"),
			KeyFile:                filepath.Join(tlsDir, "client.key"),
			ServerName:             "localhost",
			EnableHostVerification: true,
		}
	}
	srv := uiserver.NewServer(uiserveroptions.WithConfigProvider(conf))
	go func() { <-ctx.Done(); srv.Stop() }()
	return srv.Start()
}
