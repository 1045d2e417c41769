package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/outbound"
	"github.com/assent-hq/assent/internal/wire"
	"github.com/assent-hq/assent/models"
)

// RotationOverlap is how long an old signing secret keeps signing after a
// rotation, so receivers can switch without missing a delivery.
const RotationOverlap = 24 * time.Hour

type webhookRequest struct {
	URL     *string   `json:"url" validate:"omitempty,max=2048"`
	Format  *string   `json:"format" validate:"omitempty,oneof=json slack teams"`
	Events  *[]string `json:"events" validate:"omitempty,max=100"`
	Enabled *bool     `json:"enabled"`
}

// check refuses an address the policy forbids and an unknown event kind.
func (h *handlers) checkWebhook(ctx context.Context, in *webhookRequest) error {
	if in.URL != nil {
		if err := h.netPolicy.CheckURL(ctx, *in.URL); err != nil {
			return apperr.Field(apperr.InvalidRequest, "url", "url is refused: %v", err)
		}
	}
	if in.Events != nil {
		for i, k := range *in.Events {
			if !events.Valid(k) {
				return apperr.Field(apperr.InvalidRequest, fmt.Sprintf("events[%d]", i), "unknown event %q", k)
			}
		}
	}
	return nil
}

func (h *handlers) createWebhook(c *gin.Context) {
	var in webhookRequest
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	if in.URL == nil {
		fail(c, apperr.Field(apperr.InvalidRequest, "url", "url is required"))
		return
	}
	if err := h.checkWebhook(c.Request.Context(), &in); err != nil {
		fail(c, err)
		return
	}
	n := models.NewWebhookEndpoint{URL: *in.URL, Format: models.FormatJSON, Enabled: true, Secret: newSecret("whsec_")}
	if in.Format != nil {
		n.Format = *in.Format
	}
	if in.Events != nil {
		n.Events = *in.Events
	}
	if in.Enabled != nil {
		n.Enabled = *in.Enabled
	}
	ep, err := h.store.CreateWebhookEndpoint(c.Request.Context(), orgID(c), n)
	if err != nil {
		fail(c, err)
		return
	}
	out := wire.NewWebhookEndpoint(ep)
	out.Secret = &ep.Secret
	c.JSON(http.StatusCreated, out)
}

func (h *handlers) listWebhooks(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	rows, next, err := h.store.ListWebhookEndpoints(c.Request.Context(), orgID(c), p)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, newList(rows, next, wire.NewWebhookEndpoint))
}

func (h *handlers) getWebhook(c *gin.Context) {
	ep, err := h.store.GetWebhookEndpoint(c.Request.Context(), orgID(c), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewWebhookEndpoint(ep))
}

func (h *handlers) updateWebhook(c *gin.Context) {
	var in webhookRequest
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	if err := h.checkWebhook(c.Request.Context(), &in); err != nil {
		fail(c, err)
		return
	}
	ep, err := h.store.UpdateWebhookEndpoint(c.Request.Context(), orgID(c), c.Param("id"),
		models.WebhookEndpointPatch{URL: in.URL, Format: in.Format, Events: in.Events, Enabled: in.Enabled})
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewWebhookEndpoint(ep))
}

func (h *handlers) deleteWebhook(c *gin.Context) {
	if err := h.store.DeleteWebhookEndpoint(c.Request.Context(), orgID(c), c.Param("id")); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *handlers) rotateWebhookSecret(c *gin.Context) {
	ep, err := h.store.RotateWebhookSecret(c.Request.Context(), orgID(c), c.Param("id"), newSecret("whsec_"), models.Now().Add(RotationOverlap))
	if err != nil {
		fail(c, err)
		return
	}
	out := wire.NewWebhookEndpoint(ep)
	out.Secret = &ep.Secret
	c.JSON(http.StatusOK, out)
}

type webhookTestResult struct {
	StatusCode int    `json:"statusCode"`
	LatencyMS  int64  `json:"latencyMs"`
	Delivered  bool   `json:"delivered"`
	Error      string `json:"error,omitempty"`
}

// testWebhook posts a test event at once, signed like any delivery. It is
// not retried, not logged as a delivery and never counts toward switch-off;
// the receiver's body is not returned.
func (h *handlers) testWebhook(c *gin.Context) {
	ctx := c.Request.Context()
	ep, err := h.store.GetWebhookEndpoint(ctx, orgID(c), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	kind := events.ApprovalRequested
	if len(ep.Events) > 0 {
		kind = ep.Events[0]
	}
	now := models.Now()
	body, err := events.NewWebhookBody(kind, map[string]any{"message": "A test delivery from Assent.", "url": h.baseURL}, now)
	if err != nil {
		fail(c, err)
		return
	}
	body.Test = true
	raw, err := events.EncodeWebhook(ep.Format, body)
	if err != nil {
		fail(c, apperr.New(apperr.InvalidState, "%v", err))
		return
	}
	headers := events.DeliveryHeaders(kind, "test_"+ep.ID, 1, now, raw, ep.Secrets(now)...)
	o := outbound.Post(ctx, h.outbound, ep.URL, raw, headers)
	out := webhookTestResult{StatusCode: o.StatusCode, LatencyMS: o.Latency.Milliseconds(), Delivered: o.Err == nil}
	if o.Err != nil {
		out.Error = o.Err.Error()
	}
	c.JSON(http.StatusOK, out)
}
