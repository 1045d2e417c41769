// Package cluster runs Assent's production shape on one machine, each part
// its own process on loopback: a PostgreSQL of its own, Temporal's four
// services built from the server module in go.mod, the Temporal UI,
// `assent migrate`, two `assent serve` behind a reverse proxy and two
// `assent worker`. `go run ./deploy/local up` starts it for people; tests
// start it, kill its processes and restart them.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Options say where the cluster keeps its state and which binaries it runs.
type Options struct {
	// Dir keeps everything: PostgreSQL's data, logs, binaries, the report
	// files and cluster.json. A second Start on the same Dir resumes.
	Dir string
	// Assent is the assent binary; empty builds ./cmd/assent into Dir.
	Assent string
	// Harness is the binary whose `proxy` and `ui` commands run the
	// reverse proxy and the Temporal UI (deploy/local's own); empty
	// builds ./deploy/local into Dir.
	Harness string
	// TLS serves Temporal's frontend over mutual TLS with certificates
	// made for the cluster (in Dir/tls); assent connects with them.
	TLS bool
	// AssentEnv is added to every assent process's environment. A worker
	// is known ready by its "worker started" line, so keep
	// ASSENT_LOG_LEVEL at info or below.
	AssentEnv []string
	// Progress receives a line per step; nil is silent.
	Progress io.Writer
	// Ports fixes the ports of the processes it names (Proxy, TemporalUI,
	// TemporalFrontend, …); BasePort, when set, gives every other port
	// from it upwards, skipping ports in use, instead of free ones picked
	// at random. Both apply to a new cluster: one resumed keeps the ports
	// in cluster.json.
	Ports    map[string]int
	BasePort int
}

// Process names, in start order.
const (
	Postgres         = "postgres"
	TemporalHistory  = "temporal-history"
	TemporalMatching = "temporal-matching"
	TemporalFrontend = "temporal-frontend"
	TemporalWorker   = "temporal-worker"
	TemporalUI       = "temporal-ui"
	Serve1           = "serve-1"
	Serve2           = "serve-2"
	Worker1          = "worker-1"
	Worker2          = "worker-2"
	Proxy            = "proxy"
)

// Namespace is the Temporal namespace the cluster's Assent uses.
const Namespace = "assent"

// WorkerDeployment is the Temporal worker deployment its workers join.
const WorkerDeployment = "assent"

// State is what outlives one harness command, in Dir/cluster.json: the
// ports, the secret key and the running processes, so `down` and a later
// `up` find them.
type State struct {
	Ports     map[string]int `json:"ports"`
	SecretKey string         `json:"secretKey"`
	PIDs      map[string]int `json:"pids"`
}

// Cluster is a running (or resumable) cluster.
type Cluster struct {
	opts Options
	bins binaries
	// mu guards what the supervisor changes beside the caller: the
	// processes, the state and the exits.
	mu    sync.Mutex
	state State
	procs map[string]*process
	// exits counts, by process, the times one exited on its own and the
	// supervisor started it again.
	exits map[string]int
}

