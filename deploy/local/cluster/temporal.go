package cluster

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/assent-hq/assent/internal/freeport"
)

// historyShards is more than one, as in production, so a request's
// workflows spread over shards and a history restart moves them.
const historyShards = 4

// The Temporal services, each its own process.
var temporalServices = map[string]string{
	TemporalHistory:  "history",
	TemporalMatching: "matching",
	TemporalFrontend: "frontend",
	TemporalWorker:   "worker",
}

// setupTemporalSchemas creates and upgrades Temporal's schemas with
// Temporal's own SQL tool and the schemas embedded in it, never by hand.
func (c *Cluster) setupTemporalSchemas(ctx context.Context) error {
	db, err := sql.Open("pgx", c.databaseURL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	for _, s := range []struct{ db, schema string }{
		{"temporal", "postgresql/v12/temporal"},
		{"temporal_visibility", "postgresql/v12/visibility"},
	} {
		tool := []string{"--plugin", "postgres12", "--ep", "127.0.0.1", "-p", strconv.Itoa(c.port(Postgres)), "-u", "postgres", "--db", s.db}
		versioned, err := hasTable(ctx, c.databaseURL(s.db), "schema_version")
		if err != nil {
			return err
		}
		if !versioned {
			if err := c.run(ctx, c.bins.sqlTool, append(tool, "setup-schema", "-v", "0.0")...); err != nil {
				return err
			}
		}
		if err := c.run(ctx, c.bins.sqlTool, append(tool, "update-schema", "--schema-name", s.schema)...); err != nil {
			return err
		}
	}
	return nil
}

func hasTable(ctx context.Context, url, table string) (bool, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return false, err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_name = $1", table).Scan(&n)
	return n > 0, err
}

// startTemporal writes the server's configuration and starts its four
// services, history first: the frontend needs the others' membership.
func (c *Cluster) startTemporal(ctx context.Context) error {
	if err := c.writeTemporalConfig(); err != nil {
		return err
	}
	for _, name := range []string{TemporalHistory, TemporalMatching, TemporalFrontend, TemporalWorker} {
		if err := c.start(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) temporalConfigPath() string { return filepath.Join(c.opts.Dir, "temporal.yaml") }

func (c *Cluster) temporalSpec(name string) spec {
	return spec{
		argv:  []string{c.bins.temporal, "--config-file", c.temporalConfigPath(), "--allow-no-auth", "start", "--service", temporalServices[name]},
		ready: listening(c.addr(name)),
	}
}

// registerNamespace registers Assent's namespace once the frontend can
// reach history; the Temporal UI and assent's workers need it.
func (c *Cluster) registerNamespace(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	opts, err := c.TemporalClientOptions()
	if err != nil {
		return err
	}
	return poll(ctx, func() error {
		nc, err := client.NewNamespaceClient(opts)
		if err != nil {
			return err
		}
		defer nc.Close()
		err = nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace:                        Namespace,
			WorkflowExecutionRetentionPeriod: durationpb.New(7 * 24 * time.Hour),
		})
		if _, exists := err.(*serviceerror.NamespaceAlreadyExists); exists {
			err = nil
		}
		if err != nil {
			return err
		}
		_, err = nc.Describe(ctx, Namespace)
		return err
	})
}

// TemporalClientOptions connect to the frontend as assent does (without
// assent's payload codec: add it to read what workflows hold).
func (c *Cluster) TemporalClientOptions() (client.Options, error) {
	opts := client.Options{HostPort: c.addr(TemporalFrontend), Namespace: Namespace}
	if c.opts.TLS {
		conf, err := clientTLS(filepath.Join(c.opts.Dir, "tls"))
		if err != nil {
			return opts, err
		}
		opts.ConnectionOptions.TLS = conf
	}
	return opts, nil
}

// run runs a tool to completion, its output in the error when it fails.
func (c *Cluster) run(ctx context.Context, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = c.opts.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return nil
}

func (c *Cluster) writeTemporalConfig() error {
	data := map[string]any{
		"Shards":   historyShards,
		"Postgres": c.port(Postgres),
		"Services": map[string]map[string]int{},
		"Frontend": c.addr(TemporalFrontend),
		"TLS":      c.opts.TLS,
		"TLSDir":   filepath.Join(c.opts.Dir, "tls"),
		"Dynamic":  filepath.Join(c.opts.Dir, "dynamicconfig.yaml"),
	}
	for name, svc := range temporalServices {
		data["Services"].(map[string]map[string]int)[svc] = map[string]int{
			"GRPC": c.port(name), "Membership": c.port(name + "-membership"), "HTTP": c.port(name + "-http"),
		}
	}
	f, err := os.Create(c.temporalConfigPath())
	if err != nil {
		return err
	}
	defer f.Close()
	if err := temporalConfig.Execute(f, data); err != nil {
		return err
	}
	return os.WriteFile(data["Dynamic"].(string), []byte(dynamicConfig), 0o644)
}

// dynamicConfig is what the cluster changes from Temporal's defaults, as
// deploy/temporal/dynamicconfig/assent.yaml does: a task a transition
// makes is dispatched at once (docs/benchmarks.md, "Where a decision's
// time went"), and the history service caches at most 4,096 workflows,
// so its memory levels off (docs/reliability.md, "The soak") instead of
// holding every workflow touched in the last hour.
const dynamicConfig = `history.transferProcessorMaxPollRPS:
  - value: 1000
    constraints: {}
history.hostLevelCacheMaxSize:
  - value: 4096
    constraints: {}
`

// temporalConfig reaches PostgreSQL through Temporal's pgx plugin
// (postgres12_pgx), as docker-compose.yml does: it keeps each connection's
// prepared statements, where the lib/pq plugin (postgres12) prepares every
// statement afresh, and the cluster filled a backlog about a fifth
// faster with it (docs/benchmarks.md, finding 10).
var temporalConfig = template.Must(template.New("temporal.yaml").Parse(`# Written by the cluster harness (deploy/local) on every start.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: {{.Shards}}
  datastores:
    default:
      sql:
        pluginName: postgres12_pgx
        databaseName: temporal
        connectAddr: "127.0.0.1:{{.Postgres}}"
        connectProtocol: tcp
        user: postgres
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: 1h
    visibility:
      sql:
        pluginName: postgres12_pgx
        databaseName: temporal_visibility
        connectAddr: "127.0.0.1:{{.Postgres}}"
        connectProtocol: tcp
        user: postgres
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
{{- if .TLS}}
  tls:
    frontend:
      server:
        certFile: {{.TLSDir}}/server.pem
        keyFile: {{.TLSDir}}/server.key
        clientCaFiles: [{{.TLSDir}}/ca.pem]
        requireClientAuth: true
      client:
        serverName: localhost
        rootCaFiles: [{{.TLSDir}}/ca.pem]
    systemWorker:
      certFile: {{.TLSDir}}/client.pem
      keyFile: {{.TLSDir}}/client.key
      client:
        serverName: localhost
        rootCaFiles: [{{.TLSDir}}/ca.pem]
{{- end}}
services:
{{- range $name, $p := .Services}}
  {{$name}}:
    rpc:
      grpcPort: {{$p.GRPC}}
      membershipPort: {{$p.Membership}}
      bindOnIP: 127.0.0.1
{{- if eq $name "frontend"}}
      httpPort: {{$p.HTTP}}
{{- end}}
{{- end}}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: {{.Frontend}}
dcRedirectionPolicy:
  policy: noop
publicClient:
  hostPort: {{.Frontend}}
dynamicConfigClient:
  filepath: {{.Dynamic}}
  pollInterval: 10s
`))

// port is a process's port, picked once and kept in cluster.json so a
// restart listens where the others look.
func (c *Cluster) port(name string) int {
	if p, ok := c.state.Ports[name]; ok {
		return p
	}
	p, ok := c.opts.Ports[name]
	if !ok {
		p = pickPort(c.state.Ports, c.opts.Ports, c.opts.BasePort)
	}
	c.state.Ports[name] = p
	return p
}

// pickPort is a free port no other process of the cluster has or is
// given: from base upwards when base is set, else any.
func pickPort(taken, given map[string]int, base int) int {
	used := map[int]bool{}
	for _, p := range taken {
		used[p] = true
	}
	for _, p := range given {
		used[p] = true
	}
	for p := base; base > 0 && p < 65536; p++ {
		if used[p] {
			continue
		}
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			_ = l.Close()
			return p
		}
	}
	for {
		p, err := freeport.Pick("127.0.0.1")
		if err != nil {
			panic(errors.New("cluster: no free port"))
		}
		if !used[p] {
			return p
		}
	}
}

func (c *Cluster) addr(name string) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port(name)))
}

func (c *Cluster) httpURL(name string) string { return "http://" + c.addr(name) }

// clientTLS is the client side of the cluster's mutual TLS.
func clientTLS(dir string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key"))
	if err != nil {
		return nil, err
	}
	pool, err := certPool(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "localhost"}, nil
}
