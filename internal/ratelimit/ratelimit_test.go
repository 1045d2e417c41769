package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestKeyedAllowsABurstThenOneEachInterval(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	k := New(30*time.Second, 3)
	k.now = func() time.Time { return now }

	for i := range 3 {
		ok, _ := k.Allow("10.0.0.1")
		assert.True(t, ok, "action %d of the burst", i+1)
	}
	ok, wait := k.Allow("10.0.0.1")
	assert.False(t, ok)
	assert.Equal(t, 30*time.Second, wait)
	ok, _ = k.Allow("10.0.0.2")
	assert.True(t, ok, "another key has its own bucket")

	// A refusal takes nothing: after the interval exactly one more.
	now = now.Add(30 * time.Second)
	ok, _ = k.Allow("10.0.0.1")
	assert.True(t, ok)
	ok, wait = k.Allow("10.0.0.1")
	assert.False(t, ok)
	assert.Equal(t, 30*time.Second, wait)
}

func TestKeyedForgetsRefilledBuckets(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	k := New(time.Second, 2)
	k.now = func() time.Time { return now }
	k.Allow("a")
	k.Allow("b")
	assert.Equal(t, 2, k.Len())
	now = now.Add(time.Minute)
	k.Allow("c")
	assert.Equal(t, 1, k.Len(), "a and b have refilled and are dropped")
}

// TestClientKeyCountsIPv6ByItsSlash64: the addresses of one /64 share one
// bucket; IPv4 addresses, also written as IPv4-mapped IPv6, count alone.
func TestClientKeyCountsIPv6ByItsSlash64(t *testing.T) {
	assert.Equal(t, "2001:db8:1:2::/64", ClientKey("2001:db8:1:2::1"))
	assert.Equal(t, ClientKey("2001:db8:1:2::1"), ClientKey("2001:db8:1:2:ffff:ffff:ffff:ffff"))
	assert.NotEqual(t, ClientKey("2001:db8:1:2::1"), ClientKey("2001:db8:1:3::1"))
	assert.Equal(t, "192.0.2.7", ClientKey("192.0.2.7"))
	assert.Equal(t, "192.0.2.7", ClientKey("::ffff:192.0.2.7"))

	k := New(time.Hour, 2)
	for i := range 2 {
		ok, _ := k.Allow(ClientKey(fmt.Sprintf("2001:db8::%x", i+1)))
		assert.True(t, ok)
	}
	ok, _ := k.Allow(ClientKey("2001:db8::ffff"))
	assert.False(t, ok, "a third address of the same /64 shares the bucket")
}

func TestSlotsCapEachKeyAndTheTotal(t *testing.T) {
	s := NewSlots(2, 3)
	a1, full := s.Take("a")
	assert.Equal(t, NotFull, full)
	a2, _ := s.Take("a")
	_, full = s.Take("a")
	assert.Equal(t, KeyFull, full, "a holds two")
	b1, full := s.Take("b")
	assert.Equal(t, NotFull, full, "another key is not held back by a's")
	_, full = s.Take("c")
	assert.Equal(t, TotalFull, full, "three in all")
	assert.Equal(t, 3, s.InUse())

	a1()
	a1() // a release counts once
	assert.Equal(t, 2, s.InUse())
	c1, full := s.Take("c")
	assert.Equal(t, NotFull, full)
	a2()
	b1()
	c1()
	assert.Equal(t, 0, s.InUse())
	assert.Empty(t, s.byKey, "no key is remembered once it holds nothing")
}

// Handlers take and release slots and ask for tokens at once; CI runs this
// under the race detector.
func TestConcurrentUseHoldsTheCaps(t *testing.T) {
	s := NewSlots(2, 5)
	k := New(time.Hour, 3)
	var wg sync.WaitGroup
	var mu sync.Mutex
	most, allowed := 0, 0
	for i := range 40 {
		wg.Go(func() {
			key := fmt.Sprint(i % 4)
			if ok, _ := k.Allow(key); ok {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
			release, full := s.Take(key)
			if full != NotFull {
				return
			}
			defer release()
			mu.Lock()
			most = max(most, s.InUse())
			mu.Unlock()
		})
	}
	wg.Wait()
	assert.Equal(t, 12, allowed, "a burst of three for each of four keys")
	assert.LessOrEqual(t, most, 5)
	assert.Equal(t, 0, s.InUse())
}
