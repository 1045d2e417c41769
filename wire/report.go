package wire

import (
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Report is a report on the wire: the REST read and the data of its
// events. Version is the version a create, publish, rollback or event
// concerns.
type Report struct {
	ID             string   `json:"id"`
	Title          string   `json:"title"`
	Slug           string   `json:"slug"`
	URL            string   `json:"url"`
	LatestVersion  int      `json:"latestVersion"`
	LiveVersion    *int     `json:"liveVersion"`
	Living         bool     `json:"living"`
	Classification string   `json:"classification"`
	Audience       []string `json:"audience"`
	Archived       bool     `json:"archived"`
	// ShowViewers says whether readership analytics name the readers.
	ShowViewers bool    `json:"showViewers"`
	Owner       Owner   `json:"owner"`
	FlowID      *string `json:"flowId"`
	// CopiedFromID is the report this one was copied from, if any.
	CopiedFromID *string       `json:"copiedFromId"`
	CreatedAt    wiretime.Time `json:"createdAt"`
	UpdatedAt    wiretime.Time `json:"updatedAt"`
	Version      *Version      `json:"version,omitempty"`
	// RemovedGrants answers a reclassification: the grants the new level
	// does not allow, removed with it.
	RemovedGrants *[]Grant `json:"removedGrants,omitempty"`
}

// Owner is who owns a report: the member who published it, or the agent
// key.
type Owner struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Version is one version of a report.
type Version struct {
	ID            string           `json:"id"`
	Version       int              `json:"version"`
	Status        string           `json:"status"`
	ChangeSummary string           `json:"changeSummary"`
	CreatedAt     wiretime.Time    `json:"createdAt"`
	PublishedBy   Owner            `json:"publishedBy"`
	Files         int              `json:"files"`
	Bytes         int64            `json:"bytes"`
	Findings      []models.Finding `json:"findings"`
	// DecidedBy and DecidedAt say who released or declined a held version.
	DecidedBy *string        `json:"decidedBy,omitempty"`
	DecidedAt *wiretime.Time `json:"decidedAt,omitempty"`
}

// ReportURL is where readers open the report with slug.
func ReportURL(baseURL, slug string) string { return baseURL + paths.Report(slug) }

// NewReport serializes r with v, the version concerned (nil for none).
func NewReport(r *models.Report, v *models.ReportVersion, baseURL string) Report {
	out := Report{ID: r.ID, Title: r.Title, Slug: r.Slug, URL: ReportURL(baseURL, r.Slug), LatestVersion: r.LatestVersion,
		LiveVersion: r.LiveVersion, Living: r.Living, Classification: r.Classification, Audience: NonNil(r.Audience),
		Archived: r.Archived, ShowViewers: r.ShowViewers, Owner: owner(r.OwnerPerson, r.OwnerID, r.OwnerName), FlowID: r.FlowID,
		CopiedFromID: r.CopiedFromID, CreatedAt: wiretime.New(r.CreatedAt), UpdatedAt: wiretime.New(r.UpdatedAt)}
	if v != nil {
		ver := NewVersion(r, v)
		out.Version = &ver
	}
	return out
}

// NewVersion serializes v of r.
func NewVersion(r *models.Report, v *models.ReportVersion) Version {
	by := owner(!ids.HasPrefix(v.PublishedBy, ids.Key), v.PublishedBy, v.PublishedByName)
	findings := v.Findings.V
	if findings == nil {
		findings = []models.Finding{}
	}
	return Version{ID: v.ID, Version: v.Version, Status: v.Status(r), ChangeSummary: v.ChangeSummary,
		CreatedAt: wiretime.New(v.CreatedAt), PublishedBy: by, Files: v.FileCount(), Bytes: v.Bytes, Findings: findings,
		DecidedBy: v.DecidedByName, DecidedAt: wiretime.Ptr(v.DecidedAt)}
}

// ReportStatus is a report's state in a list of a flow's members:
// archived, live (a version is served) or unpublished (none went live).
func ReportStatus(r *models.Report) string {
	switch {
	case r.Archived:
		return "archived"
	case r.LiveVersion != nil:
		return "live"
	}
	return "unpublished"
}

func owner(person bool, id, name string) Owner {
	if person {
		return Owner{Type: "member", ID: id, Name: name}
	}
	return Owner{Type: "key", ID: id, Name: name}
}
