// Package ratelimit limits how often one key (such as a client address)
// may do something, with a token bucket per key kept in memory, and how
// many things one key and all keys may have running at once (Slots). Each
// process keeps its own counts: behind a load balancer the limits apply
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

// Slots bounds how many of something run at once (long-polls, say): per
// key, and in all. Unlike Keyed it counts what is running, not how often
// it started.
type Slots struct {
	// PerKey and Total are the caps.
	PerKey, Total int

	mu    sync.Mutex
	total int
	byKey map[string]int
}

// NewSlots allows perKey at once for each key and total in all.
func NewSlots(perKey, total int) *Slots {
	return &Slots{PerKey: perKey, Total: total, byKey: map[string]int{}}
}

// Full says which cap refused a slot.
type Full int

const (
	// NotFull: the slot was taken.
	NotFull Full = iota
	// KeyFull: the key holds PerKey slots already.
	KeyFull
	// TotalFull: Total slots are held.
	TotalFull
)

// Take takes a slot for key and returns its release (safe to call more
// than once), or says which cap is reached.
func (s *Slots) Take(key string) (release func(), full Full) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.byKey[key] >= s.PerKey:
		return nil, KeyFull
	case s.total >= s.Total:
		return nil, TotalFull
	}
	s.byKey[key]++
	s.total++
	var once sync.Once
	return func() { once.Do(func() { s.release(key) }) }, NotFull
}

func (s *Slots) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.byKey[key]--; s.byKey[key] <= 0 {
		delete(s.byKey, key)
	}
}

// InUse is how many slots are held.
func (s *Slots) InUse() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}
