package models

import (
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
)

// Kinds of approver.
const (
	ApproverMember = "member"
	ApproverGuest  = "guest"
)

// RefsOf names each of the organisation's people among personIDs as the
// directory has them now, by id. A person the directory no longer has
// (a guest removed since) keeps their id and kind, without a name or
// address.
func RefsOf(tx *gorm.DB, orgID string, personIDs []string) (map[string]PersonRef, error) {
	memberIDs, guestIDs := byKind(personIDs)
	var members []Member
	if len(memberIDs) > 0 {
		if err := tx.Where("organization_id = ? AND id IN ?", orgID, memberIDs).Find(&members).Error; err != nil {
			return nil, err
		}
	}
	var guests []Guest
	if len(guestIDs) > 0 {
		if err := tx.Where("organization_id = ? AND id IN ?", orgID, guestIDs).Find(&guests).Error; err != nil {
			return nil, err
		}
	}
	known := make(map[string]PersonRef, len(personIDs))
	for _, id := range personIDs {
		kind := ApproverMember
		if ids.HasPrefix(id, ids.Guest) {
			kind = ApproverGuest
		}
		known[id] = PersonRef{ID: id, Kind: kind}
	}
	for _, m := range members {
		known[m.ID] = PersonRef{ID: m.ID, Name: m.Name, Email: m.Email, Kind: ApproverMember}
	}
	for _, g := range guests {
		known[g.ID] = PersonRef{ID: g.ID, Name: g.Name, Email: g.Email, Kind: ApproverGuest}
	}
	return known, nil
}

// byKind splits people's ids into members' and guests', so that each
// table is read only for the ids of its kind: most requests ask members
// alone, and a read is a round trip.
func byKind(personIDs []string) (memberIDs, guestIDs []string) {
	for _, id := range personIDs {
		if ids.HasPrefix(id, ids.Guest) {
			guestIDs = append(guestIDs, id)
		} else {
			memberIDs = append(memberIDs, id)
		}
	}
	return memberIDs, guestIDs
}
