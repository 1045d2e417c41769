package web

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/wire"
)

// The organisation's Slack app: its secrets (shown only as set or not),
// its channel, and the manifest that sets it up.

type slackPage struct {
	adminBase
	App wire.SlackIntegration
	// Manifest is the app manifest, indented, to copy into Slack.
	Manifest string
	Form     slackForm
}

// SlackSettings are the organisation's Slack app's settings and manifest
// as the admin page shows them; *slackapp.Service is one.
type SlackSettings interface {
	Get(ctx context.Context, orgID string) (wire.SlackIntegration, error)
	Save(ctx context.Context, orgID string, by accounts.Actor, in admin.SlackSettings) (wire.SlackIntegration, error)
	Disconnect(ctx context.Context, orgID string) error
	Manifest() wire.SlackManifest
}

// slackForm is what was typed: the channel only, since secrets are never
// shown again.
type slackForm struct{ Channel string }

// slackLabels name the Slack form's fields as the page labels them.
var slackLabels = Labels{"signingSecret": "Signing secret", "botToken": "Bot token", "channel": "Channel for approval requests"}

func (p *Pages) adminSlack(c *gin.Context) {
	p.showSlack(c, http.StatusOK, nil, nil)
}

func (p *Pages) showSlack(c *gin.Context, status int, prob *formProblem, form *slackForm) {
	app, err := p.slack.Get(c.Request.Context(), orgOf(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	manifest, _ := json.MarshalIndent(p.slack.Manifest(), "", "  ")
	page := slackPage{adminBase: base(c, "slack"), App: app, Manifest: string(manifest), Form: slackForm{Channel: app.Channel}}
	if form != nil {
		page.Form = *form
	}
	page.Problem = prob
	p.Render(c, status, "admin_slack", page)
}

// saveSlack stores what the form sets through the same call and checks as
// the API: a secret field left empty keeps the stored secret.
func (p *Pages) saveSlack(c *gin.Context) {
	form := slackForm{Channel: c.PostForm("channel")}
	var in admin.SlackSettings
	for _, f := range []struct {
		name string
		to   **string
	}{{"signingSecret", &in.SigningSecret}, {"botToken", &in.BotToken}} {
		if v := c.PostForm(f.name); v != "" {
			*f.to = &v
		}
	}
	in.Channel = &form.Channel
	if _, err := p.slack.Save(c.Request.Context(), orgOf(c), CurrentPerson(c).Actor(), in); err != nil {
		if prob, status, ok := p.refusedBy(c, err, slackLabels); ok {
			p.showSlack(c, status, prob, &form)
		}
		return
	}
	Done(c, "/admin/slack", "slack-saved")
}

func (p *Pages) disconnectSlack(c *gin.Context) {
	err := confirmed(c, "disconnect button")
	if err == nil {
		err = p.slack.Disconnect(c.Request.Context(), orgOf(c))
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, slackLabels); ok {
			p.showSlack(c, status, prob, nil)
		}
		return
	}
	Done(c, "/admin/slack", "slack-disconnected")
}
