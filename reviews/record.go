package reviews

import (
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
)

// StoredVerdict is one reviewer's verdict as the review's record keeps it.
type StoredVerdict struct {
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
	models.RequestBase
	Instructions string `gorm:"type:text;not null"`
	ReportID     string `gorm:"size:40;not null;index"`
	// VersionID and Version pin the version under review.
	VersionID string `gorm:"size:40;not null"`
	Version   int    `gorm:"not null"`
	// Reviewers are the entries as the agent sent them; ReviewerIDs the
	// people they were resolved to at creation, and Asked those people as
	// they were then.
	Reviewers         models.StringList               `gorm:"type:text;not null"`
	ReviewerIDs       models.StringList               `gorm:"type:text;not null"`
	Asked             models.JSON[[]models.PersonRef] `gorm:"type:text;not null"`
	RequiredApprovals int                             `gorm:"not null"`
	ApprovalsSoFar    int                             `gorm:"not null"`
	Verdicts          models.JSON[[]StoredVerdict]    `gorm:"type:text;not null"`
	ThreadCount       int                             `gorm:"not null"`
	SettledAt         *time.Time
}

// The methods below are what the shared paths ask of a review's record
// (models.RequestRecord).

var kind = models.RegisterKind(&models.RequestKind{Noun: "review", Page: paths.Review, Subject: Kind, IDPrefix: ids.Review,
	Open: states.Open, Table: "reviews", AboutReports: true})

func (r *Review) RequestHead() models.RequestHead               { return r.RequestBase.HeadAsking(&r.ReviewerIDs) }
func (*Review) RequestKind() *models.RequestKind                { return kind }
func (r *Review) RequestDue() time.Time                         { return r.ExpiresAt }
func (r *Review) AskedPeople() *models.JSON[[]models.PersonRef] { return &r.Asked }
func (r *Review) SettledWhen() (*time.Time, *string)            { return r.SettledAt, nil }
func (r *Review) PrepareNew()                                   { models.PrepareAsked(&r.Verdicts.V, &r.Asked.V) }
func (r *Review) ActedBy(personID string) bool {
	return models.ActedAmong(r.Asked.V, r.reviewed(), personID)
}

// Records are the reviews in s on the paths every kind shares.
func Records(s models.RequestsHost) models.Requests[Review, *Review] {
	return models.RecordsOf[Review](s)
}

// Reviewed reports whether personID has returned a verdict.
func (r *Review) Reviewed(personID string) bool { return slices.Contains(r.reviewed(), personID) }

// reviewed are who returned a verdict, in order.
func (r *Review) reviewed() []string {
	return models.IDsOf(r.Verdicts.V, func(v *StoredVerdict) string { return v.ReviewerID })
}

// Filter narrows a list of reviews.
type Filter struct {
	models.RequestFilter
	ReportID string
}

// Narrow adds the report a list is of.
func (f Filter) Narrow(_, q *gorm.DB, _ string, k *models.RequestKind) (*gorm.DB, error) {
	if f.ReportID != "" {
		q = q.Where("report_id = ?", f.ReportID)
	}
	return q, models.KindOnly(f, kind, k)
}
