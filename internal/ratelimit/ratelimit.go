// Package ratelimit limits how often one key (such as a client address)
// may do something, with a token bucket per key kept in memory. Each
// process keeps its own buckets: behind a load balancer the limit applies
// per instance.
package ratelimit

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Keyed is a token bucket per key. Buckets idle long enough to be full
// again are dropped, so memory follows the keys seen recently.
type Keyed struct {
	every time.Duration
	burst int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	swept   time.Time
}

// New allows each key burst actions at once and one more every every.
func New(every time.Duration, burst int) *Keyed {
	return &Keyed{every: every, burst: burst, now: time.Now, buckets: map[string]*rate.Limiter{}}
}

// Allow takes one action for key. When the bucket is empty it refuses and
// says how long until the next action is allowed.
func (k *Keyed) Allow(key string) (ok bool, retryAfter time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	k.sweep(now)
	b := k.buckets[key]
	if b == nil {
		b = rate.NewLimiter(rate.Every(k.every), k.burst)
		k.buckets[key] = b
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep drops the buckets that have refilled, at most once per refill
// time, so Allow stays cheap.
func (k *Keyed) sweep(now time.Time) {
	full := k.every * time.Duration(k.burst)
	if now.Sub(k.swept) < full {
		return
	}
	k.swept = now
	for key, b := range k.buckets {
		if b.TokensAt(now) >= float64(k.burst) {
			delete(k.buckets, key)
		}
	}
}

// Len is how many keys have a bucket, for tests.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.buckets)
}

// ClientKey is the key a client address counts under: an IPv4 address on
// its own, an IPv6 address by its /64, since one client (one home, one
// cloud instance) is usually handed a whole /64 and could otherwise take
// a fresh address for every try.
func ClientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
