package assent

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// answer is one scripted reply; hangUp drops the connection instead.
type answer struct {
	status     int
	retryAfter string
	body       string
	hangUp     bool
}

// scripted serves the answers in order (the last one from then on) and
// records each request's Idempotency-Key; the client sleeps on a
// recorder instead of a clock.
type scripted struct {
	mu      sync.Mutex
	answers []answer
	keys    []string
	sleeps  []time.Duration
	client  *Client
}

func newScripted(t *testing.T, answers ...answer) *scripted {
	s := &scripted{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
		a := s.answers[min(len(s.keys), len(s.answers))-1]
		s.mu.Unlock()
		if a.hangUp {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		if a.retryAfter != "" {
			w.Header().Set("Retry-After", a.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		body := a.body
		if body == "" && a.status >= 400 {
			body = `{"error":{"code":"scripted","message":"scripted"}}`
		}
		if body == "" {
			body = `{"id":"apr_1","status":"pending"}`
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	s.client = New(srv.URL, "k", WithRetries(4))
	s.client.now = func() time.Time { return time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC) }
	s.client.sleep = func(_ context.Context, d time.Duration) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.sleeps = append(s.sleeps, d)
		return nil
	}
	return s
}

func (s *scripted) create() error {
	_, err := s.client.Approvals.Create(context.Background(), &ApprovalCreate{Title: "t"})
	return err
}

// oneKey fails unless every request carried the same, non-empty key.
func (s *scripted) oneKey(t *testing.T, requests int) {
	t.Helper()
	if len(s.keys) != requests {
		t.Fatalf("want %d requests, got %d", requests, len(s.keys))
	}
	for _, k := range s.keys {
		if k == "" || k != s.keys[0] {
			t.Fatalf("the retries changed the Idempotency-Key: %q", s.keys)
		}
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	s := newScripted(t, answer{status: 429, retryAfter: "7"}, answer{status: 201})
	if err := s.create(); err != nil {
		t.Fatal(err)
	}
	s.oneKey(t, 2)
	if len(s.sleeps) != 1 || s.sleeps[0] != 7*time.Second {
		t.Fatalf("want one 7 s wait, got %v", s.sleeps)
	}
}

func TestRetryAfterDate(t *testing.T) {
	s := newScripted(t)
	at := s.client.now().Add(30 * time.Second).Format(http.TimeFormat)
	s.answers = []answer{{status: 503, retryAfter: at}, {status: 201}}
	if err := s.create(); err != nil {
		t.Fatal(err)
	}
	s.oneKey(t, 2)
	if len(s.sleeps) != 1 || s.sleeps[0] != 30*time.Second {
		t.Fatalf("want one 30 s wait, got %v", s.sleeps)
	}
}

func TestRetryAfterCappedAndPast(t *testing.T) {
	s := newScripted(t)
	past := s.client.now().Add(-time.Hour).Format(http.TimeFormat)
	s.answers = []answer{{status: 429, retryAfter: "3600"}, {status: 429, retryAfter: past}, {status: 201}}
	if err := s.create(); err != nil {
		t.Fatal(err)
	}
	s.oneKey(t, 3)
	if len(s.sleeps) != 2 || s.sleeps[0] != time.Minute || s.sleeps[1] != 0 {
		t.Fatalf("want a minute then nothing, got %v", s.sleeps)
	}
}

func TestRetried5xxAnd429UnderOneKey(t *testing.T) {
	s := newScripted(t, answer{status: 500}, answer{status: 502}, answer{status: 503}, answer{status: 429}, answer{status: 201})
	if err := s.create(); err != nil {
		t.Fatal(err)
	}
	s.oneKey(t, 5)
}

func TestRetriedIdempotencyInProgress(t *testing.T) {
	s := newScripted(t, answer{status: 409, body: `{"error":{"code":"idempotency_in_progress","message":"busy"}}`}, answer{status: 201})
	if err := s.create(); err != nil {
		t.Fatal(err)
	}
	s.oneKey(t, 2)
}

func TestOther4xxNeverRetried(t *testing.T) {
	for _, a := range []answer{
		{status: 400, body: `{"error":{"code":"invalid_request","message":"m","field":"title"}}`},
		{status: 401}, {status: 403}, {status: 404}, {status: 413}, {status: 415}, {status: 422},
		{status: 409, body: `{"error":{"code":"version_conflict","message":"m"}}`},
		{status: 400, retryAfter: "1"},
	} {
		s := newScripted(t, a, answer{status: 201})
		err := s.create()
		var e *Error
		if !errors.As(err, &e) || e.Status != a.status {
			t.Fatalf("%d: want the refusal, got %v", a.status, err)
		}
		if len(s.keys) != 1 || len(s.sleeps) != 0 {
			t.Fatalf("%d was retried: %d requests", a.status, len(s.keys))
		}
	}
}

func TestNetworkErrorRetried(t *testing.T) {
	s := newScripted(t, answer{hangUp: true}, answer{hangUp: true}, answer{status: 201})
	if err := s.create(); err != nil {
		t.Fatal(err)
	}
	s.oneKey(t, 3)

	down := newScripted(t, answer{hangUp: true})
	err := down.create()
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeNetworkError || e.Status != 0 {
		t.Fatalf("want a network_error after the retries, got %v", err)
	}
	down.oneKey(t, 5)
}

func TestBackoffBounded(t *testing.T) {
	s := newScripted(t, answer{status: 500})
	s.client.maxRetries = 12
	err := s.create()
	var e *Error
	if !errors.As(err, &e) || e.Status != 500 {
		t.Fatalf("want the last 500, got %v", err)
	}
	s.oneKey(t, 13)
	if len(s.sleeps) != 12 {
		t.Fatalf("want 12 waits, got %v", s.sleeps)
	}
	for i, d := range s.sleeps {
		ceiling := min(500*time.Millisecond<<i, 8*time.Second)
		if d < 0 || d > ceiling {
			t.Fatalf("wait %d is %v, beyond [0, %v]", i, d, ceiling)
		}
	}
	// Full jitter: the capped waits are not all the cap.
	var capped int
	for _, d := range s.sleeps[5:] {
		if d == 8*time.Second {
			capped++
		}
	}
	if capped == len(s.sleeps[5:]) {
		t.Fatalf("no jitter: %v", s.sleeps)
	}
}

func TestCallersKeyKeptAndGetHasNone(t *testing.T) {
	s := newScripted(t, answer{status: 503}, answer{status: 201})
	if _, err := s.client.Approvals.Create(context.Background(), &ApprovalCreate{Title: "t"}, WithIdempotencyKey("mine")); err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.keys, ",") != "mine,mine" {
		t.Fatalf("want the caller's key twice, got %q", s.keys)
	}
	g := newScripted(t, answer{status: 502}, answer{status: 200})
	if _, err := g.client.Approvals.Get(context.Background(), "apr_1"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(g.keys, ",") != "," {
		t.Fatalf("a GET carries no Idempotency-Key but was retried: %q", g.keys)
	}
}
