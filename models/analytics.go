package models

import (
	"context"
	"database/sql/driver"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
)

// Readership analytics add up a report's views (ReportView, one per page
// served). A reader is a member or guest who opened it; a public reader
// not signed in leaves no name, so anonymous views are counted as views
// and never as readers.

// ViewTotals are what every view of a report adds up to.
type ViewTotals struct {
	TotalViews     int64
	AnonymousViews int64
	// UniqueReaders are the members and guests who opened it:
	// InternalReaders the members, ExternalReaders the guests.
	UniqueReaders   int64
	InternalReaders int64
	ExternalReaders int64
}

// ViewTotals counts r's views and readers.
func (s *ReportStore) ViewTotals(ctx context.Context, r *Report) (*ViewTotals, error) {
	var t ViewTotals
	err := s.db.WithContext(ctx).Model(&ReportView{}).
		Select(`COUNT(*) AS total_views,
			COUNT(CASE WHEN viewer_id = '' THEN 1 END) AS anonymous_views,
			COUNT(DISTINCT NULLIF(viewer_id, '')) AS unique_readers,
			COUNT(DISTINCT CASE WHEN substr(viewer_id, 1, ?) = ? THEN viewer_id END) AS internal_readers,
			COUNT(DISTINCT CASE WHEN substr(viewer_id, 1, ?) = ? THEN viewer_id END) AS external_readers`,
			len(ids.Member)+1, ids.Member+"_", len(ids.Guest)+1, ids.Guest+"_").
		Where("organization_id = ? AND report_id = ?", r.OrganizationID, r.ID).Scan(&t).Error
	return &t, err
}

// DayViews are one UTC day's views of a report, and the readers among
// them.
type DayViews struct {
	// Day is YYYY-MM-DD.
	Day     string
	Views   int64
	Readers int64
}

// DailyViews counts r's views and readers per UTC day from since on,
// oldest first; days nobody opened it are left out.
func (s *ReportStore) DailyViews(ctx context.Context, r *Report, since time.Time) ([]DayViews, error) {
	db := s.db.WithContext(ctx)
	day := utcDay(db)
	var out []DayViews
	err := db.Model(&ReportView{}).Select(day+" AS day, COUNT(*) AS views, COUNT(DISTINCT NULLIF(viewer_id, '')) AS readers").
		Where("organization_id = ? AND report_id = ? AND at >= ?", r.OrganizationID, r.ID, since).
		Group(day).Order(day).Scan(&out).Error
	return out, err
}

