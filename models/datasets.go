package models

import (
	"context"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
)

// Dataset is a named JSON document of a report, kept as sent and read by
// the report at _data/<name>. Datasets are not versioned: rolling back
// restores markup, not data.
type Dataset struct {
	ReportID       string `gorm:"primaryKey;size:40"`
	Name           string `gorm:"primaryKey;size:64"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Data           []byte `gorm:"not null"`
	Bytes          int    `gorm:"not null"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Limits of a report's datasets.
const (
	MaxDatasets     = 25
	MaxDatasetBytes = 5 << 20
)

// ReplaceDataset writes data over the report's dataset name, in ctx's
// transaction, and returns it; nil when the report has none of that name.
func (s *ReportStore) ReplaceDataset(ctx context.Context, r *Report, name string, data []byte) (*Dataset, error) {
	st, err := inTx(ctx)
	if err != nil {
		return nil, err
	}
	res := st.tx.Model(&Dataset{}).Where("report_id = ? AND name = ?", r.ID, name).
		Updates(map[string]any{"data": data, "bytes": len(data), "updated_at": Now()})
	if res.Error != nil || res.RowsAffected == 0 {
		return nil, res.Error
	}
	var d Dataset
	return &d, st.tx.Where("report_id = ? AND name = ?", r.ID, name).Take(&d).Error
}

// CountDatasets counts the report's datasets, in ctx's transaction.
func (s *ReportStore) CountDatasets(ctx context.Context, r *Report) (int64, error) {
	var n int64
	return n, s.conn(ctx).Model(&Dataset{}).Where("report_id = ?", r.ID).Count(&n).Error
}

// InsertDataset writes d, in ctx's transaction.
func (s *ReportStore) InsertDataset(ctx context.Context, d *Dataset) error {
	now := Now()
	d.CreatedAt, d.UpdatedAt = now, now
	return insertIn(ctx, d)
}

// GetDataset returns one dataset of the report.
func (s *ReportStore) GetDataset(ctx context.Context, orgID, idOrSlug, name string) (*Dataset, error) {
	db := s.db.WithContext(ctx)
	r, err := getReport(db, orgID, idOrSlug)
	if err != nil {
		return nil, err
	}
	var d Dataset
	if err := db.Where("report_id = ? AND name = ?", r.ID, name).Take(&d).Error; err != nil {
		return nil, notFound(err, "dataset "+name)
	}
	return &d, nil
}

// ListDatasets returns the report's datasets by name, without their data.
func (s *ReportStore) ListDatasets(ctx context.Context, orgID, idOrSlug string) ([]Dataset, error) {
	db := s.db.WithContext(ctx)
	r, err := getReport(db, orgID, idOrSlug)
	if err != nil {
		return nil, err
	}
	var out []Dataset
	err = db.Select("report_id, name, organization_id, bytes, created_at, updated_at").Where("report_id = ?", r.ID).Order("name").Find(&out).Error
	return out, err
}

// DeleteDataset removes one dataset of the report.
func (s *ReportStore) DeleteDataset(ctx context.Context, orgID, idOrSlug, name string) error {
	db := s.db.WithContext(ctx)
	r, err := getReport(db, orgID, idOrSlug)
	if err != nil {
		return err
	}
	res := db.Where("report_id = ? AND name = ?", r.ID, name).Delete(&Dataset{})
	if res.Error == nil && res.RowsAffected == 0 {
		return apperr.New(apperr.NotFound, "dataset %s not found", name)
	}
	return res.Error
}