// Start brings every part up in order and returns once the proxy answers
// /readyz. On failure it stops what it started.
func Start(ctx context.Context, o Options) (_ *Cluster, err error) {
	if o.Dir == "" {
		return nil, errors.New("cluster: Dir is required")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	o.Dir = dir
	c := &Cluster{opts: o, procs: map[string]*process{}, exits: map[string]int{}}
	for _, d := range []string{"bin", "logs", "blobs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := c.loadState(); err != nil {
		return nil, err
	}
	if alive := c.alive(); len(alive) > 0 {
		return nil, fmt.Errorf("cluster: %s already running from %s (pids in cluster.json); stop it first", strings.Join(alive, ", "), dir)
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.bins, err = c.build(ctx); err != nil {
		return nil, err
	}
	if o.TLS {
		if err := makeCertificates(filepath.Join(dir, "tls")); err != nil {
			return nil, err
		}
	}
	steps := []struct {
		what string
		run  func(context.Context) error
	}{
		{"PostgreSQL", c.startPostgres},
		{"Temporal's schema tool", c.setupTemporalSchemas},
		{"Temporal's services", c.startTemporal},
		{"the Temporal namespace", c.registerNamespace},
		{"the Temporal UI", func(ctx context.Context) error { return c.start(ctx, TemporalUI) }},
		{"assent migrate", c.migrate},
		{"assent serve and worker", c.startAssent},
		{"the proxy", func(ctx context.Context) error { return c.start(ctx, Proxy) }},
	}
	for _, s := range steps {
		c.progress("starting %s", s.what)
		if err := s.run(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", s.what, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c, c.saveState()
}

// Addresses are what a person opens or points a client at.
type Addresses struct {
	// Assent is the proxy in front of both serve processes.
	Assent string
	// Serve are the serve processes themselves.
	Serve []string
	// Workers are the workers' probes and metrics (/readyz, /metrics).
	Workers []string
	// TemporalFrontend is host:port of Temporal's frontend.
	TemporalFrontend string
	// TemporalUI is the UI's address.
	TemporalUI string
	// Postgres is the database URL of Assent's database.
	Postgres string
}

// Addresses returns the cluster's addresses.
func (c *Cluster) Addresses() Addresses {
	return Addresses{
		Assent:           c.httpURL(Proxy),
		Serve:            []string{c.httpURL(Serve1), c.httpURL(Serve2)},
		Workers:          []string{c.httpURL(Worker1), c.httpURL(Worker2)},
		TemporalFrontend: c.addr(TemporalFrontend),
		TemporalUI:       c.httpURL(TemporalUI),
		Postgres:         c.databaseURL("assent"),
	}
}

// PID is the process id of a running process, 0 when it is not running.
func (c *Cluster) PID(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.procs[name]; ok && p.running() {
		return p.cmd.Process.Pid
	}
	return 0
}

// SecretKey is the key every assent process shares.
func (c *Cluster) SecretKey() string { return c.state.SecretKey }

// AssentBinary is the assent program the cluster runs.
func (c *Cluster) AssentBinary() string { return c.bins.assent }

// AssentEnv is the environment of the cluster's assent processes, for
// running `assent admin` against it.
func (c *Cluster) AssentEnv() []string { return c.assentEnv() }

// Dir is where the cluster keeps its state.
func (c *Cluster) Dir() string { return c.opts.Dir }

// Kill sends SIGKILL to a process, as a crash would.
func (c *Cluster) Kill(name string) error {
	return c.stop(name, func(p *process) { p.kill() })
}

// Terminate stops a process as an operator or a deploy does: SIGTERM,
// and SIGKILL only if it has not ended within the grace period.
func (c *Cluster) Terminate(name string) error {
	return c.stop(name, func(p *process) { p.terminate(30 * time.Second) })
}

// stop stops a process by how, telling the supervisor first that it is
// meant to stay down.
func (c *Cluster) stop(name string, how func(*process)) error {
	c.mu.Lock()
	p, ok := c.procs[name]
	if ok {
		p.stopped = true
	}
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("cluster: no process %q", name)
	}
	how(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.state.PIDs, name)
	return c.saveState()
}

// Restart starts a process that was killed or stopped, with the same
// command, and waits until it is ready.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	c.mu.Lock()
	p, ok := c.procs[name]
	c.mu.Unlock()
	if ok && p.running() {
		return fmt.Errorf("cluster: %s is running", name)
	}
	return c.start(ctx, name)
}

// Roll restarts Assent's processes one at a time, as a deploy does
// (docs/operations.md, "Upgrading with requests pending"): with a new
// binary bin, `assent migrate` with it first; then each worker and then
// each serve is stopped with SIGTERM and started again (on bin, when
// given), ready before the next one stops. An empty bin is a rolling
// restart on the same binary.
func (c *Cluster) Roll(ctx context.Context, bin string) error {
	if bin != "" {
		if err := c.Migrate(ctx, bin); err != nil {
			return err
		}
	}
	for _, name := range []string{Worker1, Worker2, Serve1, Serve2} {
		c.progress("rolling %s", name)
		if err := c.Terminate(name); err != nil {
			return err
		}
		if err := c.Restart(ctx, name); err != nil {
			return fmt.Errorf("restart %s: %w\n%s", name, err, c.LogTail(name))
		}
	}
	return nil
}

// Migrate runs `assent migrate` with bin, the binary Assent's processes
// start on from then on: Roll's first step, which Roll(ctx, "") follows.
func (c *Cluster) Migrate(ctx context.Context, bin string) error {
	c.bins.assent = bin
	c.progress("migrating with %s", bin)
	return c.migrate(ctx)
}

// RestartPostgres stops PostgreSQL cleanly (a fast shutdown, as an
// operator's restart does) and starts it again; every other process must
// reconnect on its own.
func (c *Cluster) RestartPostgres(ctx context.Context) error {
	if err := c.Terminate(Postgres); err != nil {
		return err
	}
	return c.Restart(ctx, Postgres)
}

// Exits counts, by process, the times one exited on its own while meant
// to run, each restarted by the supervisor.
func (c *Cluster) Exits() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.exits)
}

