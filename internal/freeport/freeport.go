// Package freeport picks TCP ports for servers started by the process.
//
// Asking the kernel for port 0 and closing the listener hands out a port from
// the ephemeral range, which the next outgoing connection (to PostgreSQL, or
// between Temporal's own services) may take before our server binds it. Ports
// here come from below that range and are never handed out twice.
package freeport

import (
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// Below the usual Linux ephemeral range (32768–60999).
const (
	low  = 20000
	high = 32000
)

var (
	mu    sync.Mutex
	given = map[int]bool{}
)

// Pick returns a port on ip that was free when checked and that this process
// has not handed out before.
func Pick(ip string) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	for range 200 {
		p := low + rand.IntN(high-low)
		if given[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(p)))
		if err != nil {
			continue
		}
		_ = l.Close()
		given[p] = true
		return p, nil
	}
	return 0, errors.New("freeport: no free port found")
}
