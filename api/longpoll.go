package api

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ratelimit"
)

// longPollRetry is the Retry-After of a long-poll refused for a cap:
// slots free as other waits end, each within requests.MaxWait.
const longPollRetry = 5 * time.Second

// longPoll reads ?wait= and, for a wait, takes one of the caller's
// long-poll slots, refused with rate_limited (naming the cap) when the
// key or the process holds all it may; done gives the slot back.
func (h *handlers) longPoll(c *gin.Context) (wait time.Duration, done func(), err error) {
	if wait, err = waitParam(c.Query("wait")); err != nil || wait <= 0 {
		return wait, func() {}, err
	}
	done, full := h.longPolls.Take(Principal(c).Key.ID)
	switch full {
	case ratelimit.KeyFull:
		err = apperr.Field(apperr.RateLimited, "wait", "this key already holds %d long-polls (wait) open, the most one key may (ASSENT_LONG_POLLS_PER_KEY); retry when one returns, or read without wait",
			h.longPolls.PerKey)
	case ratelimit.TotalFull:
		err = apperr.Field(apperr.RateLimited, "wait", "this server already holds %d long-polls (wait) open, the most it serves at once (ASSENT_LONG_POLLS); retry shortly, or read without wait",
			h.longPolls.Total)
	}
	if err != nil {
		c.Header("Retry-After", strconv.Itoa(int(longPollRetry.Seconds())))
		return 0, nil, err
	}
	return wait, done, nil
}

// waitParam reads ?wait= as a duration ("30s") or whole seconds ("30");
// the service bounds it.
func waitParam(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, apperr.Field(apperr.InvalidRequest, "wait", "wait must be a duration such as 30s")
	}
	return d, nil
}
