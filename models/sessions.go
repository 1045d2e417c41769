package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/randtoken"
)

// How long sign-in links and sessions last. A session ends at whichever
// comes first: SessionLifetime after sign-in, or SessionIdleTimeout after
// it was last used.
const (
	SignInLinkLifetime = 15 * time.Minute
	SessionLifetime    = 30 * 24 * time.Hour
	SessionIdleTimeout = 7 * 24 * time.Hour
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

// Errors of sign-in links and sessions. They say what the person can do.
var (
	ErrSignInLinkInvalid = apperr.New(apperr.NotFound, "this sign-in link is not valid; request a new one")
	ErrSignInLinkUsed    = apperr.New(apperr.InvalidState, "this sign-in link has already been used; request a new one")
	ErrSignInLinkExpired = apperr.New(apperr.InvalidState, "this sign-in link has expired (links work for %d minutes); request a new one",
		int(SignInLinkLifetime/time.Minute))
	ErrPersonInactive = apperr.New(apperr.Forbidden, "this account has been deactivated; ask an administrator of the organisation")
	ErrSessionInvalid = apperr.New(apperr.Unauthorized, "the session has ended; sign in again")
)

// SignInLink is an emailed, single-use way in for one person (a member or a
// guest) of one organisation. Only the SHA-256 of its token is stored.
type SignInLink struct {
	TokenHash      string `gorm:"primaryKey;size:64"`
	OrganizationID string `gorm:"size:40;not null;index"`
	// PersonID is a member id or a guest id.
	PersonID  string    `gorm:"size:40;not null;index"`
	ExpiresAt time.Time `gorm:"not null;index"`
	UsedAt    *time.Time
	CreatedAt time.Time `gorm:"not null"`
}

// Session is a signed-in browser. Only the SHA-256 of its token is stored;
// the CSRF secret is kept as is because every form must carry it.
type Session struct {
	ID             string `gorm:"primaryKey;size:40"`
	TokenHash      string `gorm:"size:64;not null;uniqueIndex"`
	OrganizationID string `gorm:"size:40;not null;index"`
	// PersonID is a member id or a guest id.
	PersonID   string    `gorm:"size:40;not null;index"`
	CSRFSecret string    `gorm:"size:64;not null"`
	CreatedAt  time.Time `gorm:"not null"`
	LastSeenAt time.Time `gorm:"not null"`
	// ExpiresAt is the absolute end; EndsAt adds the idle limit.
	ExpiresAt time.Time `gorm:"not null;index"`
}

// EndsAt is when the session stops working unless it is used before.
func (s *Session) EndsAt() time.Time {
	idle := s.LastSeenAt.Add(SessionIdleTimeout)
	if idle.Before(s.ExpiresAt) {
		return idle
	}
	return s.ExpiresAt
}

// Person is someone who signs in: a member or a guest of one organisation.
// Exactly one of Member and Guest is set.
type Person struct {
	Organization *Organization
	Member       *Member
	Guest        *Guest
}

// ID is the member or guest id, the id approvals list their approvers by.
func (p *Person) ID() string {
	if p.Member != nil {
		return p.Member.ID
	}
	return p.Guest.ID
}

// Email is the person's address.
func (p *Person) Email() string {
	if p.Member != nil {
		return p.Member.Email
	}
	return p.Guest.Email
}

// DisplayName is the name, or the email when no name is set.
func (p *Person) DisplayName() string {
	if p.Member != nil {
		return p.Member.DisplayName()
	}
	if p.Guest.Name != "" {
		return p.Guest.Name
	}
	return p.Guest.Email
}

// Actor is the person acting on the pages (no key).
func (p *Person) Actor() Actor {
	return Actor{ID: p.ID(), Name: p.DisplayName(), IsPerson: true, Administrator: p.Member != nil && p.Member.Administers(),
		Organization: p.Organization, Person: p}
}

// IssuedSignInLink is a link just created; Token goes into the email only
// and cannot be recovered later.
type IssuedSignInLink struct {
	Token     string
	Person    *Person
	ExpiresAt time.Time
}

// CreateSignInLinks makes one link for each active member and each guest
// with this email, in every organisation: sign-in starts before anyone
// knows the organisation, so this is the one lookup across tenants. An
// unknown address gets no link and no error, so callers can answer the
// same whatever the address. A person who already holds maxLiveLinks
// unused links gets no new one.
func (s *SessionStore) CreateSignInLinks(ctx context.Context, email string) ([]IssuedSignInLink, error) {
	email = NormalizeEmail(email)
	var out []IssuedSignInLink
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var members []Member
		if err := tx.Where("email = ? AND active", email).Order("id").Find(&members).Error; err != nil {
			return err
		}
		var guests []Guest
		if err := tx.Where("email = ?", email).Order("id").Find(&guests).Error; err != nil {
			return err
		}
		people := make([]*Person, 0, len(members)+len(guests))
		for i := range members {
			people = append(people, &Person{Member: &members[i]})
		}
		for i := range guests {
			people = append(people, &Person{Guest: &guests[i]})
		}
		now := Now()
		for _, p := range people {
			orgID := p.orgID()
			var live int64
			if err := tx.Model(&SignInLink{}).Where("person_id = ? AND used_at IS NULL AND expires_at > ?", p.ID(), now).
				Count(&live).Error; err != nil {
				return err
			}
			if live >= maxLiveLinks {
				continue
			}
			var err error
			if p.Organization, err = organization(tx, orgID); err != nil {
				return err
			}
			token := NewToken()
			l := &SignInLink{TokenHash: HashSecret(token), OrganizationID: orgID, PersonID: p.ID(),
				ExpiresAt: now.Add(SignInLinkLifetime), CreatedAt: now}
			if err := tx.Create(l).Error; err != nil {
				return err
			}
			out = append(out, IssuedSignInLink{Token: token, Person: p, ExpiresAt: l.ExpiresAt})
		}
		return nil
	})
	return out, err
}

