package cluster

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With a base port, processes get ports from it upwards, skipping those
// taken by the cluster, given by name or in use on the machine.
func TestPortsFromABase(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	base := busy.Addr().(*net.TCPAddr).Port
	c := &Cluster{opts: Options{BasePort: base, Ports: map[string]int{Proxy: base + 2}}, state: State{Ports: map[string]int{}}}
	assert.Equal(t, base+1, c.port(Postgres), "the base itself is in use")
	assert.Equal(t, base+2, c.port(Proxy), "a port given by name")
	assert.Equal(t, base+3, c.port(TemporalFrontend), "neither taken nor given")
	assert.Equal(t, base+1, c.port(Postgres), "kept once picked")
	assert.Equal(t, "127.0.0.1:"+strconv.Itoa(base+3), c.addr(TemporalFrontend))
}
