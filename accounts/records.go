package accounts

import "github.com/assent-hq/assent/models"

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

var (
	// ErrSessionInvalid is a session that ended or never was.
	ErrSessionInvalid = models.ErrSessionInvalid
	// ErrPersonInactive is a person who may no longer sign in.
	ErrPersonInactive = models.ErrPersonInactive
)

// NormalizeEmail is the one spelling of an address the service stores and
// compares.
func NormalizeEmail(e string) string { return models.NormalizeEmail(e) }