// PeekSignInLink returns the link's person without using the link, for the
// page that asks to confirm: mail scanners open links, and opening must not
// use up a single-use link.
func (s *SessionStore) PeekSignInLink(ctx context.Context, token string) (*Person, error) {
	_, p, err := checkLink(s.db.WithContext(ctx), false, token, Now())
	return p, err
}

// ConsumeSignInLink uses the link up and returns whom it signs in. A link
// works once, before it expires, and only while its member is active.
func (s *SessionStore) ConsumeSignInLink(ctx context.Context, token string) (*Person, error) {
	var p *Person
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := Now()
		l, person, err := checkLink(tx, true, token, now)
		if err != nil {
			return err
		}
		// The guard on used_at makes two racing uses produce one winner.
		res := tx.Model(&SignInLink{}).Where("token_hash = ? AND used_at IS NULL", l.TokenHash).Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrSignInLinkUsed
		}
		p = person
		return nil
	})
	return p, err
}

// checkLink finds the link for token and refuses it when used, expired or
// its person can no longer sign in; lock holds the link's row until the
// transaction ends.
func checkLink(db *gorm.DB, lock bool, token string, now time.Time) (*SignInLink, *Person, error) {
	if token == "" {
		return nil, nil, ErrSignInLinkInvalid
	}
	q := db
	if lock {
		q = db.Clauses(lockForUpdate(db)...)
	}
	var l SignInLink
	if err := q.Where("token_hash = ?", HashSecret(token)).Take(&l).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, nil, ErrSignInLinkInvalid
		}
		return nil, nil, err
	}
	switch {
	case l.UsedAt != nil:
		return nil, nil, ErrSignInLinkUsed
	case !now.Before(l.ExpiresAt):
		return nil, nil, ErrSignInLinkExpired
	}
	p, err := loadPerson(db, l.OrganizationID, l.PersonID)
	return &l, p, err
}

// loadPerson reads a member or guest with their organisation; a member
// who was deactivated is refused.
func loadPerson(q *gorm.DB, orgID, personID string) (*Person, error) {
	p := &Person{}
	var err error
	if p.Organization, err = organization(q, orgID); err != nil {
		return nil, err
	}
	if ids.HasPrefix(personID, ids.Guest) {
		if p.Guest, err = take[Guest](q, orgID, personID, "guest"); err != nil {
			return nil, err
		}
		return p, nil
	}
	if p.Member, err = take[Member](q, orgID, personID, "member"); err != nil {
		return nil, err
	}
	if !p.Member.Active {
		return nil, ErrPersonInactive
	}
	return p, nil
}

func organization(q *gorm.DB, id string) (*Organization, error) {
	var org Organization
	err := q.Where("id = ?", id).Take(&org).Error
	return &org, notFound(err, "organization")
}

func (p *Person) orgID() string {
	if p.Member != nil {
		return p.Member.OrganizationID
	}
	return p.Guest.OrganizationID
}

