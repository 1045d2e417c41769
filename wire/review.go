package wire

import (
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Review is a review on the wire: the REST read, and the data of its
// webhooks and callbacks.
type Review struct {
	ID                string    `json:"id"`
	Status            string    `json:"status"`
	URL               string    `json:"url"`
	Title             string    `json:"title"`
	Instructions      string    `json:"instructions"`
	ReportID          string    `json:"reportId"`
	VersionID         string    `json:"versionId"`
	Version           int       `json:"version"`
	Reviewers         []string  `json:"reviewers"`
	ResolvedReviewers []Person  `json:"resolvedReviewers"`
	RequiredApprovals int       `json:"requiredApprovals"`
	ApprovalsSoFar    int       `json:"approvalsSoFar"`
	Verdicts          []Verdict `json:"verdicts"`
	ThreadCount       int       `json:"threadCount"`
	requestTail
}

// Verdict is one reviewer's verdict.
type Verdict struct {
	Reviewer Person        `json:"reviewer"`
	Verdict  string        `json:"verdict"`
	Note     string        `json:"note"`
	At       wiretime.Time `json:"at"`
	// OnBehalfOf is the person away whom the reviewer stood in for;
	// absent when they reviewed in their own name.
	OnBehalfOf *Delegator `json:"onBehalfOf,omitempty"`
}

// ReviewURL is the page reviewers review on.
func ReviewURL(baseURL, id string) string { return baseURL + paths.Review(id) }

// NewReview serializes r; baseURL makes the page url.
func NewReview(r *models.Review, baseURL string) Review {
	return Review{
		ID: r.ID, Status: r.Status, URL: ReviewURL(baseURL, r.ID), Title: r.Title, Instructions: r.Instructions,
		ReportID: r.ReportID, VersionID: r.VersionID, Version: r.Version,
		Reviewers: nonNil(r.Reviewers), ResolvedReviewers: All(r.Asked.V, func(p *models.PersonRef) Person { return Person(*p) }),
		RequiredApprovals: r.RequiredApprovals, ApprovalsSoFar: r.ApprovalsSoFar,
		Verdicts: All(r.Verdicts.V, func(v *models.Verdict) Verdict {
			return Verdict{Reviewer: Person{ID: v.ReviewerID, Name: v.ReviewerName, Email: v.ReviewerEmail},
				Verdict: v.Verdict, Note: v.Note, At: wiretime.New(v.At), OnBehalfOf: onBehalfOf(v.OnBehalfOfID, v.OnBehalfOfName)}
		}),
		ThreadCount: r.ThreadCount, requestTail: newRequestTail(&r.RequestBase, r.SettledAt),
	}
}
