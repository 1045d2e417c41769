package cluster

import (
	"math/rand/v2"
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With a base port, processes get ports from it upwards, skipping those
// taken by the cluster, given by name or in use on the machine.
func TestPortsFromABase(t *testing.T) {
	base, busy := freeRun(t, 4)
	defer busy.Close()
	c := &Cluster{opts: Options{BasePort: base, Ports: map[string]int{Proxy: base + 2}}, state: State{Ports: map[string]int{}}}
	assert.Equal(t, base+1, c.port(Postgres), "the base itself is in use")
	assert.Equal(t, base+2, c.port(Proxy), "a port given by name")
	assert.Equal(t, base+3, c.port(TemporalFrontend), "neither taken nor given")
	assert.Equal(t, base+1, c.port(Postgres), "kept once picked")
	assert.Equal(t, "127.0.0.1:"+strconv.Itoa(base+3), c.addr(TemporalFrontend))
}

// freeRun finds n consecutive free ports below the kernel's ephemeral
// range, where other tests' listeners on port 0 cannot land between the
// check and the test, and keeps the first one listening.
func freeRun(t *testing.T, n int) (int, net.Listener) {
	for range 100 {
		base := 20000 + rand.IntN(10000)
		var held []net.Listener
		for p := base; p < base+n; p++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				break
			}
			held = append(held, l)
		}
		if len(held) == n {
			for _, l := range held[1:] {
				_ = l.Close()
			}
			return base, held[0]
		}
		for _, l := range held {
			_ = l.Close()
		}
	}
	require.FailNow(t, "no run of free ports below 30004")
	return 0, nil
}