// CreateSession signs a person in and returns the session with its token,
// which goes into the cookie only and cannot be recovered later. The
// person's ended sessions are removed on the way.
func (s *SessionStore) CreateSession(ctx context.Context, orgID, personID string) (*Session, string, error) {
	token := NewToken()
	now := Now()
	sess := &Session{ID: newID(sessionPrefix), TokenHash: HashSecret(token), OrganizationID: orgID, PersonID: personID,
		CSRFSecret: NewToken(), CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SessionLifetime)}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := loadPerson(tx, orgID, personID); err != nil {
			return err
		}
		if err := endedSessions(tx.Where("person_id = ?", personID), now).Delete(&Session{}).Error; err != nil {
			return err
		}
		return tx.Create(sess).Error
	})
	if err != nil {
		return nil, "", err
	}
	return sess, token, nil
}

// LoadSession finds the session for a cookie's token and whom it signs in.
// An ended session, or one whose member was deactivated, is
// ErrSessionInvalid.
func (s *SessionStore) LoadSession(ctx context.Context, token string) (*Session, *Person, error) {
	if token == "" {
		return nil, nil, ErrSessionInvalid
	}
	db := s.db.WithContext(ctx)
	var sess Session
	if err := db.Where("token_hash = ?", HashSecret(token)).Take(&sess).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, nil, ErrSessionInvalid
		}
		return nil, nil, err
	}
	p, err := sessionPerson(db, &sess)
	if err != nil {
		return nil, nil, err
	}
	return &sess, p, nil
}

// sessionPerson is whom sess signs in, or ErrSessionInvalid once it has
// ended or its person was removed or deactivated.
func sessionPerson(db *gorm.DB, sess *Session) (*Person, error) {
	if !Now().Before(sess.EndsAt()) {
		return nil, ErrSessionInvalid
	}
	p, err := loadPerson(db, sess.OrganizationID, sess.PersonID)
	if apperr.Is(err, apperr.NotFound) || errors.Is(err, ErrPersonInactive) {
		return nil, ErrSessionInvalid
	}
	return p, err
}

// TouchSession records that the session was just used, which pushes back
// its idle end. It writes at most once a minute per session.
func (s *SessionStore) TouchSession(ctx context.Context, sess *Session) error {
	now := Now()
	if now.Sub(sess.LastSeenAt) < touchEvery {
		return nil
	}
	err := s.db.WithContext(ctx).Model(&Session{}).Where("id = ?", sess.ID).Update("last_seen_at", now).Error
	if err == nil {
		sess.LastSeenAt = now
	}
	return err
}

// DeleteSession signs a session out; deleting one already gone is no error.
func (s *SessionStore) DeleteSession(ctx context.Context, orgID, id string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The browser's push subscription made in it ends with it.
		if err := tx.Where("organization_id = ? AND session_id = ?", orgID, id).Delete(&PushSubscription{}).Error; err != nil {
			return err
		}
		return tx.Where("organization_id = ? AND id = ?", orgID, id).Delete(&Session{}).Error
	})
}

// endSignIns deletes a person's sessions and sign-in links, so a person
// removed from the organisation is signed out everywhere and an emailed
// link no longer signs them in.
func endSignIns(tx *gorm.DB, orgID, personID string) error {
	if err := tx.Where("organization_id = ? AND person_id = ?", orgID, personID).Delete(&Session{}).Error; err != nil {
		return err
	}
	if err := tx.Where("organization_id = ? AND person_id = ?", orgID, personID).Delete(&PushSubscription{}).Error; err != nil {
		return err
	}
	return tx.Where("organization_id = ? AND person_id = ?", orgID, personID).Delete(&SignInLink{}).Error
}

// PurgeSignIns removes ended sessions, used or expired sign-in links and
// the decision links of expired approvals. A used decision link stays
// until then, so its page can still say it was used.
func (s *SessionStore) PurgeSignIns(ctx context.Context) (int64, error) {
	db := s.db.WithContext(ctx)
	now := Now()
	links := db.Where("used_at IS NOT NULL OR expires_at <= ?", now).Delete(&SignInLink{})
	if links.Error != nil {
		return 0, links.Error
	}
	decisions := db.Where("expires_at <= ?", now).Delete(&DecisionLink{})
	if decisions.Error != nil {
		return 0, decisions.Error
	}
	sessions := endedSessions(db, now).Delete(&Session{})
	return links.RowsAffected + decisions.RowsAffected + sessions.RowsAffected, sessions.Error
}

// endedSessions narrows q to sessions past EndsAt; it is EndsAt in SQL.
func endedSessions(q *gorm.DB, now time.Time) *gorm.DB {
	return q.Where("expires_at <= ? OR last_seen_at <= ?", now, now.Add(-SessionIdleTimeout))
}

// NewToken returns 256 random bits, URL-safe (43 characters), for sign-in
// links, session cookies and CSRF tokens.
func NewToken() string { return randtoken.New() }
