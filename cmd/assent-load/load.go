package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/deploy/local/cluster"
)

// load is one run against the cluster.
type load struct {
	o    options
	c    *cluster.Cluster
	st   *state
	rcv  *receiver
	logf func(string, ...any)
	base string
	// db is the cluster's Assent database, for the drain and the plans.
	db *gorm.DB
}

var client = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// call sends one request and decodes the answer into into. A 503 or a
// broken connection is retried with the same Idempotency-Key, as the SDKs
// do; any other answer but want is an error.
func (l *load) call(ctx context.Context, method, path, key, idem string, body any, want int, into any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, l.base+path, bytes.NewReader(raw))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		resp, err := client.Do(req)
		status := 0
		var b []byte
		if err == nil {
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			status = resp.StatusCode
		}
		if (status == 0 || status == http.StatusServiceUnavailable) && attempt < 10 && ctx.Err() == nil {
			time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		if status != want {
			return fmt.Errorf("%s %s: answered %d, want %d: %s", method, path, status, want, b)
		}
		if into != nil {
			return json.Unmarshal(b, into)
		}
		return nil
	}
}

// admin runs `assent admin` against the cluster's database, as an
// operator does.
func (l *load) admin(args ...string) (map[string]any, error) {
	out, err := l.c.Admin(context.Background(), args...)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	return v, json.Unmarshal(out, &v)
}

// setup makes the organisation, its keys, its people and a webhook taking
// every event, once.
func (l *load) setup(ctx context.Context) error {
	st := l.st
	if st.Org == "" {
		org, err := l.admin("org", "create", "--name", "Load Co")
		if err != nil {
			return err
		}
		st.Org = org["id"].(string)
		k, err := l.admin("key", "create", "--org", st.Org, "--name", "load admin", "--kind", "admin")
		if err != nil {
			return err
		}
		st.AdminKey = k["key"].(string)
		k, err = l.admin("key", "create", "--org", st.Org, "--name", "load agent", "--kind", "agent",
			"--scopes", "approvals:read,approvals:write,collections:read,collections:write")
		if err != nil {
			return err
		}
		st.AgentKey = k["key"].(string)
		if err := st.save(l.o.dir); err != nil {
			return err
		}
	}
	for i := len(st.People); i < l.o.people; i++ {
		email := fmt.Sprintf("person%03d@load.example", i)
		var m struct{ ID string }
		if err := l.call(ctx, "POST", "/api/v1/admin/members", st.AdminKey, "", map[string]any{"email": email, "name": fmt.Sprintf("Person %03d", i)}, 201, &m); err != nil {
			return err
		}
		st.People = append(st.People, email)
		if i == 0 {
			t, err := l.admin("token", "create", "--org", st.Org, "--member", m.ID)
			if err != nil {
				return err
			}
			st.HotEmail, st.HotToken = email, t["token"].(string)
		}
	}
	hook := map[string]any{"url": l.rcv.url("/webhook")}
	switch {
	case st.Webhook == "":
		var w struct{ ID string }
		if err := l.call(ctx, "POST", "/api/v1/admin/webhooks", st.AdminKey, "", hook, 201, &w); err != nil {
			return err
		}
		st.Webhook = w.ID
	default:
		// The receiver may listen elsewhere than last run, and while no
		// run listened, the failures switched the endpoint off: on again.
		hook["enabled"] = true
		if err := l.call(ctx, "PATCH", "/api/v1/admin/webhooks/"+st.Webhook, st.AdminKey, "", hook, 200, nil); err != nil {
			return err
		}
	}
	return st.save(l.o.dir)
}

// request is the i-th request of the backlog: seven in ten approvals,
// three collections; the first person (the "hot" one) asked in one in
// ten, the others one to three people at random; expiring between two
// hours and four weeks ahead; one in ten with a callback.
func (l *load) request(i int, rnd *rand.Rand) (path string, body map[string]any) {
	var asked []string
	if i%10 == 0 {
		asked = append(asked, l.st.People[0])
	}
	for n := 1 + rnd.IntN(3); len(asked) < n; {
		p := l.st.People[1+rnd.IntN(len(l.st.People)-1)]
		if !strings.Contains(strings.Join(asked, ","), p) {
			asked = append(asked, p)
		}
	}
	expires := time.Now().Add(2*time.Hour + time.Duration(rnd.Int64N(int64(28*24*time.Hour-2*time.Hour)))).UTC().Format(time.RFC3339)
	body = map[string]any{"title": fmt.Sprintf("Load request %d", i), "expiresAt": expires}
	if i%10 == 3 {
		body["callbackUrl"] = l.rcv.url(fmt.Sprintf("/callback/%d", i))
	}
	// i%10 == 0 alternates kinds, so the hot person is asked in both.
	if k := i % 10; k >= 7 || (k == 0 && i%20 == 10) {
		body["questions"] = []map[string]any{{"id": "why", "prompt": "Why is it needed?", "kind": "text"}, {"id": "amount", "prompt": "How much?", "kind": "number"}}
		body["respondents"] = asked
		return "/api/v1/collections", body
	}
	body["approvers"] = asked
	body["input"] = map[string]any{"invoice": fmt.Sprintf("INV-%06d", i), "amount": rnd.IntN(100000)}
	body["risk"] = []string{"low", "medium", "high"}[rnd.IntN(3)]
	return "/api/v1/approvals", body
}

// fill creates requests until `to` exist, fillClients at a time, saving
// the count as it goes.
func (l *load) fill(ctx context.Context, to int) error {
	st := l.st
	if st.Filled >= to {
		return nil
	}
	l.logf("filling from %d to %d requests, %d clients", st.Filled, to, l.o.fillClients)
	st.FillClients = l.o.fillClients
	start := time.Now()
	run := start.UnixNano()
	next := atomic.Int64{}
	next.Store(int64(st.Filled))
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < l.o.fillClients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for {
				i := int(next.Add(1) - 1)
				if i >= to || ctx.Err() != nil || (!l.o.fillUntil.IsZero() && time.Now().After(l.o.fillUntil)) {
					return
				}
				path, body := l.request(i, rnd)
				var created struct{ ID string }
				// The key holds for this run's retries; a request cut off
				// by an earlier run's end is made afresh.
				err := l.call(ctx, "POST", path, st.AgentKey, fmt.Sprintf("load-%d-%d", i, run), body, 201, &created)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
						next.Store(int64(to))
					}
				} else {
					if strings.HasSuffix(path, "approvals") {
						st.Approvals = append(st.Approvals, created.ID)
					} else {
						st.Collections = append(st.Collections, created.ID)
					}
					st.Filled++
					if st.Filled%2000 == 0 {
						st.FillSeconds += time.Since(start).Seconds()
						start = time.Now()
						l.logf("%d requests (%.0f/s so far)", st.Filled, float64(st.Filled)/st.FillSeconds)
						if err := st.save(l.o.dir); err != nil && firstErr == nil {
							firstErr = err
						}
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	st.FillSeconds += time.Since(start).Seconds()
	if err := st.save(l.o.dir); err != nil {
		return err
	}
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
