package wire

import (
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// ReportAnalytics is what a report's views add up to: the total on every
// plan, the readers, the 30-day series and the recent readers on plans
// with readership analytics.
type ReportAnalytics struct {
	ReportID   string `json:"reportId"`
	Plan       string `json:"plan"`
	TotalViews int64  `json:"totalViews"`
	// Readership is nil below the team plan, and its fields then absent.
	*Readership
}

// Readership is the part of a report's analytics the team plan adds.
type Readership struct {
	UniqueReaders   int64 `json:"uniqueReaders"`
	InternalReaders int64 `json:"internalReaders"`
	ExternalReaders int64 `json:"externalReaders"`
	// AnonymousViews are views by public readers not signed in: counted in
	// totalViews, never as readers, since nothing tells them apart.
	AnonymousViews int64      `json:"anonymousViews"`
	Series         []DayViews `json:"series"`
	RecentReaders  []Reader   `json:"recentReaders"`
}

// DayViews is one UTC day of a report's series.
type DayViews struct {
	Date    string `json:"date"`
	Views   int64  `json:"views"`
	Readers int64  `json:"readers"`
}

// Reader is one recent reader; who they are only where the report's
// showViewers allows.
type Reader struct {
	LastViewedAt wiretime.Time `json:"lastViewedAt"`
	Views        int64         `json:"views"`
	// Kind is member or guest.
	Kind  string `json:"kind"`
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// NewReadership serializes totals, a series already laid out day by day,
// and recent readers, named when named is set.
func NewReadership(t *models.ViewTotals, series []models.DayViews, recent []models.ReaderActivity, named bool) *Readership {
	out := &Readership{UniqueReaders: t.UniqueReaders, InternalReaders: t.InternalReaders, ExternalReaders: t.ExternalReaders,
		AnonymousViews: t.AnonymousViews, Series: make([]DayViews, len(series)), RecentReaders: make([]Reader, len(recent))}
	for i, d := range series {
		out.Series[i] = DayViews{Date: d.Day, Views: d.Views, Readers: d.Readers}
	}
	for i, a := range recent {
		r := Reader{LastViewedAt: wiretime.New(a.LastViewedAt), Views: a.Views, Kind: models.ApproverMember}
		if ids.HasPrefix(a.ViewerID, ids.Guest) {
			r.Kind = models.ApproverGuest
		}
		if named {
			r.ID, r.Name, r.Email = a.ViewerID, a.Name, a.Email
		}
		out.RecentReaders[i] = r
	}
	return out
}

// ReportReach is one report in the organisation's analytics.
type ReportReach struct {
	ReportID      string         `json:"reportId"`
	Slug          string         `json:"slug"`
	Title         string         `json:"title"`
	TotalViews    int64          `json:"totalViews"`
	UniqueReaders int64          `json:"uniqueReaders"`
	LastViewedAt  *wiretime.Time `json:"lastViewedAt"`
}

// NewReportReach serializes r.
func NewReportReach(r *models.ReportReach) ReportReach {
	return ReportReach{ReportID: r.Report.ID, Slug: r.Report.Slug, Title: r.Report.Title, TotalViews: r.TotalViews,
		UniqueReaders: r.UniqueReaders, LastViewedAt: wiretime.Ptr(r.LastViewedAt)}
}
