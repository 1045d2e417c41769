// Package assenttest runs a real Assent for a Go test suite: `assent dev`,
// the whole service in one process (its own Temporal server, SQLite and
// dev mailbox), on free ports with a data folder of its own, and the demo
// organisation it makes, whose agent key, admin key and members' tokens
// the tests act with.
//
//	dev, err := assenttest.Start(ctx, assenttest.Options{})
//	if err != nil { ... }
//	defer dev.Stop()
//	client := assent.New(dev.BaseURL, dev.AgentKey)
//
// It needs the assent binary: Options.Binary, else ASSENT_BIN, else
// assent on the PATH.
package assenttest

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Options are how Start runs the server.
type Options struct {
	// Binary is the assent binary; "" is ASSENT_BIN, else assent on the
	// PATH.
	Binary string
	// Env adds NAME=value settings to the server's environment. Start
	// passes on none of the caller's own ASSENT_* variables (a database
	// URL, an address), only its test settings and these.
	Env []string
	// StartTimeout bounds the start, until the server is ready; 3 minutes
	// when zero (a first start may migrate and warm Temporal).
	StartTimeout time.Duration
}

// Member is one of the demo organisation's people, with a member token
// that can decide.
type Member struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	Token string `json:"token"`
}

// Dev is a running `assent dev` and its demo organisation.
type Dev struct {
	BaseURL        string   `json:"baseUrl"`
	OrganizationID string   `json:"organizationId"`
	AgentKey       string   `json:"agentKey"`
	AdminKey       string   `json:"adminKey"`
	Members        []Member `json:"members"`
	// Binary is the assent binary it runs, for a test that runs another
	// command of it (assent mcp).
	Binary string `json:"-"`
	// DataDir is its data folder, removed by Stop.
	DataDir string `json:"-"`

	cmd *exec.Cmd
	// exited is closed once the process has exited, with exitErr.
	exited  chan struct{}
	exitErr error
}

// banner is the line assent dev prints with its address.
var banner = regexp.MustCompile(`API and pages\s+(\S+)`)

// Binary finds the assent binary as Start does when Options.Binary is
// empty: ASSENT_BIN, else assent on the PATH.
func Binary() (string, error) {
	if bin := os.Getenv("ASSENT_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("ASSENT_BIN: %w", err)
		}
		return bin, nil
	}
	bin, err := exec.LookPath("assent")
	if err != nil {
		return "", errors.New("no assent binary: set ASSENT_BIN or put assent on the PATH")
	}
	return bin, nil
}

// Start runs `assent dev` and returns it once it answers /readyz. Stop it
// when done; a failed start leaves nothing running.
func Start(ctx context.Context, o Options) (*Dev, error) {
	bin := o.Binary
	if bin == "" {
		var err error
		if bin, err = Binary(); err != nil {
			return nil, err
		}
	}
	timeout := o.StartTimeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "assent-dev-")
	if err != nil {
		return nil, err
	}
	d := &Dev{Binary: bin, DataDir: dir, exited: make(chan struct{})}
	if err := d.start(ctx, o.Env); err != nil {
		log := d.Log()
		_ = d.Stop()
		return nil, fmt.Errorf("start assent dev: %w\n%s", err, log)
	}
	return d, nil
}

func (d *Dev) start(ctx context.Context, extra []string) error {
	logFile, err := os.Create(filepath.Join(d.DataDir, "assent.log"))
	if err != nil {
		return err
	}
	defer logFile.Close() // the process holds its own copy
	d.cmd = exec.Command(d.Binary, "dev", "--data-dir", d.DataDir, "--http-addr", "127.0.0.1:0",
		"--temporal-port", "0", "--temporal-ui-port", "-1", "--log-level", "warn")
	d.cmd.Env = append(append(testEnv(), "ASSENT_DEV_ALLOW_LOOPBACK=1", "ASSENT_DEV_RETRY_UNIT=1s"), extra...)
	d.cmd.Stderr = logFile
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := d.cmd.Start(); err != nil {
		return err
	}
	go func() { d.exitErr = d.cmd.Wait(); close(d.exited) }()
	base := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if m := banner.FindStringSubmatch(lines.Text()); m != nil {
				base <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case d.BaseURL = <-base:
	case <-d.exited:
		return fmt.Errorf("it exited before printing its address: %v", d.exitErr)
	case <-ctx.Done():
		return errors.New("it printed no address in time")
	}
	if err := d.waitReady(ctx); err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(d.DataDir, "bootstrap.json"))
	if err != nil {
		return err
	}
	printed := d.BaseURL
	if err := json.Unmarshal(raw, d); err != nil {
		return fmt.Errorf("bootstrap.json: %w", err)
	}
	d.BaseURL = strings.TrimRight(cmp.Or(d.BaseURL, printed), "/")
	return nil
}

// testEnv is the caller's environment without its ASSENT_* settings.
func testEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASSENT_") {
			out = append(out, kv)
		}
	}
	return out
}

func (d *Dev) waitReady(ctx context.Context) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, d.BaseURL+"/readyz", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never became ready", d.BaseURL)
		case <-d.exited:
			return fmt.Errorf("it exited before it was ready: %v", d.exitErr)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Member returns the first demo person with the role (owner, admin or
// member) or the email.
func (d *Dev) Member(roleOrEmail string) (Member, bool) {
	for _, m := range d.Members {
		if m.Role == roleOrEmail || m.Email == roleOrEmail {
			return m, true
		}
	}
	return Member{}, false
}

// Log is the end of what the server wrote on standard error.
func (d *Dev) Log() string {
	raw, _ := os.ReadFile(filepath.Join(d.DataDir, "assent.log"))
	return string(raw[max(0, len(raw)-20000):])
}

// Stop stops the server (a signal to end, then a kill after 30 s) and
// removes its data folder, unless ASSENT_SDK_KEEP_DATA=1.
func (d *Dev) Stop() error {
	if d.cmd != nil && d.cmd.Process != nil {
		if d.cmd.Process.Signal(syscall.SIGTERM) != nil {
			_ = d.cmd.Process.Kill() // exited already, or no signals here
		}
		select {
		case <-d.exited:
		case <-time.After(30 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
	}
	if os.Getenv("ASSENT_SDK_KEEP_DATA") == "1" {
		return nil
	}
	return os.RemoveAll(d.DataDir)
}
