package slackapp

import "github.com/assent-hq/assent/wire"

// BotScopes are the bot token's scopes: posting approval requests
// (chat:write), incoming webhooks of this app for slack-format endpoints
// whose buttons call back (incoming-webhook), and finding who clicked
// (users:read, and users:read.email for the address Assent matches a
// member by). Opening the Reject form (views.open) needs none.
var BotScopes = []string{"chat:write", "incoming-webhook", "users:read", "users:read.email"}

// Manifest returns the app manifest for this instance.
func (s *Service) Manifest() wire.SlackManifest {
	return wire.SlackManifest{
		DisplayInformation: wire.SlackManifestDisplay{Name: "Assent",
			Description: "Approve and reject Assent requests from Slack"},
		Features:    wire.SlackManifestFeatures{BotUser: wire.SlackManifestBotUser{DisplayName: "Assent"}},
		OAuthConfig: wire.SlackManifestOAuth{Scopes: wire.SlackManifestScopes{Bot: BotScopes}},
		Settings:    wire.SlackManifestSettings{Interactivity: wire.SlackManifestInteractivity{IsEnabled: true, RequestURL: s.InteractionsURL()}},
	}
}
