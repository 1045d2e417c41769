package crashtest

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assent-hq/assent/internal/events"
)

// receipt is one delivery attempt the receiver got.
type receipt struct {
	target   string // webhook or callback
	kind     string
	subject  string // the request's id, or report id/version id
	delivery string
	attempt  int
}

// receiver is the agent's webhook and callback receiver, on loopback.
type receiver struct {
	srv *httptest.Server
	// failFirst is the percentage of deliveries whose first attempt it
	// answers 503, chosen by delivery id, so retries are part of the load.
	failFirst uint32
	// failUntil, when set (Unix nanoseconds), is when it stops failing
	// first attempts: the soak's last retries then end with its load.
	failUntil atomic.Int64
	// wait is how long the check waits for every owed event: past the
	// first retry of the service's schedule.
	wait     time.Duration
	mu       sync.Mutex
	receipts []receipt
}

func newReceiver(t *testing.T, failFirst uint32, wait time.Duration) *receiver {
	r := &receiver{failFirst: failFirst, wait: wait}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var body struct {
		RequestID string `json:"requestId"`
		Data      struct {
			ID string `json:"id"`
			// A report event's version, an object; a review's is its
			// number.
			Version json.RawMessage `json:"version"`
			// report.shared: the report and the grants a send added.
			Report struct {
				ID string `json:"id"`
			} `json:"report"`
			Added []struct {
				Name string `json:"name"`
			} `json:"added"`
		} `json:"data"`
	}
	_ = json.Unmarshal(b, &body)
	rc := receipt{target: "webhook", kind: req.Header.Get(events.HeaderEvent), subject: body.Data.ID,
		delivery: req.Header.Get(events.HeaderDelivery)}
	rc.attempt, _ = strconv.Atoi(req.Header.Get(events.HeaderAttempt))
	if until := r.failUntil.Load(); rc.attempt == 1 && r.failFirst > 0 && (until == 0 || time.Now().UnixNano() < until) {
		h := fnv.New32a()
		h.Write([]byte(rc.delivery))
		if h.Sum32()%100 < r.failFirst {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
	}
	var version struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(body.Data.Version, &version) == nil && version.ID != "" {
		// A report's events are per version.
		rc.subject += "/" + version.ID
	}
	if body.Data.Report.ID != "" && len(body.Data.Added) > 0 {
		rc.subject = body.Data.Report.ID + "/shared/" + body.Data.Added[0].Name
	}
	if req.URL.Path == "/callback" {
		rc.target, rc.subject = "callback", body.RequestID
	}
	r.mu.Lock()
	r.receipts = append(r.receipts, rc)
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// deliveries maps target, subject and kind to the delivery ids received.
func (r *receiver) deliveries() map[[3]string]map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[[3]string]map[string]bool{}
	for _, rc := range r.receipts {
		k := [3]string{rc.target, rc.subject, rc.kind}
		if out[k] == nil {
			out[k] = map[string]bool{}
		}
		out[k][rc.delivery] = true
	}
	return out
}

// forget drops the receipts of deliveries known reports false for (those a
// restored database does not hold), and says how many it dropped.
func (r *receiver) forget(known func(delivery string) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.receipts[:0]
	for _, rc := range r.receipts {
		if known(rc.delivery) {
			kept = append(kept, rc)
		}
	}
	dropped := len(r.receipts) - len(kept)
	r.receipts = kept
	return dropped
}
