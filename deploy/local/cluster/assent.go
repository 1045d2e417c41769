package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// binaries are the programs the cluster runs.
type binaries struct {
	temporal, sqlTool, assent, harness string
}

// build compiles what Options did not name, from this module: Temporal's
// server and SQL tool at the version go.mod requires (its tool lines),
// assent and the harness itself. Temporal's are built as go tool builds
// them, into Go's cache, so a second cluster copies them rather than links
// them again; the first build of Temporal's server takes minutes.
func (c *Cluster) build(ctx context.Context) (binaries, error) {
	bin := filepath.Join(c.opts.Dir, "bin")
	b := binaries{
		temporal: filepath.Join(bin, "temporal-server"),
		sqlTool:  filepath.Join(bin, "temporal-sql-tool"),
		assent:   c.opts.Assent,
		harness:  c.opts.Harness,
	}
	var targets [][2]string
	if b.assent == "" {
		b.assent = filepath.Join(bin, "assent")
		targets = append(targets, [2]string{b.assent, "./cmd/assent"})
	}
	if b.harness == "" {
		b.harness = filepath.Join(bin, "cluster")
		targets = append(targets, [2]string{b.harness, "./deploy/local"})
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return b, err
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return b, err
	}
	c.progress("building with go build (the first build of Temporal's server takes minutes; later ones use Go's cache)")
	for _, t := range [][2]string{{b.temporal, "go.temporal.io/server/cmd/server"}, {b.sqlTool, "go.temporal.io/server/cmd/tools/sql"}} {
		c.progress("building %s", filepath.Base(t[0]))
		cmd := exec.CommandContext(ctx, "go", "tool", "-n", t[1])
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return b, fmt.Errorf("go tool -n %s: %w\n%s", t[1], err, stderrOf(err))
		}
		// The cluster runs its own copy, which Go's cache trimming cannot
		// take away.
		if err := copyTree(ctx, strings.TrimSpace(string(out)), t[0]); err != nil {
			return b, err
		}
	}
	for _, t := range targets {
		c.progress("building %s", filepath.Base(t[0]))
		cmd := exec.CommandContext(ctx, "go", "build", "-o", t[0], t[1])
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %w\n%s", t[1], err, out)
		}
	}
	return b, nil
}

// stderrOf is what a failed command said on its standard error.
func stderrOf(err error) []byte {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.Stderr
	}
	return nil
}

// moduleRoot is the folder of this repository's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run the harness inside the Assent repository")
	}
	return filepath.Dir(mod), nil
}

// assentEnv is every assent process's environment: the shared database,
// Temporal, secret key and report files, the proxy as the public address.
func (c *Cluster) assentEnv() []string {
	if c.state.SecretKey == "" {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		c.state.SecretKey = base64.StdEncoding.EncodeToString(key)
	}
	env := []string{
		"ASSENT_DATABASE_URL=" + c.databaseURL("assent"),
		"ASSENT_TEMPORAL_ADDRESS=" + c.addr(TemporalFrontend),
		"ASSENT_TEMPORAL_NAMESPACE=" + Namespace,
		"ASSENT_SECRET_KEY=" + c.state.SecretKey,
		"ASSENT_BASE_URL=" + c.httpURL(Proxy),
		"ASSENT_BLOB_URL=file://" + filepath.Join(c.opts.Dir, "blobs"),
		"ASSENT_DATA_DIR=" + filepath.Join(c.opts.Dir, "assent"),
		"ASSENT_TEMPORAL_UI_URL=" + c.httpURL(TemporalUI),
		"ASSENT_TRUSTED_PROXIES=127.0.0.1",
	}
	if c.opts.TLS {
		dir := filepath.Join(c.opts.Dir, "tls")
		env = append(env,
			"ASSENT_TEMPORAL_TLS_CA="+filepath.Join(dir, "ca.pem"),
			"ASSENT_TEMPORAL_TLS_CERT="+filepath.Join(dir, "client.pem"),
			"ASSENT_TEMPORAL_TLS_KEY="+filepath.Join(dir, "client.key"),
			"ASSENT_TEMPORAL_TLS_SERVER_NAME=localhost",
		)
	}
	return append(env, c.opts.AssentEnv...)
}

