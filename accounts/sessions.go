package accounts

import (
	"context"
	"errors"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/models"
)

const (
	// sessionPrefix names session ids; a session id is safe to log, its
	// token is not.
	sessionPrefix = "ses"
	// touchEvery spares a database write on every page view: last-seen
	// only needs minute precision against a seven-day idle limit.
	touchEvery = time.Minute
	// maxLiveLinks bounds the unused links one person can hold, so the
	// sign-in form cannot be used to flood someone's mailbox.
	maxLiveLinks = 5
)

// LoadSession finds the session for a cookie's token and whom it signs
// in. One that has ended (models.SessionLifetime after sign-in, or
// models.SessionIdleTimeout after last use), or whose person was removed
// or deactivated, is ErrSessionInvalid.
func (s *Service) LoadSession(ctx context.Context, token string) (*models.Session, *models.Person, error) {
	if token == "" {
		return nil, nil, ErrSessionInvalid
	}
	sess, err := s.store.SessionByToken(ctx, models.HashSecret(token))
	if apperr.Is(err, apperr.NotFound) {
		return nil, nil, ErrSessionInvalid
	}
	if err != nil {
		return nil, nil, err
	}
	p, err := SessionPerson(ctx, s.store, sess)
	if err != nil {
		return nil, nil, err
	}
	return sess, p, nil
}

// People reads a member or a guest by id (models.Store).
type People interface {
	PersonByID(ctx context.Context, orgID, personID string) (*models.Person, error)
}

// SessionPerson is whom sess signs in, or ErrSessionInvalid once it has
// ended or its person was removed or deactivated: the rule the report
// hosts' reader sessions share.
func SessionPerson(ctx context.Context, people People, sess *models.Session) (*models.Person, error) {
	if !models.Now().Before(sess.EndsAt()) {
		return nil, ErrSessionInvalid
	}
	p, err := activeIn(ctx, people, sess.OrganizationID, sess.PersonID)
	if apperr.Is(err, apperr.NotFound) || errors.Is(err, ErrPersonInactive) {
		return nil, ErrSessionInvalid
	}
	return p, err
}

// Active refuses a person who may no longer sign in or act: a member an
// administrator deactivated is ErrPersonInactive.
func Active(p *models.Person) error {
	if p.Deactivated() {
		return ErrPersonInactive
	}
	return nil
}

// activeIn reads a member or a guest who may sign in (Active).
func activeIn(ctx context.Context, people People, orgID, personID string) (*models.Person, error) {
	p, err := people.PersonByID(ctx, orgID, personID)
	if err == nil {
		err = Active(p)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// TouchSession records that sess was just used, pushing back its idle
// end; it writes at most once a minute per session.
func (s *Service) TouchSession(ctx context.Context, sess *models.Session) error {
	now := models.Now()
	if now.Sub(sess.LastSeenAt) < touchEvery {
		return nil
	}
	err := s.store.SaveSessionSeen(ctx, sess.ID, now)
	if err == nil {
		sess.LastSeenAt = now
	}
	return err
}

// CreateSession signs personID of orgID in and returns the session with
// its token, which goes into the cookie only and cannot be recovered
// later. A deactivated member is refused; the person's ended sessions are
// removed on the way.
func (s *Service) CreateSession(ctx context.Context, orgID, personID string) (*models.Session, string, error) {
	token := models.NewToken()
	now := models.Now()
	sess := &models.Session{ID: ids.New(sessionPrefix), TokenHash: models.HashSecret(token), OrganizationID: orgID, PersonID: personID,
		CSRFSecret: models.NewToken(), CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(models.SessionLifetime)}
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		if _, err := activeIn(ctx, s.store, orgID, personID); err != nil {
			return err
		}
		return s.store.InsertSession(ctx, sess)
	})
	if err != nil {
		return nil, "", err
	}
	return sess, token, nil
}

// DeleteSession ends a session, and the browser's push subscription made
// in it; one already gone is no error. The pages end a browser's session
// this way before signing it in again, so a session planted before sign-in
// never signs anyone in.
func (s *Service) DeleteSession(ctx context.Context, orgID, id string) error {
	return s.store.DeleteSession(ctx, orgID, id)
}

