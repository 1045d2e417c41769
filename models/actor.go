package models

// SystemActor names Assent itself in audit entries: what its timers did
// (expiry, reminders, escalation).
var SystemActor = Actor{ID: "system", Name: "Assent"}

// Actor is who acts, the one identity every service takes: an API key (an
// agent's or an administrator's), a person (a member, with a member token
// or on the pages, or a guest on the pages), or Assent itself. A record
// that keeps who acted keeps ID, Name and IsPerson; the rest is set for
// the caller of a service.
type Actor struct {
	// ID is a member or guest id for a person, a key id for a key.
	ID   string
	Name string
	// IsPerson is set when a person acts (a member token, a page), not a
	// key.
	IsPerson bool
	// Administrator is set for an owner or administrator and for an admin
	// key: they may withdraw a request or flow someone else started.
	Administrator bool

	// Organization is the caller's organisation.
	Organization *Organization
	// Key is the API key or member token a call came with; nil on the
	// pages and for Assent itself.
	Key *APIKey
	// Person is the member or guest who acts, when one does.
	Person *Person
}

// KeyActor is who a call with key k acts for: m, the member a member
// token belongs to, or else the key itself (an agent's or an
// administrator's).
func KeyActor(org *Organization, k *APIKey, m *Member) Actor {
	if m != nil {
		a := (&Person{Organization: org, Member: m}).Actor()
		a.Key = k
		return a
	}
	return Actor{ID: k.ID, Name: k.Name, Administrator: k.Kind == KeyAdmin, Organization: org, Key: k}
}

// OrgID is the caller's organisation id.
func (a Actor) OrgID() string {
	if a.Organization == nil {
		return ""
	}
	return a.Organization.ID
}

// Member is the member who acts, or nil for a key or a guest.
func (a Actor) Member() *Member {
	if a.Person == nil {
		return nil
	}
	return a.Person.Member
}

// HasScope reports whether the call's key allows scope; the pages carry
// no key and check no scope.
func (a Actor) HasScope(scope string) bool { return a.Key != nil && a.Key.Scopes.Contains(scope) }
