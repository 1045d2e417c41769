package wire

import (
	"slices"
	"time"

	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Flow is a flow on the wire. Its state is not shown; allSettled
// says whether anything is outstanding now.
type Flow struct {
	ID         string         `json:"id"`
	Title      string         `json:"title"`
	ExternalID *string        `json:"externalId"`
	Members    []FlowMember   `json:"members"`
	Timeline   []TimelineStep `json:"timeline"`
	AllSettled bool           `json:"allSettled"`
	StartedBy  string         `json:"startedBy"`
	CreatedAt  wiretime.Time  `json:"createdAt"`
}

// FlowMember is a request attached to a flow.
type FlowMember struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
	URL    string `json:"url"`
}

// TimelineStep is one audited step.
type TimelineStep struct {
	At          wiretime.Time `json:"at"`
	SubjectType string        `json:"subjectType"`
	SubjectID   string        `json:"subjectId"`
	Action      string        `json:"action"`
	Actor       string        `json:"actor"`
	Detail      string        `json:"detail"`
	// Position and EntryHash place the step in its organisation's
	// tamper-evident audit chain.
	Position  int64  `json:"position"`
	EntryHash string `json:"entryHash"`
}

// NewTimelineStep serializes e.
func NewTimelineStep(e *models.AuditEntry) TimelineStep {
	return TimelineStep{At: wiretime.New(e.At), SubjectType: e.SubjectType, SubjectID: e.SubjectID, Action: e.Action,
		Actor: e.ActorName, Detail: e.Detail, Position: e.Position, EntryHash: e.EntryHash}
}

// NewFlow serializes a flow with its members and timeline.
func NewFlow(d *models.FlowDetail, baseURL string) Flow {
	out := Flow{ID: d.Flow.ID, Title: d.Flow.Title, ExternalID: d.Flow.ExternalID, AllSettled: d.AllSettled(),
		StartedBy: d.Flow.StartedByName, CreatedAt: wiretime.New(d.Flow.CreatedAt),
		Members: []FlowMember{}, Timeline: All(d.Timeline, NewTimelineStep)}
	type joined struct {
		at     time.Time
		member FlowMember
	}
	var all []joined
	for _, r := range d.Requests {
		all = append(all, joined{r.CreatedAt, FlowMember{Type: r.Kind, ID: r.ID, Title: r.Title, Status: r.Status, URL: baseURL + models.RequestPage(r.Kind, r.ID)}})
	}
	for _, r := range d.Reports {
		all = append(all, joined{r.CreatedAt, FlowMember{Type: "report", ID: r.ID, Title: r.Title, Status: ReportStatus(&r), URL: ReportURL(baseURL, r.Slug)}})
	}
	// Members in the order they joined, whatever their kind.
	slices.SortStableFunc(all, func(a, b joined) int { return a.at.Compare(b.at) })
	for _, j := range all {
		out.Members = append(out.Members, j.member)
	}
	return out
}
