package models

import (
	"context"
	"time"

	"github.com/assent-hq/assent/internal/ids"
)

// Schedule asks the agent that owns a living report for its next version
// on a cron or an interval. Its timer is a Temporal Schedule with the same
// id; this row is what the API reads.
type Schedule struct {
	ID             string  `gorm:"primaryKey;size:40"`
	OrganizationID string  `gorm:"size:40;not null;index"`
	ReportID       string  `gorm:"size:40;not null;index"`
	Cron           *string `gorm:"size:200"`
	// EverySeconds is the interval, for a schedule without a cron.
	EverySeconds  *int64
	Timezone      string `gorm:"size:64;not null"`
	Note          string `gorm:"type:text;not null"`
	Paused        bool   `gorm:"not null"`
	CreatedBy     string `gorm:"size:60;not null"`
	CreatedByName string `gorm:"size:320;not null"`
	// Registered is set once its Temporal Schedule exists; the reconciler
	// registers those a crash left without one.
	Registered bool `gorm:"not null"`
	// LastDueAt is when schedule.due last fired; a retried emit of the same
	// moment writes nothing.
	LastDueAt *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewScheduleID makes a schedule's id before its Temporal Schedule is
// created under it.
func NewScheduleID() string { return newID(ids.Schedule) }

// InsertSchedule writes sc, in ctx's transaction.
func (s *ReportStore) InsertSchedule(ctx context.Context, sc *Schedule) error {
	now := Now()
	sc.CreatedAt, sc.UpdatedAt = now, now
	return insertIn(ctx, sc)
}

// LockSchedule reads the organisation's schedule id under its row lock,
// for the rest of ctx's transaction.
func (s *ReportStore) LockSchedule(ctx context.Context, orgID, id string) (*Schedule, error) {
	return lockedIn[Schedule](ctx, orgID, id, "schedule "+id)
}

// MarkDue records that schedule.due fired for sc's moment dueAt, in ctx's
// transaction.
func (s *ReportStore) MarkDue(ctx context.Context, sc *Schedule, dueAt time.Time) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	sc.LastDueAt = &dueAt
	return st.tx.Model(sc).Update("last_due_at", dueAt).Error
}

// MarkScheduleRegistered records that a schedule's Temporal Schedule
// exists.
func (s *ReportStore) MarkScheduleRegistered(ctx context.Context, id string) error {
	return s.db.WithContext(ctx).Model(&Schedule{}).Where("id = ?", id).Update("registered", true).Error
}

// UnregisteredSchedules lists schedules created before olderThan whose
// Temporal Schedule was never confirmed.
func (s *ReportStore) UnregisteredSchedules(ctx context.Context, olderThan time.Time, limit int) ([]Schedule, error) {
	var out []Schedule
	err := s.db.WithContext(ctx).Where("registered = ? AND created_at < ?", false, olderThan).Order("id").Limit(limit).Find(&out).Error
	return out, err
}

// GetSchedule returns one of the organisation's schedules.
func (s *ReportStore) GetSchedule(ctx context.Context, orgID, id string) (*Schedule, error) {
	return take[Schedule](s.db.WithContext(ctx), orgID, id, "schedule "+id)
}

// ListSchedules returns a page of the organisation's schedules, newest
// first, those of one report when reportID is set.
func (s *ReportStore) ListSchedules(ctx context.Context, orgID, reportID string, p Page) ([]Schedule, string, error) {
	q := s.db.WithContext(ctx).Where("organization_id = ?", orgID)
	if reportID != "" {
		q = q.Where("report_id = ?", reportID)
	}
	return list(q, p, ids.Schedule, func(sc *Schedule) string { return sc.ID })
}

// SchedulesAfter lists, across organisations, at most limit schedules
// with an id after after that could fire more than once a minute (a cron,
// or an interval under one), in id order.
func (s *ReportStore) SchedulesAfter(ctx context.Context, after string, limit int) ([]Schedule, error) {
	var out []Schedule
	err := s.db.WithContext(ctx).Where("id > ? AND (cron IS NOT NULL OR every_seconds < 60)", after).
		Order("id").Limit(limit).Find(&out).Error
	return out, err
}

// SetScheduleSpec records a schedule's new cron or interval and note.
func (s *ReportStore) SetScheduleSpec(ctx context.Context, id string, cron *string, everySeconds *int64, note string) error {
	return s.db.WithContext(ctx).Model(&Schedule{}).Where("id = ?", id).
		Updates(map[string]any{"cron": cron, "every_seconds": everySeconds, "note": note, "updated_at": Now()}).Error
}

// SetSchedulePaused records a pause or resume.
func (s *ReportStore) SetSchedulePaused(ctx context.Context, orgID, id string, paused bool) (*Schedule, error) {
	res := s.db.WithContext(ctx).Model(&Schedule{}).Where("organization_id = ? AND id = ?", orgID, id).
		Updates(map[string]any{"paused": paused, "updated_at": Now()})
	if res.Error != nil {
		return nil, res.Error
	}
	return s.GetSchedule(ctx, orgID, id)
}

// DeleteSchedule forgets a schedule.
func (s *ReportStore) DeleteSchedule(ctx context.Context, orgID, id string) error {
	return remove[Schedule](s.conn(ctx), orgID, id, "schedule "+id)
}
