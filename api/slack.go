package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/bodyread"
	"github.com/assent-hq/assent/wire"
)

// The organisation's Slack app: its settings (admin), its manifest, and
// the endpoint Slack posts its interactions to.

// SlackApp is the organisation's Slack app as the API serves it;
// *slackapp.Service is one.
type SlackApp interface {
	Get(ctx context.Context, orgID string) (wire.SlackIntegration, error)
	Save(ctx context.Context, orgID string, by accounts.Actor, in admin.SlackSettings) (wire.SlackIntegration, error)
	Disconnect(ctx context.Context, orgID string) error
	Manifest() wire.SlackManifest
	// Interact answers one interaction Slack posted, which it verifies.
	Interact(ctx context.Context, header http.Header, body []byte) wire.SlackReply
}

func (h *handlers) getSlack(c *gin.Context) {
	out, err := h.slack.Get(c.Request.Context(), OrgID(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) putSlack(c *gin.Context) {
	var in admin.SlackSettings
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	out, err := h.slack.Save(c.Request.Context(), OrgID(c), Principal(c), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) deleteSlack(c *gin.Context) {
	if err := h.slack.Disconnect(c.Request.Context(), OrgID(c)); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *handlers) slackManifest(c *gin.Context) {
	c.JSON(http.StatusOK, h.slack.Manifest())
}

// slackInteractionTimeout bounds what one interaction does after Slack has
// stopped waiting for it.
const slackInteractionTimeout = 30 * time.Second

// slackInteractionLimit bounds an interaction's body: a click's payload
// carries the message it was on, a few kilobytes.
const slackInteractionLimit = 1 << 20

// slackInteractions is Slack's interactivity request URL: a click on an
// approval message, or the Reject form's submission, signed by Slack.
// It takes no Assent credentials; the signature is the check.
func (h *handlers) slackInteractions(c *gin.Context) {
	lift := bodyread.Bound(c.Writer)
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, slackInteractionLimit))
	lift()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			Fail(c, apperr.New(apperr.PayloadTooLarge, "an interaction is at most 1 MB"))
			return
		}
		Fail(c, apperr.New(apperr.InvalidRequest, "the request body could not be read"))
		return
	}
	// Slack waits 3 seconds and then drops the connection; what the click
	// began (the decision, the message's update) finishes regardless.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), slackInteractionTimeout)
	defer cancel()
	r := h.slack.Interact(ctx, c.Request.Header, body)
	if r.Body == nil {
		c.Status(r.Status)
		return
	}
	c.JSON(r.Status, r.Body)
}
