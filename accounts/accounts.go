// Package accounts is who someone is and how they sign in: an API key or
// member token resolved to its principal, a person's page sessions
// (load, touch, create, end), sign-in links (made for an address and
// emailed by the pages, issued to a browser by single sign-on, peeked at
// and used once), and the people an address belongs to (single sign-on,
// Slack's match of a clicker to a member). It is the one code path behind
// the API's authentication, the pages' sign-in and the Slack app, so each
// refuses a revoked key, an ended session, a used link or a deactivated
// member alike, and decides the rules of links and sessions
// (sessions.go): a link used once between racing clicks, the cap on live
// links, the touch's minute.
package accounts

import (
	"context"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/keycheck"
	"github.com/assent-hq/assent/models"
)

// Store is what the service reads and writes through: keys, members
// and organisations, sessions and sign-in links.
type Store interface {
	Tx(ctx context.Context, fn func(ctx context.Context) error) error
	KeyBySecret(ctx context.Context, secret string) (*models.APIKey, error)
	GetOrganization(ctx context.Context, id string) (*models.Organization, error)
	ActiveMemberByEmail(ctx context.Context, orgID, email string) (*models.Member, error)
	PeopleWithEmail(ctx context.Context, email string) ([]*models.Person, error)
	People
	InsertSession(ctx context.Context, sess *models.Session) error
	SessionByToken(ctx context.Context, hash string) (*models.Session, error)
	SaveSessionSeen(ctx context.Context, id string, at time.Time) error
	DeleteSession(ctx context.Context, orgID, id string) error
	SignInLink(ctx context.Context, hash string) (*models.SignInLink, error)
	LiveSignInLinks(ctx context.Context, personID string, now time.Time) (int64, error)
	InsertSignInLink(ctx context.Context, l *models.SignInLink) error
	MarkSignInLinkUsed(ctx context.Context, hash string, now time.Time) (bool, error)
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
// deactivated, is apperr.Unauthorized. Under keycheck.Once a key is read
// once.
func (s *Service) Authenticate(ctx context.Context, secret string) (models.Actor, error) {
	return keycheck.Do(ctx, secret, func() (models.Actor, error) { return s.authenticate(ctx, secret) })
}

// ForCreate is the context of a create by a: its organisation's settings
// need be no more recent than the row a's key's read brought
// (models.SeenSettings), so it reads them from the process's copy while it
// is current. Not for a request that writes them: it would not read its
// own write.
func ForCreate(ctx context.Context, a models.Actor) context.Context {
	return models.SeenSettings(ctx, a.Organization)
}

func (s *Service) authenticate(ctx context.Context, secret string) (models.Actor, error) {
	if secret == "" {
		return models.Actor{}, errUnauthorized
	}
	k, err := s.store.KeyBySecret(ctx, secret)
	switch {
	case apperr.Is(err, apperr.NotFound):
		return models.Actor{}, errUnauthorized
	case err != nil:
		return models.Actor{}, err
	case k.MemberID == nil:
		return models.KeyActor(k.Organization, k, nil), nil
	case k.Member == nil:
		return models.Actor{}, apperr.New(apperr.Unauthorized, "the member this token belongs to is gone")
	case !k.Member.Active:
		return models.Actor{}, apperr.New(apperr.Unauthorized, "the member this token belongs to is inactive")
	}
	return models.KeyActor(k.Organization, k, k.Member), nil
}

var errUnauthorized = apperr.New(apperr.Unauthorized, "the API key is missing, unknown or revoked")

// ErrNoAccount is single sign-on's refusal of an address no organisation
// has a member or guest with.
var ErrNoAccount = apperr.New(apperr.Forbidden, "no organisation has a member or guest with this address")

// SingleSignOn returns whom single sign-on may sign in once the identity
// provider has vouched for email: its active members and its guests, in
// every organisation, members first, each with its organisation. None at
// all is ErrNoAccount; only deactivated members is
// ErrPersonInactive, so the page can say which.
func (s *Service) SingleSignOn(ctx context.Context, email string) ([]*models.Person, error) {
	people, err := s.store.PeopleWithEmail(ctx, email)
	if err != nil {
		return nil, err
	}
	var active []*models.Person
	for _, p := range people {
		if Active(p) == nil {
			active = append(active, p)
		}
	}
	switch {
	case len(people) == 0:
		return nil, ErrNoAccount
	case len(active) == 0:
		return nil, ErrPersonInactive
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
