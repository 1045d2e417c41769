package cluster

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDownOutlastsTheSupervisor: a process that exits on its own is
// started again, but one that `down` stops, from another shell while the
// harness that started it still runs, stays down (it once came back and
// held its port against the next start).
func TestDownOutlastsTheSupervisor(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "logs"), 0o755))
	c := &Cluster{opts: Options{Dir: dir}, procs: map[string]*process{}, exits: map[string]int{}}
	require.NoError(t, c.loadState())
	s := spec{argv: []string{"sleep", "60"}}
	first, err := c.launch(Proxy, s)
	require.NoError(t, err)
	go c.supervise(Proxy, s, first)
	current := func() *process {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.procs[Proxy]
	}
	t.Cleanup(func() { current().kill() })

	require.NoError(t, syscall.Kill(-first.cmd.Process.Pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return current() != first && current().running() }, 10*time.Second, 50*time.Millisecond,
		"started again after exiting on its own")
	assert.Equal(t, 1, c.Exits()[Proxy])

	second := current()
	stopped, err := Down(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{Proxy}, stopped)
	<-second.exited
	time.Sleep(2 * time.Second) // the supervisor waits a second before a restart
	assert.Same(t, second, current(), "left down")
	assert.False(t, groupAlive(second.cmd.Process.Pid))
	assert.Equal(t, 1, c.Exits()[Proxy])
}
