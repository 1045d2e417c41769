package reports

import (
	"context"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// Readership analytics: what the views recorded on a report's origin add
// up to, for the API and the report's page alike.
const (
	// SeriesDays is how many UTC days a report's series covers, today
	// the last.
	SeriesDays = 30
	// RecentReaderCount bounds a report's recent readers.
	RecentReaderCount = 20
)

// Analytics is what report idOrSlug's views add up to: the total on every
// plan, readers, the series and recent readers on plans with readership
// analytics. An agent key reads them by its scope; a person when they
// read or manage the report.
func (s *Service) Analytics(ctx context.Context, who models.Actor, idOrSlug string) (*wire.ReportAnalytics, error) {
	org := who.Organization
	r, err := s.store.Reports().GetReport(ctx, org.ID, idOrSlug)
	if err != nil {
		return nil, err
	}
	if err := s.mayView(ctx, r, who); err != nil {
		return nil, err
	}
	totals, err := s.store.Reports().ViewTotals(ctx, r)
	if err != nil {
		return nil, err
	}
	out := &wire.ReportAnalytics{ReportID: r.ID, Plan: org.Plan, TotalViews: totals.TotalViews}
	if !org.ReadershipAnalytics() {
		return out, nil
	}
	first := models.Now().Truncate(24*time.Hour).AddDate(0, 0, 1-SeriesDays)
	days, err := s.store.Reports().DailyViews(ctx, r, first)
	if err != nil {
		return nil, err
	}
	recent, err := s.store.Reports().RecentReaders(ctx, r, RecentReaderCount, r.ShowViewers)
	if err != nil {
		return nil, err
	}
	out.Readership = wire.NewReadership(totals, series(days, first), recent, r.ShowViewers)
	return out, nil
}

// series lays out SeriesDays days from first, a zero for each day nobody
// opened the report.
func series(days []models.DayViews, first time.Time) []models.DayViews {
	byDay := map[string]models.DayViews{}
	for _, d := range days {
		byDay[d.Day] = d
	}
	out := make([]models.DayViews, SeriesDays)
	for i := range out {
		day := first.AddDate(0, 0, i).Format(time.DateOnly)
		out[i] = byDay[day]
		out[i].Day = day
	}
	return out
}

// OrganizationAnalytics pages through the organisation's live reports,
// newest first, each with its views and readers, those nobody opened
// included; below the team plan it is refused (402). A member sees the
// reports they manage or read: an administrator manages every one.
func (s *Service) OrganizationAnalytics(ctx context.Context, who models.Actor, p models.Page) ([]models.ReportReach, string, error) {
	org := who.Organization
	if !org.ReadershipAnalytics() {
		return nil, "", apperr.New(apperr.PlanRequired,
			"organisation-wide analytics need the %s plan or above; this organisation is on the %s plan, which the operator of this Assent instance sets",
			models.PlanTeam, org.Plan)
	}
	var reader *models.Person
	if who.Person != nil && !who.Administrator {
		reader = who.Person // readable covers owned, the only reports a member manages
	}
	return s.store.Reports().ReportsReach(ctx, org.ID, reader, p)
}
