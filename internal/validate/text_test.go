package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/apperr"
)

func TestText(t *testing.T) {
	assert.NoError(t, Text("title", "Pay the invoice ✓"))
	for _, s := range []string{"a\x00b", "\x00", "bad \xff byte"} {
		e, ok := apperr.As(Text("title", s))
		require.True(t, ok, "%q", s)
		assert.Equal(t, apperr.InvalidRequest, e.Code)
		assert.Equal(t, "title", e.Field)
	}
}
