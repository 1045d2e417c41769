package models

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/states"
)

// Verdict is one reviewer's verdict on a review.
type Verdict struct {
	ReviewerID    string    `json:"reviewerId"`
	ReviewerName  string    `json:"reviewerName"`
	ReviewerEmail string    `json:"reviewerEmail"`
	Verdict       string    `json:"verdict"`
	Note          string    `json:"note"`
	At            time.Time `json:"at"`
	// OnBehalfOfID and OnBehalfOfName are the person away whom the
	// reviewer stood in for, if anyone.
	OnBehalfOfID   string `json:"onBehalfOfId,omitempty"`
	OnBehalfOfName string `json:"onBehalfOfName,omitempty"`
}

// Review asks people for a verdict on one version of a report. The API
// writes it at creation; after that only its workflow changes it, through
// PersistReview, except ThreadCount, which comments keep.
type Review struct {
	RequestBase
	Instructions string `gorm:"type:text;not null"`
	ReportID     string `gorm:"size:40;not null;index"`
	// VersionID and Version pin the version under review.
	VersionID string `gorm:"size:40;not null"`
	Version   int    `gorm:"not null"`
	// Reviewers are the entries as the agent sent them; ReviewerIDs the
	// people they were resolved to at creation, and Asked those people as
	// they were then.
	Reviewers         StringList        `gorm:"type:text;not null"`
	ReviewerIDs       StringList        `gorm:"type:text;not null"`
	Asked             JSON[[]PersonRef] `gorm:"type:text;not null"`
	RequiredApprovals int               `gorm:"not null"`
	ApprovalsSoFar    int               `gorm:"not null"`
	Verdicts          JSON[[]Verdict]   `gorm:"type:text;not null"`
	ThreadCount       int               `gorm:"not null"`
	SettledAt         *time.Time
}

func (r *Review) head() requestHead { return r.RequestBase.head(&r.ReviewerIDs) }

var reviewKind = registerKind(&requestKind{noun: "review", page: paths.Review, subject: events.RequestReview, idPrefix: ids.Review, open: states.Open,
	table: "reviews", askedIDs: "reviewer_ids", aboutReports: true})

func (*Review) kind() *requestKind               { return reviewKind }
func (r *Review) dueAt() time.Time               { return r.ExpiresAt }
func (r *Review) askedRefs() *JSON[[]PersonRef]  { return &r.Asked }
func (r *Review) settled() (*time.Time, *string) { return r.SettledAt, nil }
func (r *Review) prepare()                       { prepareAsked(&r.Verdicts.V, &r.Asked.V) }
func (r *Review) acted(personID string) bool {
	return actedFor(refsVia(r.Asked.V), r.reviewed(), personID)
}

// Reviews are the reviews on the paths every kind shares.
func (s *RequestStore) Reviews() Requests[Review, *Review] {
	return requestsOf[Review](s.core)
}

// Reviewed reports whether personID has returned a verdict.
func (r *Review) Reviewed(personID string) bool { return slices.Contains(r.reviewed(), personID) }

// reviewed are who returned a verdict, in order.
func (r *Review) reviewed() []string {
	return idsOf(r.Verdicts.V, func(v *Verdict) string { return v.ReviewerID })
}

// ReviewFilter narrows a list of reviews.
type ReviewFilter struct {
	RequestFilter
	ReportID string
}

func (f ReviewFilter) narrow(_, q *gorm.DB, _ string, k *requestKind) (*gorm.DB, error) {
	return matching(q, [2]string{"report_id", f.ReportID}), filterOf(f, reviewKind, k)
}

// ReviewsOf lists every review of a report, by id.
func (s *RequestStore) ReviewsOf(ctx context.Context, orgID, reportID string) ([]Review, error) {
	return reviewsOf(s.db.WithContext(ctx), orgID, reportID)
}

func reviewsOf(db *gorm.DB, orgID, reportID string) ([]Review, error) {
	var out []Review
	err := db.Where("organization_id = ? AND report_id = ?", orgID, reportID).Order("id").Find(&out).Error
	return out, err
}