// utcDay is the SQL for a view's UTC day as YYYY-MM-DD: PostgreSQL keeps
// a timestamptz, SQLite the UTC time as text, which strftime reads.
func utcDay(db *gorm.DB) string {
	if db.Dialector.Name() == "postgres" {
		return "to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	return "strftime('%Y-%m-%d', at)"
}

// ReaderActivity is one reader of a report: how often and when last they
// opened it. Name and Email are filled only when asked for, and stay
// empty for someone since removed.
type ReaderActivity struct {
	ViewerID     string
	Views        int64
	LastViewedAt time.Time
	Name, Email  string
}

// RecentReaders lists up to limit readers of r, the most recent first,
// with their names and emails when named is set.
func (s *ReportStore) RecentReaders(ctx context.Context, r *Report, limit int, named bool) ([]ReaderActivity, error) {
	db := s.db.WithContext(ctx)
	var rows []struct {
		ViewerID     string
		Views        int64
		LastViewedAt aggregateTime
	}
	err := db.Model(&ReportView{}).Select("viewer_id, COUNT(*) AS views, MAX(at) AS last_viewed_at").
		Where("organization_id = ? AND report_id = ? AND viewer_id <> ''", r.OrganizationID, r.ID).
		Group("viewer_id").Order("MAX(at) DESC, viewer_id").Limit(limit).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make([]ReaderActivity, len(rows))
	viewers := make([]string, len(rows))
	for i, row := range rows {
		out[i] = ReaderActivity{ViewerID: row.ViewerID, Views: row.Views, LastViewedAt: row.LastViewedAt.Time}
		viewers[i] = row.ViewerID
	}
	if !named || len(rows) == 0 {
		return out, nil
	}
	var members []Member
	if err := db.Where("organization_id = ? AND id IN ?", r.OrganizationID, viewers).Find(&members).Error; err != nil {
		return nil, err
	}
	var guests []Guest
	if err := db.Where("organization_id = ? AND id IN ?", r.OrganizationID, viewers).Find(&guests).Error; err != nil {
		return nil, err
	}
	people := map[string]*Person{}
	for i := range members {
		people[members[i].ID] = &Person{Member: &members[i]}
	}
	for i := range guests {
		people[guests[i].ID] = &Person{Guest: &guests[i]}
	}
	for i := range out {
		if p := people[out[i].ViewerID]; p != nil {
			out[i].Name, out[i].Email = p.DisplayName(), p.Email()
		}
	}
	return out, nil
}

// ReportReach is one report with what its views add up to.
type ReportReach struct {
	Report        Report
	TotalViews    int64
	UniqueReaders int64
	// LastViewedAt is nil for a report nobody opened.
	LastViewedAt *time.Time
}

// ReportsReach pages through the organisation's live reports (a version
// served, not archived), newest first, each with its views and readers
// counted, those nobody opened included. A reader, when given, narrows
// them to the reports that person may read.
func (s *ReportStore) ReportsReach(ctx context.Context, orgID string, reader *Person, p Page) ([]ReportReach, string, error) {
	db := s.db.WithContext(ctx)
	q := db.Model(&Report{}).Where("reports.organization_id = ? AND NOT reports.archived AND reports.live_version IS NOT NULL", orgID)
	if reader != nil {
		q = readableBy(q, db, reader)
	}
	reports, next, err := list(q, p, ids.Report, func(r *Report) string { return r.ID })
	if err != nil || len(reports) == 0 {
		return []ReportReach{}, next, err
	}
	listed := make([]string, len(reports))
	for i, r := range reports {
		listed[i] = r.ID
	}
	var counts []struct {
		ReportID      string
		TotalViews    int64
		UniqueReaders int64
		LastViewedAt  aggregateTime
	}
	err = db.Model(&ReportView{}).
		Select("report_id, COUNT(*) AS total_views, COUNT(DISTINCT NULLIF(viewer_id, '')) AS unique_readers, MAX(at) AS last_viewed_at").
		Where("organization_id = ? AND report_id IN ?", orgID, listed).Group("report_id").Scan(&counts).Error
	if err != nil {
		return nil, "", err
	}
	out := make([]ReportReach, len(reports))
	at := map[string]int{}
	for i, r := range reports {
		out[i] = ReportReach{Report: r}
		at[r.ID] = i
	}
	for _, c := range counts {
		last := c.LastViewedAt.Time
		reach := &out[at[c.ReportID]]
		reach.TotalViews, reach.UniqueReaders, reach.LastViewedAt = c.TotalViews, c.UniqueReaders, &last
	}
	return out, next, nil
}

// aggregateTime reads MAX(at): PostgreSQL returns a time, SQLite the text
// it keeps times as, since an aggregate loses the column's type.
type aggregateTime struct{ time.Time }

// sqliteTimeLayouts are the forms the SQLite driver writes times in.
var sqliteTimeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"}

// Scan implements sql.Scanner.
func (t *aggregateTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		t.Time = time.Time{}
		return nil
	case time.Time:
		t.Time = x.UTC()
		return nil
	case []byte:
		return t.Scan(string(x))
	case string:
		for _, layout := range sqliteTimeLayouts {
			if parsed, err := time.Parse(layout, x); err == nil {
				t.Time = parsed.UTC()
				return nil
			}
		}
		return fmt.Errorf("aggregate time %q has no known layout", x)
	}
	return fmt.Errorf("aggregate time: cannot read %T", v)
}

// Value implements driver.Valuer, so GORM may treat the type as a column.
func (t aggregateTime) Value() (driver.Value, error) { return t.Time, nil }
