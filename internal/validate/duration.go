package validate

import (
	"fmt"
	"time"
)

// Duration writes d as people write it in a message: "30 days", "1 hour",
// "90 seconds", in the largest unit that holds it whole, never "720h0m0s".
// Less than a second is dropped: no limit here is that fine.
func Duration(d time.Duration) string {
	n, unit := int64(d/time.Second), "second"
	for _, u := range []struct {
		size time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}} {
		if d >= u.size && d%u.size == 0 {
			n, unit = int64(d/u.size), u.name
			break
		}
	}
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
