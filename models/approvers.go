package models

import (
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
)

// loadApprovals fills what an approval's read shows beside its row: the
// people it asks and its execution.
func loadApprovals(tx *gorm.DB, orgID string, rows []*Approval) error {
	if err := resolveApprovers(tx, orgID, rows); err != nil {
		return err
	}
	return loadExecutions(tx, orgID, rows)
}

// Kinds of approver.
const (
	ApproverMember = "member"
	ApproverGuest  = "guest"
)

// resolveApprovers fills rows' ResolvedApprovers, in ApproverIDs order,
// from the organisation's directory. A guest removed since keeps their id
// and kind, without a name or address.
func resolveApprovers(tx *gorm.DB, orgID string, rows []*Approval) error {
	// Each table is read only for the ids of its kind: most requests ask
	// members alone, and a read is a round trip.
	var memberIDs, guestIDs []string
	for _, a := range rows {
		for _, id := range a.ApproverIDs {
			if ids.HasPrefix(id, ids.Guest) {
				guestIDs = append(guestIDs, id)
			} else {
				memberIDs = append(memberIDs, id)
			}
		}
	}
	var members []Member
	if len(memberIDs) > 0 {
		if err := tx.Where("organization_id = ? AND id IN ?", orgID, memberIDs).Find(&members).Error; err != nil {
			return err
		}
	}
	var guests []Guest
	if len(guestIDs) > 0 {
		if err := tx.Where("organization_id = ? AND id IN ?", orgID, guestIDs).Find(&guests).Error; err != nil {
			return err
		}
	}
	known := make(map[string]PersonRef, len(members)+len(guests))
	for _, m := range members {
		known[m.ID] = PersonRef{ID: m.ID, Name: m.Name, Email: m.Email, Kind: ApproverMember}
	}
	for _, g := range guests {
		known[g.ID] = PersonRef{ID: g.ID, Name: g.Name, Email: g.Email, Kind: ApproverGuest}
	}
	for _, a := range rows {
		a.ResolvedApprovers = make([]PersonRef, len(a.ApproverIDs))
		for i, id := range a.ApproverIDs {
			p, ok := known[id]
			if !ok {
				p = PersonRef{ID: id, Kind: ApproverMember}
				if ids.HasPrefix(id, ids.Guest) {
					p.Kind = ApproverGuest
				}
			}
			p.Via = a.ApproverVia.V[id]
			a.ResolvedApprovers[i] = p
		}
	}
	return nil
}

// StandsInFor is the person away whom personID stands in for on a, when
// they were asked only as a delegate (see models.StandsInFor).
func (a *Approval) StandsInFor(personID string) (Via, bool) {
	return StandsInFor(a.ApproverVia.V[personID])
}
