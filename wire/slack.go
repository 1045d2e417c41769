package wire

import (
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// SlackInteractionsPath is where Slack posts an organisation's Slack app's
// interactions: the interactivity request URL of its manifest.
const SlackInteractionsPath = "/integrations/slack/interactions"

// SlackReply is the answer to one Slack interaction: its status and, when
// not nil, its JSON body.
type SlackReply struct {
	Status int
	Body   any
}

// SlackIntegration is an organisation's Slack app as administrators see
// it: whether each secret is set, never the secret.
type SlackIntegration struct {
	Connected        bool   `json:"connected"`
	SigningSecretSet bool   `json:"signingSecretSet"`
	BotTokenSet      bool   `json:"botTokenSet"`
	Channel          string `json:"channel"`
	// Interactive: Slack messages carry Approve and Reject (both secrets
	// set).
	Interactive bool `json:"interactive"`
	// InteractionsURL is the app's interactivity request URL.
	InteractionsURL string         `json:"interactionsUrl"`
	UpdatedAt       *wiretime.Time `json:"updatedAt"`
}

// NewSlackIntegration serializes in (nil: none connected);
// interactionsURL is this instance's interactivity request URL.
func NewSlackIntegration(in *models.SlackIntegration, interactionsURL string) SlackIntegration {
	out := SlackIntegration{InteractionsURL: interactionsURL}
	if in == nil {
		return out
	}
	out.Connected, out.SigningSecretSet, out.BotTokenSet, out.Channel = true, in.SigningSecret != "", in.BotToken != "", in.Channel
	out.Interactive = in.Interactive()
	out.UpdatedAt = wiretime.Ptr(&in.UpdatedAt)
	return out
}
