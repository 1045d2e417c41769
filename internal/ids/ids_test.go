package ids

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestNewerComparesCreationAcrossKinds(t *testing.T) {
	older := New(Review)
	time.Sleep(2 * time.Millisecond)
	newer := New(Approval)
	assert.True(t, Newer(newer, older), "an approval made later is newer than a review, whatever the prefixes")
	assert.False(t, Newer(older, newer))
	assert.False(t, Newer(newer, newer), "an id is not newer than itself")
}

func TestMadeKnowsItsOwn(t *testing.T) {
	id := New(Approval)
	assert.True(t, Made(id, Approval))
	assert.False(t, Made(id, Review), "another kind's")
	assert.False(t, Made("apr_1", Approval), "not a ULID")
	assert.False(t, Made(strings.ToUpper(id[:4])+strings.ToUpper(id[4:]), Approval), "not as New writes it")
	assert.False(t, Made(id[:len(id)-1], Approval), "cut short")
	assert.False(t, Made("apr_"+strings.Repeat("z", 26), Approval), "beyond a ULID's time")
}

func TestDerivedIsTheSameForTheSameSource(t *testing.T) {
	event := New(Event)
	a := Derived(Delivery, event, "webhook", "whk_1")
	assert.Equal(t, a, Derived(Delivery, event, "webhook", "whk_1"), "made again from the same source")
	assert.True(t, Made(a, Delivery))
	assert.NotEqual(t, a, Derived(Delivery, event, "webhook", "whk_2"), "another endpoint")
	assert.NotEqual(t, a, Derived(Delivery, event, "callback"), "another target")
	assert.NotEqual(t, Derived(Delivery, event, "a", "bc"), Derived(Delivery, event, "ab", "c"), "parts are kept apart")
	assert.NotEqual(t, a, Derived(Delivery, New(Event), "webhook", "whk_1"), "another event")
	time.Sleep(2 * time.Millisecond)
	later := New(Event)
	assert.True(t, Newer(Derived(Delivery, later, "webhook"), a), "it sorts by its source's time")
}
