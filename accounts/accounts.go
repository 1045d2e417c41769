// Package accounts is who someone is and how they sign in: an API key or
// member token resolved to its principal, a person's page sessions
// (load, touch, create, end), sign-in links (made for an address and
// emailed by the pages, issued to a browser by single sign-on, peeked at
// and used once), and the people an address belongs to (single sign-on,
// Slack's match of a clicker to a member). It is the one code path behind
// the API's authentication, the pages' sign-in and the Slack app, so each
// refuses a revoked key, an ended session, a used link or a deactivated
// member alike. The rules that need a transaction (a link used once
// between racing clicks, the cap on live links) stay in the store's.
package accounts

import (
	"context"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// Store is what the service reads and writes through: keys, members
// and organisations, sessions and sign-in links.
type Store interface {
	Authenticate(ctx context.Context, secret string) (models.Actor, error)
	GetOrganization(ctx context.Context, id string) (*models.Organization, error)
	ActiveMemberByEmail(ctx context.Context, orgID, email string) (*models.Member, error)
	PeopleWithEmail(ctx context.Context, email string) ([]*models.Person, error)
	CreateSession(ctx context.Context, orgID, personID string) (*models.Session, string, error)
	LoadSession(ctx context.Context, token string) (*models.Session, *models.Person, error)
	TouchSession(ctx context.Context, sess *models.Session) error
	DeleteSession(ctx context.Context, orgID, id string) error
	CreateSignInLinks(ctx context.Context, email string) ([]models.IssuedSignInLink, error)
	IssueSignInLink(ctx context.Context, p *models.Person) (models.IssuedSignInLink, error)
	PeekSignInLink(ctx context.Context, token string) (*models.Person, error)
	ConsumeSignInLink(ctx context.Context, token string) (*models.Person, error)
}

// Service authenticates callers and signs people in.
type Service struct {
	store Store
}

// New returns the service.
func New(store Store) *Service {
	return &Service{store: store}
}

// Authenticate finds whom a bearer secret (an API key or a member token)
// acts for; a missing, unknown or revoked one, or a token whose member is
// deactivated, is apperr.Unauthorized.
func (s *Service) Authenticate(ctx context.Context, secret string) (models.Actor, error) {
	return s.store.Authenticate(ctx, secret)
}

// LoadSession finds the session for a cookie's token and whom it signs
// in. One that has ended (models.SessionLifetime after sign-in, or
// models.SessionIdleTimeout after last use), or whose person was removed
// or deactivated, is models.ErrSessionInvalid.
func (s *Service) LoadSession(ctx context.Context, token string) (*models.Session, *models.Person, error) {
	return s.store.LoadSession(ctx, token)
}

// TouchSession records that sess was just used, pushing back its idle
// end; it writes at most once a minute per session.
func (s *Service) TouchSession(ctx context.Context, sess *models.Session) error {
	return s.store.TouchSession(ctx, sess)
}

// CreateSession signs personID of orgID in and returns the session with
// its token, which goes into the cookie only. A deactivated member is
// refused.
func (s *Service) CreateSession(ctx context.Context, orgID, personID string) (*models.Session, string, error) {
	return s.store.CreateSession(ctx, orgID, personID)
}

// DeleteSession ends a session, and the browser's push subscription made
// in it; one already gone is no error. The pages end a browser's session
// this way before signing it in again, so a session planted before sign-in
// never signs anyone in.
func (s *Service) DeleteSession(ctx context.Context, orgID, id string) error {
	return s.store.DeleteSession(ctx, orgID, id)
}

// CreateSignInLinks makes one link for each active member and each guest
// with email, in every organisation, for the pages to email. An unknown
// address gets none and no error, so the caller answers the same whatever
// the address; a person holding too many unused links gets no new one.
func (s *Service) CreateSignInLinks(ctx context.Context, email string) ([]models.IssuedSignInLink, error) {
	return s.store.CreateSignInLinks(ctx, email)
}

// PeekSignInLink returns whom the link signs in without using it: mail
// scanners open links, and opening must not use one up.
func (s *Service) PeekSignInLink(ctx context.Context, token string) (*models.Person, error) {
	return s.store.PeekSignInLink(ctx, token)
}

// ConsumeSignInLink uses the link up and returns whom it signs in. A link
// works once (of two racing uses one wins), before it expires, and only
// while its member is active.
func (s *Service) ConsumeSignInLink(ctx context.Context, token string) (*models.Person, error) {
	return s.store.ConsumeSignInLink(ctx, token)
}

// IssueSignInLink makes a sign-in link for p handed to the browser rather
// than emailed (single sign-on's choice of organisation): the emailed
// link's rules apply when it is used.
func (s *Service) IssueSignInLink(ctx context.Context, p *models.Person) (models.IssuedSignInLink, error) {
	return s.store.IssueSignInLink(ctx, p)
}

// ErrNoAccount is single sign-on's refusal of an address no organisation
// has a member or guest with.
var ErrNoAccount = apperr.New(apperr.Forbidden, "no organisation has a member or guest with this address")

// SingleSignOn returns whom single sign-on may sign in once the identity
// provider has vouched for email: its active members and its guests, in
// every organisation, members first, each with its organisation. None at
// all is ErrNoAccount; only deactivated members is
// models.ErrPersonInactive, so the page can say which.
func (s *Service) SingleSignOn(ctx context.Context, email string) ([]*models.Person, error) {
	people, err := s.store.PeopleWithEmail(ctx, email)
	if err != nil {
		return nil, err
	}
	var active []*models.Person
	for _, p := range people {
		if p.Member == nil || p.Member.Active {
			active = append(active, p)
		}
	}
	switch {
	case len(people) == 0:
		return nil, ErrNoAccount
	case len(active) == 0:
		return nil, models.ErrPersonInactive
	}
	return active, nil
}

// ActiveMemberByEmail is the organisation's active member with email, as
// another system (Slack) names a person, acting; no such member is
// apperr.NotFound.
func (s *Service) ActiveMemberByEmail(ctx context.Context, orgID, email string) (models.Actor, error) {
	m, err := s.store.ActiveMemberByEmail(ctx, orgID, email)
	if err != nil {
		return models.Actor{}, err
	}
	org, err := s.store.GetOrganization(ctx, orgID)
	if err != nil {
		return models.Actor{}, err
	}
	return (&models.Person{Organization: org, Member: m}).Actor(), nil
}
