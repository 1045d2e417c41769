package models

import (
	"context"
	"time"

	"gorm.io/gorm"

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

// PutDataset stores data as the report's dataset name, replacing one of
// that name, and reports whether it was new. A new one beyond
// MaxDatasets is refused; the report's row is locked so two new ones
// cannot both take the last place.
func (s *ReportStore) PutDataset(ctx context.Context, orgID, idOrSlug, name string, data []byte) (*Dataset, bool, error) {
	var d Dataset
	created := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := getReport(tx.Clauses(lockForUpdate(tx)...), orgID, idOrSlug)
		if err != nil {
			return err
		}
		now := Now()
		res := tx.Model(&Dataset{}).Where("report_id = ? AND name = ?", r.ID, name).
			Updates(map[string]any{"data": data, "bytes": len(data), "updated_at": now})
		if res.Error != nil || res.RowsAffected == 1 {
			if res.Error == nil {
				err = tx.Where("report_id = ? AND name = ?", r.ID, name).Take(&d).Error
			}
			return err
		}
		var n int64
		if err := tx.Model(&Dataset{}).Where("report_id = ?", r.ID).Count(&n).Error; err != nil {
			return err
		}
		if n >= MaxDatasets {
			return apperr.Field(apperr.LimitReached, "name", "report %s already has %d datasets, the most it may have; delete one first", r.Slug, MaxDatasets)
		}
		d = Dataset{ReportID: r.ID, Name: name, OrganizationID: orgID, Data: data, Bytes: len(data), CreatedAt: now, UpdatedAt: now}
		created = true
		return tx.Create(&d).Error
	})
	return &d, created, err
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
