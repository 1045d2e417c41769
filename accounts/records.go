package accounts

import (
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// The adapters name who acts and how they signed in by these names, the
// service's vocabulary; models stays the persistence layer behind them.
type (
	// Actor is who acts, the one identity every service takes.
	Actor = models.Actor
	// Person is a member or a guest, with their organisation.
	Person           = models.Person
	Session          = models.Session
	IssuedSignInLink = models.IssuedSignInLink
)

// SignInLinkLifetime is how long an emailed sign-in link holds.
const SignInLinkLifetime = models.SignInLinkLifetime

// Errors of sign-in links and sessions. They say what the person can do.
var (
	ErrSignInLinkInvalid = apperr.New(apperr.NotFound, "this sign-in link is not valid; request a new one")
	ErrSignInLinkUsed    = apperr.New(apperr.InvalidState, "this sign-in link has already been used; request a new one")
	ErrSignInLinkExpired = apperr.New(apperr.InvalidState, "this sign-in link has expired (links work for %d minutes); request a new one",
		int(SignInLinkLifetime/time.Minute))
	// ErrPersonInactive is a person who may no longer sign in.
	ErrPersonInactive = apperr.New(apperr.Forbidden, "this account has been deactivated; ask an administrator of the organisation")
	// ErrSessionInvalid is a session that ended or never was.
	ErrSessionInvalid = apperr.New(apperr.Unauthorized, "the session has ended; sign in again")
)

// NeedPerson refuses what only a person does (what: "deciding") when a
// key acts.
func NeedPerson(who Actor, what string) error {
	if !who.IsPerson {
		return apperr.New(apperr.Forbidden, "%s belongs to a person: use a member token", what)
	}
	return nil
}

// ActingPerson is the person who acts, refusing what only a person does
// when a key acts.
func ActingPerson(who Actor, what string) (*Person, error) {
	if err := NeedPerson(who, what); err != nil {
		return nil, err
	}
	return who.Person, nil
}

// NormalizeEmail is the one spelling of an address the service stores and
// compares.
func NormalizeEmail(e string) string { return models.NormalizeEmail(e) }
