package admin

import "github.com/assent-hq/assent/models"

// The adapters name the directory's and the keys' records by these names,
// the service's vocabulary; models stays the persistence layer behind them.
type (
	Member = models.Member
	Team   = models.Team
	Guest  = models.Guest
	APIKey = models.APIKey
	Rule   = models.Rule
)

// A member's roles.
const (
	RoleOwner  = models.RoleOwner
	RoleAdmin  = models.RoleAdmin
	RoleMember = models.RoleMember
)

// A team's kinds.
const (
	TeamKindTeam      = models.TeamKindTeam
	TeamKindGroup     = models.TeamKindGroup
	TeamKindWorkspace = models.TeamKindWorkspace
)

// An API key's kinds.
const (
	KeyAgent  = models.KeyAgent
	KeyAdmin  = models.KeyAdmin
	KeyMember = models.KeyMember
)

// SlackIntegration is an organisation's own Slack app.
type SlackIntegration = models.SlackIntegration
