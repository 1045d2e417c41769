package validate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * 24 * time.Hour:     "30 days",
		24 * time.Hour:          "1 day",
		36 * time.Hour:          "36 hours",
		time.Hour:               "1 hour",
		90 * time.Minute:        "90 minutes",
		time.Minute:             "1 minute",
		90 * time.Second:        "90 seconds",
		0:                       "0 seconds",
		1500 * time.Millisecond: "1 second",
	} {
		assert.Equal(t, want, Duration(d), "%v", d)
	}
}
