package wire

import (
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Schedule is a report's schedule on the wire.
type Schedule struct {
	ID       string  `json:"id"`
	ReportID string  `json:"reportId"`
	Cron     *string `json:"cron"`
	// Every is the interval in seconds, or null for a cron.
	Every     *int64         `json:"every"`
	Timezone  string         `json:"timezone"`
	Note      string         `json:"note"`
	Paused    bool           `json:"paused"`
	CreatedBy string         `json:"createdBy"`
	LastDueAt *wiretime.Time `json:"lastDueAt"`
	CreatedAt wiretime.Time  `json:"createdAt"`
	UpdatedAt wiretime.Time  `json:"updatedAt"`
}

// NewSchedule serializes sc.
func NewSchedule(sc *models.Schedule) Schedule {
	return Schedule{ID: sc.ID, ReportID: sc.ReportID, Cron: sc.Cron, Every: sc.EverySeconds, Timezone: sc.Timezone, Note: sc.Note, Paused: sc.Paused,
		CreatedBy: sc.CreatedByName, LastDueAt: wiretime.Ptr(sc.LastDueAt), CreatedAt: wiretime.New(sc.CreatedAt),
		UpdatedAt: wiretime.New(sc.UpdatedAt)}
}

// ScheduleDue is the data of schedule.due: the schedule and its report.
type ScheduleDue struct {
	Schedule Schedule `json:"schedule"`
	Report   Report   `json:"report"`
}
