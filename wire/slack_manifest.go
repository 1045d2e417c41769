package wire

// SlackManifest is a Slack app manifest (Slack's app manifest reference), ready
// to paste into "Create an app, From a manifest": a bot user, the scopes
// Assent uses and interactivity pointed at this instance.
type SlackManifest struct {
	DisplayInformation SlackManifestDisplay  `json:"display_information"`
	Features           SlackManifestFeatures `json:"features"`
	OAuthConfig        SlackManifestOAuth    `json:"oauth_config"`
	Settings           SlackManifestSettings `json:"settings"`
}

// SlackManifestDisplay is how Slack shows the app.
type SlackManifestDisplay struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// SlackManifestFeatures are the app's features: its bot user.
type SlackManifestFeatures struct {
	BotUser SlackManifestBotUser `json:"bot_user"`
}

// SlackManifestBotUser is the app's bot user.
type SlackManifestBotUser struct {
	DisplayName  string `json:"display_name"`
	AlwaysOnline bool   `json:"always_online"`
}

// SlackManifestOAuth holds the bot token's scopes.
type SlackManifestOAuth struct {
	Scopes SlackManifestScopes `json:"scopes"`
}

// SlackManifestScopes are the bot token's scopes.
type SlackManifestScopes struct {
	Bot []string `json:"bot"`
}

// SlackManifestSettings turn interactivity on.
type SlackManifestSettings struct {
	Interactivity        SlackManifestInteractivity `json:"interactivity"`
	OrgDeployEnabled     bool                       `json:"org_deploy_enabled"`
	SocketModeEnabled    bool                       `json:"socket_mode_enabled"`
	TokenRotationEnabled bool                       `json:"token_rotation_enabled"`
}

// SlackManifestInteractivity is where Slack posts clicks.
type SlackManifestInteractivity struct {
	IsEnabled  bool   `json:"is_enabled"`
	RequestURL string `json:"request_url"`
}
