package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// receiver takes the backlog's webhook deliveries and callbacks, counting
// them: the deliveries the fill makes are real work for the workers.
type receiver struct {
	addr      string
	srv       *http.Server
	webhooks  atomic.Int64
	callbacks atomic.Int64
	// arrived holds when each callback path was first received.
	arrived sync.Map
}

// startReceiver listens on addr (a previous run's, so the webhook's
// address holds), or on a free port.
func startReceiver(addr string) (*receiver, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, err
	}
	r := &receiver{addr: ln.Addr().String()}
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		if strings.HasPrefix(req.URL.Path, "/callback") {
			r.callbacks.Add(1)
			r.arrived.LoadOrStore(req.URL.Path, time.Now())
		} else {
			r.webhooks.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() {
		if err := r.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return r, nil
}

func (r *receiver) url(path string) string { return "http://" + r.addr + path }

func (r *receiver) close() { _ = r.srv.Close() }
