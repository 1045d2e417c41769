package wiretime

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSixDigitsInUTC(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	cases := map[string]time.Time{
		"2026-01-02T15:04:05.123456Z": time.Date(2026, 1, 2, 16, 4, 5, 123456789, cet), // truncated, not rounded
		"2026-01-02T15:04:05.000000Z": time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC),    // zeros kept
		"2026-01-02T15:04:05.100000Z": time.Date(2026, 1, 2, 15, 4, 5, 100000000, time.UTC),
	}
	for want, in := range cases {
		b, err := json.Marshal(New(in))
		require.NoError(t, err)
		assert.Equal(t, `"`+want+`"`, string(b))
	}
	var absent *time.Time
	b, err := json.Marshal(struct {
		At *Time `json:"at"`
	}{Ptr(absent)})
	require.NoError(t, err)
	assert.Equal(t, `{"at":null}`, string(b))
}

func TestRoundTrip(t *testing.T) {
	var got Time
	require.NoError(t, json.Unmarshal([]byte(`"2026-01-02T16:04:05.123456789+01:00"`), &got))
	assert.Equal(t, "2026-01-02T15:04:05.123456Z", got.String())
	assert.Equal(t, New(time.Date(2026, 1, 2, 15, 4, 5, 123456000, time.UTC)), got)
	assert.Error(t, json.Unmarshal([]byte(`"yesterday"`), &got))
}
