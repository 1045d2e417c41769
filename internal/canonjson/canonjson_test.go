package canonjson

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonical(t *testing.T) {
	got, err := Canonical([]byte(`{ "b": 12345678901234567890, "a": ["<x> & y", null, 1.50], "c": {"z": true, "y": "\u2028"} }`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":["<x> & y",null,1.50],"b":12345678901234567890,"c":{"y":"\u2028","z":true}}`, string(got))
	m, err := Marshal(map[string]any{"z": 1, "a": "<b>"})
	require.NoError(t, err)
	assert.Equal(t, `{"a":"<b>","z":1}`, string(m))
}
