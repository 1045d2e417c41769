package models

import (
	"context"
	"time"

	"gorm.io/gorm"

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

// SignInLink reads the link whose token hashes to hash, under its row
// lock when ctx is in a transaction; no such link is NotFound.
func (s *SessionStore) SignInLink(ctx context.Context, hash string) (*SignInLink, error) {
	q := s.conn(ctx)
	if _, err := inTx(ctx); err == nil {
		q = q.Clauses(lockForUpdate(q)...)
	}
	return byToken[SignInLink](q, "token_hash", hash, "sign-in link")
}

// LiveSignInLinks counts personID's links neither used nor expired at now.
func (s *SessionStore) LiveSignInLinks(ctx context.Context, personID string, now time.Time) (int64, error) {
	var live int64
	err := s.conn(ctx).Model(&SignInLink{}).Where("person_id = ? AND used_at IS NULL AND expires_at > ?", personID, now).
		Count(&live).Error
	return live, err
}

// InsertSignInLink writes a new link.
func (s *SessionStore) InsertSignInLink(ctx context.Context, l *SignInLink) error {
	return s.conn(ctx).Create(l).Error
}

// MarkSignInLinkUsed marks the link used at now, unless it already was:
// the guard on used_at makes two racing uses produce one winner.
func (s *SessionStore) MarkSignInLinkUsed(ctx context.Context, hash string, now time.Time) (bool, error) {
	res := s.conn(ctx).Model(&SignInLink{}).Where("token_hash = ? AND used_at IS NULL", hash).Update("used_at", now)
	return res.RowsAffected == 1, res.Error
}

// PersonByID reads a member or guest with their organisation, whether or
// not a member is deactivated (Person.Deactivated).
func (s *SessionStore) PersonByID(ctx context.Context, orgID, personID string) (*Person, error) {
	return loadPerson(s.conn(ctx), orgID, personID)
}

// loadPerson reads a member or guest with their organisation.
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
	return p, nil
}

// Deactivated says whether p is a member an administrator deactivated.
func (p *Person) Deactivated() bool { return p.Member != nil && !p.Member.Active }

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

// InsertSession writes a new session, and removes its person's ended
// sessions on the way.
func (s *SessionStore) InsertSession(ctx context.Context, sess *Session) error {
	db := s.conn(ctx)
	if err := endedSessions(db.Where("person_id = ?", sess.PersonID), sess.CreatedAt).Delete(&Session{}).Error; err != nil {
		return err
	}
	return db.Create(sess).Error
}

// SessionByToken reads the session whose token hashes to hash; no such
// session is NotFound.
func (s *SessionStore) SessionByToken(ctx context.Context, hash string) (*Session, error) {
	return byToken[Session](s.conn(ctx), "token_hash", hash, "session")
}

// byToken reads the T whose column holds hash, a token's hash; none is
// NotFound, naming what.
func byToken[T any](db *gorm.DB, column, hash, what string) (*T, error) {
	var rec T
	if err := db.Where(column+" = ?", hash).Take(&rec).Error; err != nil {
		return nil, notFound(err, what)
	}
	return &rec, nil
}

// SaveSessionSeen records when a session was last used.
func (s *SessionStore) SaveSessionSeen(ctx context.Context, id string, at time.Time) error {
	return s.conn(ctx).Model(&Session{}).Where("id = ?", id).Update("last_seen_at", at).Error
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