func (c *Cluster) migrate(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, c.bins.assent, "migrate")
	cmd.Env = append(os.Environ(), c.assentEnv()...)
	cmd.Dir = c.opts.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("assent migrate: %w\n%s", err, out)
	}
	return nil
}

func (c *Cluster) startAssent(ctx context.Context) error {
	for _, name := range []string{Serve1, Serve2, Worker1, Worker2} {
		if err := c.start(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// spec says how to run each process.
func (c *Cluster) spec(name string) (spec, error) {
	switch name {
	case Postgres:
		return c.postgresSpec()
	case TemporalHistory, TemporalMatching, TemporalFrontend, TemporalWorker:
		return c.temporalSpec(name), nil
	case TemporalUI:
		argv := []string{c.bins.harness, "ui", "--listen", c.addr(TemporalUI), "--frontend", c.addr(TemporalFrontend),
			"--namespace", Namespace, "--codec", c.httpURL(Proxy) + "/temporal/codec"}
		if c.opts.TLS {
			argv = append(argv, "--tls-dir", filepath.Join(c.opts.Dir, "tls"))
		}
		return spec{argv: argv, ready: answers200(c.httpURL(TemporalUI) + "/")}, nil
	case Serve1, Serve2:
		return spec{
			argv:  []string{c.bins.assent, "serve"},
			env:   append(c.assentEnv(), "ASSENT_HTTP_ADDR="+c.addr(name)),
			ready: answers200(c.httpURL(name) + "/readyz"),
		}, nil
	case Worker1, Worker2:
		// Each worker's probes and metrics on a port of its own; versioned
		// (a release before 0.2 ignores the setting and runs unversioned).
		return spec{argv: []string{c.bins.assent, "worker"}, env: append(c.assentEnv(), "ASSENT_WORKER_HTTP_ADDR="+c.addr(name),
			"ASSENT_WORKER_DEPLOYMENT="+WorkerDeployment), ready: c.logged(`"worker started"`)}, nil
	case Proxy:
		return spec{
			argv:  []string{c.bins.harness, "proxy", "--listen", c.addr(Proxy), "--backend", c.httpURL(Serve1), "--backend", c.httpURL(Serve2)},
			ready: answers200(c.httpURL(Proxy) + "/readyz"),
		}, nil
	}
	return spec{}, fmt.Errorf("cluster: no process %q", name)
}

// Names lists every process, in start order.
func Names() []string {
	return []string{Postgres, TemporalHistory, TemporalMatching, TemporalFrontend, TemporalWorker,
		TemporalUI, Serve1, Serve2, Worker1, Worker2, Proxy}
}

// Initialised is what `assent admin init` printed for the cluster's first
// organisation: its owner, the owner's API token, an agent key and an
// admin key. Init keeps it in Dir/init.json, readable by its owner alone.
type Initialised struct {
	Organization struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"organization"`
	Owner struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"owner"`
	OwnerToken string `json:"ownerToken"`
	AgentKey   string `json:"agentKey"`
	AdminKey   string `json:"adminKey"`
}

// Admin runs `assent admin args…` against the cluster, as its operator
// would, and returns what it printed.
func (c *Cluster) Admin(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.bins.assent, append([]string{"admin"}, args...)...)
	cmd.Env = append(os.Environ(), c.assentEnv()...)
	cmd.Dir = c.opts.Dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("assent admin %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// InitPath is where Init keeps what it made.
func (c *Cluster) InitPath() string { return filepath.Join(c.opts.Dir, "init.json") }

// Init makes the cluster's first organisation, named name with its owner
// at ownerEmail, and its keys, once: later calls read them back from
// InitPath. A database holding organisations made otherwise is refused by
// `assent admin init`, which says what to do instead.
func (c *Cluster) Init(ctx context.Context, name, ownerEmail string) (*Initialised, error) {
	out, err := os.ReadFile(c.InitPath())
	if errors.Is(err, os.ErrNotExist) {
		if out, err = c.Admin(ctx, "init", "--name", name, "--owner-email", ownerEmail); err != nil {
			return nil, err
		}
		if err := os.WriteFile(c.InitPath(), out, 0o600); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	var init Initialised
	if err := json.Unmarshal(out, &init); err != nil {
		return nil, fmt.Errorf("%s: %w", c.InitPath(), err)
	}
	return &init, nil
}
