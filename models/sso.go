package models

import (
	"context"
)

// PeopleWithEmail returns every member and guest with this email, in every
// organisation, each with its organisation, ordered as CreateSignInLinks
// orders them (members, then guests, by id). It is single sign-on's lookup,
// made once the identity provider has vouched for the address; like the
// emailed link it is the one lookup across tenants. Unlike
// CreateSignInLinks it keeps deactivated members, so the caller can say
// why sign-in is refused; Member.Active tells them apart.
func (s *SessionStore) PeopleWithEmail(ctx context.Context, email string) ([]*Person, error) {
	email = NormalizeEmail(email)
	if email == "" {
		return nil, nil
	}
	db := s.conn(ctx)
	var members []Member
	if err := db.Where("email = ?", email).Order("id").Find(&members).Error; err != nil {
		return nil, err
	}
	var guests []Guest
	if err := db.Where("email = ?", email).Order("id").Find(&guests).Error; err != nil {
		return nil, err
	}
	people := make([]*Person, 0, len(members)+len(guests))
	for i := range members {
		people = append(people, &Person{Member: &members[i]})
	}
	for i := range guests {
		people = append(people, &Person{Guest: &guests[i]})
	}
	orgs := map[string]*Organization{}
	for _, p := range people {
		id := p.orgID()
		if orgs[id] == nil {
			org, err := organization(db, id)
			if err != nil {
				return nil, err
			}
			orgs[id] = org
		}
		p.Organization = orgs[id]
	}
	return people, nil
}
