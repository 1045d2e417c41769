package models

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// CollectionDraft is a respondent's unsubmitted answers, seen only by its
// author. Drafts never touch the workflow.
type CollectionDraft struct {
	CollectionID string  `gorm:"primaryKey;size:40"`
	PersonID     string  `gorm:"primaryKey;size:40"`
	Answers      RawJSON `gorm:"type:text;not null"`
	UpdatedAt    time.Time
}

// SaveDraft keeps personID's unsubmitted answers to an open collection.
func (s *RequestStore) SaveDraft(ctx context.Context, collectionID, personID string, answers json.RawMessage) error {
	d := CollectionDraft{CollectionID: collectionID, PersonID: personID, Answers: RawJSON(answers), UpdatedAt: Now()}
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "collection_id"}, {Name: "person_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"answers", "updated_at"}),
	}).Create(&d).Error
}

// Draft returns personID's draft of a collection, or nil.
func (s *RequestStore) Draft(ctx context.Context, collectionID, personID string) (*CollectionDraft, error) {
	var d CollectionDraft
	err := s.db.WithContext(ctx).Where("collection_id = ? AND person_id = ?", collectionID, personID).Take(&d).Error
	if err == gorm.ErrRecordNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("draft of %s: %w", collectionID, err)
	}
	return &d, nil
}
