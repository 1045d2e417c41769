package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/webhooks"
	"github.com/assent-hq/assent/wire"
)

func (h *handlers) createWebhook(c *gin.Context) {
	var in webhooks.Settings
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	ep, err := h.webhooks.Create(c.Request.Context(), OrgID(c), in)
	if err != nil {
		Fail(c, err)
		return
	}
	out := wire.NewWebhookEndpoint(ep)
	out.Secret = &ep.Secret
	c.JSON(http.StatusCreated, out)
}

func (h *handlers) listWebhooks(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	rows, next, err := h.webhooks.Endpoints(c.Request.Context(), OrgID(c), p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewWebhookEndpoint))
}

func (h *handlers) getWebhook(c *gin.Context) {
	ep, err := h.webhooks.Endpoint(c.Request.Context(), OrgID(c), c.Param("id"))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewWebhookEndpoint(ep))
}

func (h *handlers) updateWebhook(c *gin.Context) {
	var in webhooks.Settings
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	ep, err := h.webhooks.Update(c.Request.Context(), OrgID(c), c.Param("id"), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewWebhookEndpoint(ep))
}

func (h *handlers) deleteWebhook(c *gin.Context) {
	if err := h.webhooks.Delete(c.Request.Context(), OrgID(c), c.Param("id")); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *handlers) rotateWebhookSecret(c *gin.Context) {
	ep, err := h.webhooks.RotateSecret(c.Request.Context(), OrgID(c), c.Param("id"))
	if err != nil {
		Fail(c, err)
		return
	}
	out := wire.NewWebhookEndpoint(ep)
	out.Secret = &ep.Secret
	c.JSON(http.StatusOK, out)
}

// testWebhook posts a test event at once (webhooks.Service.SendTest).
func (h *handlers) testWebhook(c *gin.Context) {
	out, err := h.webhooks.SendTest(c.Request.Context(), OrgID(c), c.Param("id"))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
