package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/webhooks"
	"github.com/assent-hq/assent/wire"
)

// listDeliveries is an endpoint's delivery log, newest first.
func (h *handlers) listDeliveries(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	// The service refuses an unknown status, naming the field.
	f := webhooks.DeliveryFilter{EndpointID: c.Param("id"), Status: c.Query("status")}
	rows, next, err := h.webhooks.Deliveries(c.Request.Context(), OrgID(c), f, p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewDelivery))
}

func (h *handlers) getDelivery(c *gin.Context) {
	d, err := h.webhooks.Delivery(c.Request.Context(), OrgID(c), c.Param("id"))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewDelivery(d))
}

// resendDelivery sends a settled delivery again under the same delivery
// id, with a fresh schedule of attempts. The dispatcher starts it.
func (h *handlers) resendDelivery(c *gin.Context) {
	d, err := h.webhooks.Resend(c.Request.Context(), OrgID(c), c.Param("id"))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, wire.NewDelivery(d))
}

type recoverRequest struct {
	Since string `json:"since" validate:"required"`
}

type recoverResponse struct {
	Recovered int64 `json:"recovered"`
}

// recoverDeliveries sends again every failed or skipped delivery to an
// endpoint since a time, such as the start of an outage.
func (h *handlers) recoverDeliveries(c *gin.Context) {
	var in recoverRequest
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	since, err := time.Parse(time.RFC3339Nano, in.Since)
	if err != nil {
		Fail(c, apperr.Field(apperr.InvalidRequest, "since", "since must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"))
		return
	}
	// The service refuses a since in the future.
	n, err := h.webhooks.Recover(c.Request.Context(), OrgID(c), c.Param("id"), since)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, recoverResponse{Recovered: n})
}
