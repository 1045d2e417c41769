package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is one child: its own session (so a kill takes its children
// too, and closing the terminal that ran `up` does not), its output
// appended to logs/<name>.log.
type process struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	// stop is the signal that stops it cleanly, sent to it alone.
	stop syscall.Signal
	// stopped says it is meant to be down (killed, terminated): the
	// supervisor leaves it. Guarded by the cluster's mu.
	stopped bool
	// logStart is the log's size when this run began: readiness looks
	// only at what this run wrote.
	logStart int64
}

// spec is how to run a process and when it is ready.
type spec struct {
	argv []string
	env  []string
	// asPostgres runs it as the postgres user when the harness is root
	// (PostgreSQL refuses to run as root).
	asPostgres bool
	// stop stops it cleanly; zero is SIGTERM. PostgreSQL's SIGTERM waits
	// for every client to leave, which pooled clients never do, so it
	// takes SIGINT (a fast shutdown).
	stop  syscall.Signal
	ready func(ctx context.Context, p *process) error
}

func (c *Cluster) logPath(name string) string { return filepath.Join(c.opts.Dir, "logs", name+".log") }

// start runs the named process and waits until it is ready.
func (c *Cluster) start(ctx context.Context, name string) error {
	s, err := c.spec(name)
	if err != nil {
		return err
	}
	p, err := c.launch(name, s)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	ready := make(chan error, 1)
	go func() { ready <- s.ready(ctx, p) }()
	select {
	case err := <-ready:
		if err != nil {
			return fmt.Errorf("%s did not become ready: %w; its log ends:\n%s", name, err, c.LogTail(name))
		}
		go c.supervise(name, s, p)
		return nil
	case <-p.exited:
		return fmt.Errorf("%s exited while starting; its log ends:\n%s", name, c.LogTail(name))
	}
}

// launch spawns the named process and records it.
func (c *Cluster) launch(name string, s spec) (*process, error) {
	p, err := c.spawn(name, s)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.procs[name] = p
	c.state.PIDs[name] = p.cmd.Process.Pid
	return p, c.saveState()
}

// supervise starts a process again when it exits on its own, as systemd's
// Restart=always or an orchestrator does: Temporal's services stop
// themselves when their database fails them during their own start (a
// PostgreSQL restart just after a service restart). Each such exit is
// counted (Exits); tests hold Assent's own processes to none. One that
// `down` stopped is left down, though this harness still runs.
func (c *Cluster) supervise(name string, s spec, p *process) {
	<-p.exited
	time.Sleep(time.Second)
	c.mu.Lock()
	mine := c.procs[name] == p && !p.stopped && c.recorded(name, p)
	if mine {
		c.exits[name]++
	}
	c.mu.Unlock()
	if !mine {
		return
	}
	c.progress("%s exited on its own; starting it again", name)
	if np, err := c.launch(name, s); err != nil {
		c.progress("%s could not be started again: %v", name, err)
	} else {
		go c.supervise(name, s, np)
	}
}

func (c *Cluster) spawn(name string, s spec) (*process, error) {
	logFile, err := os.OpenFile(c.logPath(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	st, err := logFile.Stat()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "--- %s: started by the cluster harness\n", time.Now().UTC().Format(time.RFC3339))
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Dir = c.opts.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if s.asPostgres {
		if cred, err := postgresCredential(); err != nil {
			return nil, err
		} else if cred != nil {
			cmd.SysProcAttr.Credential = cred
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, exited: make(chan struct{}), logStart: st.Size(), stop: s.stop}
	if p.stop == 0 {
		p.stop = syscall.SIGTERM
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL to the process's session and waits for all of it to
// go: a restart must not meet a child of the old run still holding its
// port or, for PostgreSQL, its shared memory.
func (p *process) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
	}
	for deadline := time.Now().Add(10 * time.Second); groupAlive(p.cmd.Process.Pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// terminate asks the process to stop and kills it after grace.
func (p *process) terminate(grace time.Duration) {
	if !p.running() {
		return
	}
	// To the leader alone: it stops its own children in order (a
	// PostgreSQL backend signalled directly drops its client mid-query).
	_ = p.cmd.Process.Signal(p.stop)
	select {
	case <-p.exited:
	case <-time.After(grace):
	}
	p.kill() // what the leader left behind, if anything
}

// groupAlive reports whether any process of the session led by pid runs.
func groupAlive(pid int) bool { return pid > 0 && syscall.Kill(-pid, 0) == nil }

// stopGroup stops the session led by pid, which this process did not
// start: SIGTERM, then SIGKILL after grace. It reports whether it ran.
func stopGroup(pid int, grace time.Duration) bool {
	if !groupAlive(pid) {
		return false
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !groupAlive(pid) {
			return true
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return true
}

// LogLines are the lines of the named process's log that contain substr.
func (c *Cluster) LogLines(name, substr string) []string {
	b, err := os.ReadFile(c.logPath(name))
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

// LogTail is the end of a process's log, for failure messages.
func (c *Cluster) LogTail(name string) string {
	b, err := os.ReadFile(c.logPath(name))
	if err != nil {
		return err.Error()
	}
	const keep = 3000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}

// logSince is what this run of p wrote to its log.
func (c *Cluster) logSince(p *process) []byte {
	b, err := os.ReadFile(c.logPath(p.name))
	if err != nil || int64(len(b)) < p.logStart {
		return nil
	}
	return b[p.logStart:]
}

// poll calls check every 100 ms until it returns nil or ctx ends, and
// then returns check's last error.
func poll(ctx context.Context, check func() error) error {
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// listening is ready once something accepts connections on addr.
func listening(addr string) func(context.Context, *process) error {
	return func(ctx context.Context, _ *process) error {
		return poll(ctx, func() error {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				conn.Close()
			}
			return err
		})
	}
}

// answers200 is ready once GET url answers 200.
func answers200(url string) func(context.Context, *process) error {
	return func(ctx context.Context, _ *process) error {
		return poll(ctx, func() error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET %s: %s", url, resp.Status)
			}
			return nil
		})
	}
}

// logged is ready once this run of the process wrote line.
func (c *Cluster) logged(line string) func(context.Context, *process) error {
	return func(ctx context.Context, p *process) error {
		return poll(ctx, func() error {
			if bytes.Contains(c.logSince(p), []byte(line)) {
				return nil
			}
			return errors.New("not yet logged: " + line)
		})
	}
}
