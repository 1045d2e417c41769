package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ratelimit"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/requests"
)

// approvalRoutes are what approvals serve as every kind does
// (requestRoutes).
func (h *handlers) approvalRoutes() requestRoutes[approvals.Approval, approvals.CreateInput, approvals.Wire] {
	return requestRoutes[approvals.Approval, approvals.CreateInput, approvals.Wire]{
		h: h, path: "approvals", read: scopes.ApprovalsRead, write: scopes.ApprovalsWrite, service: h.approvals,
		list: func(c *gin.Context, p requests.Page) ([]approvals.Approval, string, error) {
			f := approvals.Filter{Status: c.Query("status"), ExternalID: c.Query("externalId")}
			var err error
			if f.Executed, err = boolParam(c, "executed"); err != nil {
				return nil, "", err
			}
			return h.approvals.List(c.Request.Context(), principal(c), f, p)
		},
		serialize: approvals.NewWire, created: approvals.NewCreated,
	}
}

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
	done, full := h.longPolls.Take(principal(c).Key.ID)
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

func (h *handlers) decideApproval(c *gin.Context) {
	var in approvals.Decision
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	a, err := h.approvals.Decide(c.Request.Context(), orgID(c), c.Param("id"), claim(c).UpdateID(), principal(c), in)
	h.approvalRoutes().respond(c, a, err)
}

func (h *handlers) askQuestion(c *gin.Context) {
	var in approvals.Question
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	_, q, err := h.approvals.Ask(c.Request.Context(), orgID(c), c.Param("id"), claim(c).UpdateID(), principal(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, approvals.NewWireQuestion(q))
}

func (h *handlers) answerQuestion(c *gin.Context) {
	var in approvals.Answer
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	a, err := h.approvals.Answer(c.Request.Context(), orgID(c), c.Param("id"), claim(c).UpdateID(), principal(c), in)
	h.approvalRoutes().respond(c, a, err)
}
