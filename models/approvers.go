package models

import (
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/states"
)

// The approver index (ApprovalApprover) answers "what may this person
// decide". It is written with the record: at creation, and by the
// workflow's persist path when the approvers change.

// insertApprovers indexes personIDs as approvers of approval id.
func insertApprovers(tx *gorm.DB, id string, personIDs []string) error {
	if len(personIDs) == 0 {
		return nil
	}
	rows := make([]ApprovalApprover, len(personIDs))
	for i, p := range personIDs {
		rows[i] = ApprovalApprover{ApprovalID: id, PersonID: p}
	}
	return tx.Create(&rows).Error
}

// replaceApprovers makes the index of approval id list personIDs.
func replaceApprovers(tx *gorm.DB, id string, personIDs []string) error {
	if err := tx.Where("approval_id = ?", id).Delete(&ApprovalApprover{}).Error; err != nil {
		return err
	}
	return insertApprovers(tx, id, personIDs)
}

// pendingApprovalsOf lists the ids of the organisation's pending approvals
// that personID may decide, oldest first.
func pendingApprovalsOf(tx *gorm.DB, orgID, personID string) ([]string, error) {
	var out []string
	err := tx.Model(&Approval{}).Where("organization_id = ? AND status = ?", orgID, states.Pending).
		Where("id IN (?)", tx.Model(&ApprovalApprover{}).Select("approval_id").Where("person_id = ?", personID)).
		Order("id").Pluck("id", &out).Error
	return out, err
}
