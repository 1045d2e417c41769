// Command receiver is a small webhook receiver for Assent: it checks each
// delivery's signature with package webhook and prints the event.
//
//	ASSENT_WEBHOOK_SECRET=whsec_… go run ./examples/receiver -addr 127.0.0.1:9000
//
// It answers 204 to a delivery it verified, so Assent records it as
// delivered, and 400 to one it did not, which Assent does not retry. A
// delivery id it has seen before (a resend) is reported, not acted on
// twice. The secret comes from the environment so it stays out of the
// process list.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/assent-hq/assent/sdk/go/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "the address to listen on")
	flag.Parse()
	secret := os.Getenv("ASSENT_WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("set ASSENT_WEBHOOK_SECRET to the endpoint's signing secret")
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s/hook\n", ln.Addr())
	srv := &http.Server{Handler: handler(secret), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}

func handler(secret string) http.Handler {
	var mu sync.Mutex
	seen := map[string]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook", func(w http.ResponseWriter, r *http.Request) {
		// The signature covers the raw bytes: read them before any decoding.
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := webhook.Verify(r.Header.Get(webhook.HeaderSignature), body, secret, time.Now(), webhook.DefaultTolerance); err != nil {
			fmt.Printf("refused a delivery: %v\n", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := r.Header.Get(webhook.HeaderDelivery)
		mu.Lock()
		again := seen[id]
		seen[id] = true
		mu.Unlock()
		note := ""
		if again {
			note = " (seen before: a resend, not acted on again)"
		}
		fmt.Printf("verified %s delivery %s attempt %s%s: %s\n", r.Header.Get(webhook.HeaderEvent), id,
			r.Header.Get(webhook.HeaderAttempt), note, body)
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}