// Stop ends every process: the proxy, then Assent's processes, then
// Temporal's, then PostgreSQL, the processes of each step at once (a
// serve's lame duck alone takes seconds).
func (c *Cluster) Stop() {
	c.mu.Lock()
	procs := maps.Clone(c.procs)
	for _, p := range procs {
		p.stopped = true
	}
	c.mu.Unlock()
	for _, step := range stopSteps(procs) {
		var wg sync.WaitGroup
		for _, n := range step {
			wg.Go(func() { procs[n].terminate(20 * time.Second) })
		}
		wg.Wait()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for n := range procs {
		delete(c.state.PIDs, n)
	}
	_ = c.saveState()
}

// Down stops the processes a cluster.json in dir names, for the `down`
// command, which did not start them.
func Down(dir string) ([]string, error) {
	c := &Cluster{opts: Options{Dir: dir}, procs: map[string]*process{}}
	if err := c.loadState(); err != nil {
		return nil, err
	}
	var stopped []string
	for _, n := range slices.Concat(stopSteps(c.state.PIDs)...) {
		if stopGroup(c.state.PIDs[n], 20*time.Second) {
			stopped = append(stopped, n)
		}
		// Saved as each stops: a harness still supervising it reads
		// this and leaves it down (supervise).
		delete(c.state.PIDs, n)
		if err := c.saveState(); err != nil {
			return stopped, err
		}
	}
	return stopped, nil
}

// stopSteps groups the processes m holds by what depends on them, those
// that depend on the others first: the proxy, Assent's processes,
// Temporal's, PostgreSQL. The processes of one step may stop at once.
func stopSteps[V any](m map[string]V) [][]string {
	var steps [][]string
	for _, step := range [][]string{{Proxy}, {Serve1, Serve2, Worker1, Worker2},
		{TemporalUI, TemporalWorker, TemporalFrontend, TemporalMatching, TemporalHistory}, {Postgres}} {
		var in []string
		for _, n := range step {
			if _, ok := m[n]; ok {
				in = append(in, n)
			}
		}
		if len(in) > 0 {
			steps = append(steps, in)
		}
	}
	return steps
}

func (c *Cluster) progress(format string, args ...any) {
	if c.opts.Progress != nil {
		fmt.Fprintf(c.opts.Progress, format+"\n", args...)
	}
}

func (c *Cluster) statePath() string { return filepath.Join(c.opts.Dir, "cluster.json") }

func (c *Cluster) loadState() error {
	st, err := c.readState()
	c.state = st
	if errors.Is(err, os.ErrNotExist) {
		return nil // a new cluster
	}
	return err
}

// readState reads cluster.json as it is on disk, its maps never nil.
func (c *Cluster) readState() (State, error) {
	st := State{Ports: map[string]int{}, PIDs: map[string]int{}}
	b, err := os.ReadFile(c.statePath())
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", c.statePath(), err)
	}
	if st.Ports == nil {
		st.Ports = map[string]int{}
	}
	if st.PIDs == nil {
		st.PIDs = map[string]int{}
	}
	return st, nil
}

// recorded reports whether cluster.json still names p as the process
// run as name: `down`, from another shell, removes each as it stops it.
// A file that cannot be read leaves the supervisor as it was.
func (c *Cluster) recorded(name string, p *process) bool {
	st, err := c.readState()
	return err != nil || st.PIDs[name] == p.cmd.Process.Pid
}

func (c *Cluster) saveState() error {
	b, err := json.MarshalIndent(c.state, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(c.statePath(), append(b, '\n'), 0o600)
}

// alive lists the processes cluster.json names that still run.
func (c *Cluster) alive() []string {
	var out []string
	for n, pid := range c.state.PIDs {
		if groupAlive(pid) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