// CreateSignInLinks makes one link for each active member and each guest
// with email, in every organisation, for the pages to email: sign-in
// starts before anyone knows the organisation, so this is the one lookup
// across tenants. An unknown address gets none and no error, so the caller
// answers the same whatever the address; a person holding maxLiveLinks
// unused links gets no new one.
func (s *Service) CreateSignInLinks(ctx context.Context, email string) ([]models.IssuedSignInLink, error) {
	var out []models.IssuedSignInLink
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		people, err := s.store.PeopleWithEmail(ctx, email)
		if err != nil {
			return err
		}
		now := models.Now()
		for _, p := range people {
			if Active(p) != nil {
				continue
			}
			live, err := s.store.LiveSignInLinks(ctx, p.ID(), now)
			if err != nil {
				return err
			}
			if live >= maxLiveLinks {
				continue
			}
			link, err := s.issue(ctx, p, now)
			if err != nil {
				return err
			}
			out = append(out, link)
		}
		return nil
	})
	return out, err
}

// IssueSignInLink makes a sign-in link for p handed to the browser rather
// than emailed (single sign-on's choice of organisation): the emailed
// link's rules apply when it is used, but it is not held to the limit on
// live links, which exists to protect mailboxes.
func (s *Service) IssueSignInLink(ctx context.Context, p *models.Person) (models.IssuedSignInLink, error) {
	return s.issue(ctx, p, models.Now())
}

func (s *Service) issue(ctx context.Context, p *models.Person, now time.Time) (models.IssuedSignInLink, error) {
	token := models.NewToken()
	l := &models.SignInLink{TokenHash: models.HashSecret(token), OrganizationID: p.Organization.ID, PersonID: p.ID(),
		ExpiresAt: now.Add(models.SignInLinkLifetime), CreatedAt: now}
	if err := s.store.InsertSignInLink(ctx, l); err != nil {
		return models.IssuedSignInLink{}, err
	}
	return models.IssuedSignInLink{Token: token, Person: p, ExpiresAt: l.ExpiresAt}, nil
}

// PeekSignInLink returns whom the link signs in without using it: mail
// scanners open links, and opening must not use one up.
func (s *Service) PeekSignInLink(ctx context.Context, token string) (*models.Person, error) {
	_, p, err := s.checkLink(ctx, token, models.Now())
	return p, err
}

// ConsumeSignInLink uses the link up and returns whom it signs in. A link
// works once (of two racing uses one wins), before it expires, and only
// while its member is active.
func (s *Service) ConsumeSignInLink(ctx context.Context, token string) (*models.Person, error) {
	var p *models.Person
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		now := models.Now()
		l, person, err := s.checkLink(ctx, token, now)
		if err != nil {
			return err
		}
		used, err := s.store.MarkSignInLinkUsed(ctx, l.TokenHash, now)
		if err != nil {
			return err
		}
		if !used {
			return ErrSignInLinkUsed
		}
		p = person
		return nil
	})
	return p, err
}

// checkLink finds the link for token (under its row lock in a
// transaction) and refuses it when used, expired or its person can no
// longer sign in.
func (s *Service) checkLink(ctx context.Context, token string, now time.Time) (*models.SignInLink, *models.Person, error) {
	if token == "" {
		return nil, nil, ErrSignInLinkInvalid
	}
	l, err := s.store.SignInLink(ctx, models.HashSecret(token))
	if apperr.Is(err, apperr.NotFound) {
		return nil, nil, ErrSignInLinkInvalid
	}
	if err != nil {
		return nil, nil, err
	}
	switch {
	case l.UsedAt != nil:
		return nil, nil, ErrSignInLinkUsed
	case !now.Before(l.ExpiresAt):
		return nil, nil, ErrSignInLinkExpired
	}
	p, err := activeIn(ctx, s.store, l.OrganizationID, l.PersonID)
	return l, p, err
}
