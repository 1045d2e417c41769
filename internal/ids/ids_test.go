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
