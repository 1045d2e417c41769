package ids

import (
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
