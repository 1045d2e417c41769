package models

// PersonRef names a person asked, as they were when asked.
type PersonRef struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
	// Kind is ApproverMember or ApproverGuest.
	Kind string `json:"kind"`
	// Via is how the request named them, as resolved when it was made;
	// empty on records from before it was kept.
	Via []Via `json:"via,omitempty"`
}

// Via is one way a request named a person: the request field, and the
// member, guest, team, group or workspace (or everyone, or the default
// of owners and administrators) it named there.
type Via struct {
	Field string `json:"field"`
	Kind  string `json:"kind"`
	ID    string `json:"id,omitempty"`
	Name  string `json:"name"`
}

// ViaDefault is how a request that named nobody reached its owners and
// administrators.
func ViaDefault(field string) Via {
	return Via{Field: field, Kind: "default", Name: "the owners and administrators"}
}

// ViaDelegation is the kind of Via that reached a delegate: the person
// away whom they stand in for (requests.StandIns).
const ViaDelegation = "delegation"

// StandsInFor is the person away whom someone reached as via stands in
// for: only when every way they were reached is a delegation, since one
// also named in their own right acts in their own name.
func StandsInFor(via []Via) (Via, bool) {
	for _, v := range via {
		if v.Kind != ViaDelegation {
			return Via{}, false
		}
	}
	if len(via) == 0 {
		return Via{}, false
	}
	return via[0], true
}

// Ref names p as asked now.
func (p *Person) Ref() PersonRef { return p.DirectoryRef().Shown() }

// DirectoryRef is p as the directory has them: their name as set, "" when
// none is.
func (p *Person) DirectoryRef() PersonRef {
	if p.Guest != nil {
		return PersonRef{ID: p.Guest.ID, Name: p.Guest.Name, Email: p.Guest.Email, Kind: ApproverGuest}
	}
	return PersonRef{ID: p.Member.ID, Name: p.Member.Name, Email: p.Member.Email, Kind: ApproverMember}
}

// Shown is r named as a person's DisplayName names them: by their email
// when they have no name.
func (r PersonRef) Shown() PersonRef {
	if r.Name == "" {
		r.Name = r.Email
	}
	return r
}
