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
// address. It reads only columns every release has had, so that a
// migration may use it.
func RefsOf(tx *gorm.DB, orgID string, personIDs []string) (map[string]PersonRef, error) {
	memberIDs, guestIDs := byKind(personIDs)
	known := make(map[string]PersonRef, len(personIDs))
	for _, id := range personIDs {
		known[id] = refByID(id)
	}
	for _, of := range []struct {
		table string
		ids   []string
	}{{"members", memberIDs}, {"guests", guestIDs}} {
		if len(of.ids) == 0 {
			continue
		}
		var found []struct{ ID, Name, Email string }
		if err := tx.Table(of.table).Select("id, name, email").Where("organization_id = ? AND id IN ?", orgID, of.ids).
			Find(&found).Error; err != nil {
			return nil, err
		}
		for _, p := range found {
			ref := known[p.ID]
			ref.Name, ref.Email = p.Name, p.Email
			known[p.ID] = ref
		}
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

// refByID names a person by their id and kind alone, as a request names
// someone it knows no more of.
func refByID(id string) PersonRef {
	if ids.HasPrefix(id, ids.Guest) {
		return PersonRef{ID: id, Kind: ApproverGuest}
	}
	return PersonRef{ID: id, Kind: ApproverMember}
}

// AskedAs are the people personIDs name, in order, as asked names them
// (without how they were reached); those asked does not hold are named by
// id and kind alone, for completeAsked or the next read to name.
func AskedAs(personIDs []string, asked []PersonRef) []PersonRef {
	out := make([]PersonRef, len(personIDs))
	for i, id := range personIDs {
		out[i] = refByID(id)
		for _, p := range asked {
			if p.ID == id {
				out[i], out[i].Via = p, nil
				break
			}
		}
	}
	return out
}

// Unnamed are the people among refs known by id alone.
func Unnamed(refs []PersonRef) []string {
	var out []string
	for _, p := range refs {
		if !p.named() {
			out = append(out, p.ID)
		}
	}
	return out
}

// named says whether r holds more of its person than their id.
func (r PersonRef) named() bool { return r.Name != "" || r.Email != "" }
