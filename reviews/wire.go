package reviews

import (
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// Wire is a review on the wire: the REST read, and the data of its
// webhooks and callbacks.
type Wire struct {
	wire.RequestHead
	Instructions      string        `json:"instructions"`
	ReportID          string        `json:"reportId"`
	VersionID         string        `json:"versionId"`
	Version           int           `json:"version"`
	Reviewers         []string      `json:"reviewers"`
	ResolvedReviewers []wire.Person `json:"resolvedReviewers"`
	RequiredApprovals int           `json:"requiredApprovals"`
	ApprovalsSoFar    int           `json:"approvalsSoFar"`
	Verdicts          []WireVerdict `json:"verdicts"`
	ThreadCount       int           `json:"threadCount"`
	wire.RequestTail
}

// WireVerdict is one reviewer's verdict.
type WireVerdict struct {
	Reviewer wire.Person   `json:"reviewer"`
	Verdict  string        `json:"verdict"`
	Note     string        `json:"note"`
	At       wiretime.Time `json:"at"`
	// OnBehalfOf is the person away whom the reviewer stood in for;
	// absent when they reviewed in their own name.
	OnBehalfOf *wire.Delegator `json:"onBehalfOf,omitempty"`
}

// NewWire serializes r; baseURL makes the page url.
func NewWire(r *Review, baseURL string) Wire {
	return Wire{
		RequestHead: wire.NewRequestHead(Kind, &r.RequestBase, baseURL), Instructions: r.Instructions,
		ReportID: r.ReportID, VersionID: r.VersionID, Version: r.Version,
		Reviewers: wire.NonNil(r.Reviewers), ResolvedReviewers: wire.All(r.Asked.V, func(p *models.PersonRef) wire.Person { return wire.Person(*p) }),
		RequiredApprovals: r.RequiredApprovals, ApprovalsSoFar: r.ApprovalsSoFar,
		Verdicts: wire.All(r.Verdicts.V, func(v *StoredVerdict) WireVerdict {
			return WireVerdict{Reviewer: wire.Person{ID: v.ReviewerID, Name: v.ReviewerName, Email: v.ReviewerEmail},
				Verdict: v.Verdict, Note: v.Note, At: wiretime.New(v.At), OnBehalfOf: wire.OnBehalfOf(v.OnBehalfOfID, v.OnBehalfOfName)}
		}),
		ThreadCount: r.ThreadCount, RequestTail: wire.NewRequestTail(&r.RequestBase, r.SettledAt),
	}
}

// NewCreated is r's create answer: its read, with the callback secret
// shown this once.
func NewCreated(r *Review, baseURL string) Wire {
	out := NewWire(r, baseURL)
	out.CallbackSecret = r.CallbackSecret
	return out
}
