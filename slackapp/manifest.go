package slackapp

// Manifest is a Slack app manifest (Slack's app manifest reference), ready
// to paste into "Create an app, From a manifest": a bot user, the scopes
// Assent uses and interactivity pointed at this instance.
type Manifest struct {
	DisplayInformation ManifestDisplay  `json:"display_information"`
	Features           ManifestFeatures `json:"features"`
	OAuthConfig        ManifestOAuth    `json:"oauth_config"`
	Settings           ManifestSettings `json:"settings"`
}

// ManifestDisplay is how Slack shows the app.
type ManifestDisplay struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// ManifestFeatures are the app's features: its bot user.
type ManifestFeatures struct {
	BotUser ManifestBotUser `json:"bot_user"`
}

// ManifestBotUser is the app's bot user.
type ManifestBotUser struct {
	DisplayName  string `json:"display_name"`
	AlwaysOnline bool   `json:"always_online"`
}

// ManifestOAuth holds the bot token's scopes.
type ManifestOAuth struct {
	Scopes ManifestScopes `json:"scopes"`
}

// ManifestScopes are the bot token's scopes.
type ManifestScopes struct {
	Bot []string `json:"bot"`
}

// ManifestSettings turn interactivity on.
type ManifestSettings struct {
	Interactivity        ManifestInteractivity `json:"interactivity"`
	OrgDeployEnabled     bool                  `json:"org_deploy_enabled"`
	SocketModeEnabled    bool                  `json:"socket_mode_enabled"`
	TokenRotationEnabled bool                  `json:"token_rotation_enabled"`
}

// ManifestInteractivity is where Slack posts clicks.
type ManifestInteractivity struct {
	IsEnabled  bool   `json:"is_enabled"`
	RequestURL string `json:"request_url"`
}

// BotScopes are the bot token's scopes: posting approval requests
// (chat:write), incoming webhooks of this app for slack-format endpoints
// whose buttons call back (incoming-webhook), and finding who clicked
// (users:read, and users:read.email for the address Assent matches a
// member by). Opening the Reject form (views.open) needs none.
var BotScopes = []string{"chat:write", "incoming-webhook", "users:read", "users:read.email"}

// Manifest returns the app manifest for this instance.
func (s *Service) Manifest() Manifest {
	return Manifest{
		DisplayInformation: ManifestDisplay{Name: "Assent",
			Description: "Approve and reject Assent requests from Slack"},
		Features:    ManifestFeatures{BotUser: ManifestBotUser{DisplayName: "Assent"}},
		OAuthConfig: ManifestOAuth{Scopes: ManifestScopes{Bot: BotScopes}},
		Settings:    ManifestSettings{Interactivity: ManifestInteractivity{IsEnabled: true, RequestURL: s.InteractionsURL()}},
	}
}
