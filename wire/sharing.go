package wire

import (
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Grant is one audience a report is shared with.
type Grant struct {
	// Kind is member, guest, team, group, workspace, everyone or public.
	Kind string `json:"kind"`
	// ID is the person or team, absent for everyone and public.
	ID string `json:"id,omitempty"`
	// Name names it again in an audience: an email, a team's name,
	// `everyone` or `public`.
	Name      string        `json:"name"`
	GrantedBy Owner         `json:"grantedBy"`
	GrantedAt wiretime.Time `json:"grantedAt"`
}

// NewGrants serializes gs, never as null.
func NewGrants(gs []models.ReportGrant) []Grant {
	out := make([]Grant, len(gs))
	for i, g := range gs {
		out[i] = Grant{Kind: g.Kind, ID: g.SubjectID, Name: g.Name, GrantedBy: owner(!ids.HasPrefix(g.GrantedBy, ids.Key), g.GrantedBy, g.GrantedByName),
			GrantedAt: wiretime.New(g.CreatedAt)}
	}
	return out
}

// Sharing answers a share or unshare: what changed and whom the report is
// shared with now.
type Sharing struct {
	ReportID string   `json:"reportId"`
	Added    *[]Grant `json:"added,omitempty"`
	Removed  *[]Grant `json:"removed,omitempty"`
	Audience []Grant  `json:"audience"`
}

// ReportShared is the data of report.shared: the report and the grants
// added.
type ReportShared struct {
	Report Report  `json:"report"`
	Added  []Grant `json:"added"`
}

// ReportViewed is the data of report.viewed: the report, the version
// opened, and who opened it (null for a public reader not signed in).
type ReportViewed struct {
	Report   Report            `json:"report"`
	Viewer   *models.PersonRef `json:"viewer"`
	Version  int               `json:"version"`
	ViewedAt wiretime.Time     `json:"viewedAt"`
}

// AccessRequested is the data of access.requested: the report and the
// person asking to read it.
type AccessRequested struct {
	Report Report           `json:"report"`
	Person models.PersonRef `json:"person"`
}
