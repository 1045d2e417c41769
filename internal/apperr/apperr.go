// Package apperr is the one error type that crosses layers. Its Code is a
// spec error code; Status maps codes to HTTP statuses in one table.
package apperr

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"go.temporal.io/api/serviceerror"
)

// Codes used across the service, as api/openapi.yaml spells them.
const (
	InvalidRequest      = "invalid_request"
	Unauthorized        = "unauthorized"
	InsufficientScope   = "insufficient_scope"
	Forbidden           = "forbidden"
	NotFound            = "not_found"
	MethodNotAllowed    = "method_not_allowed"
	Conflict            = "conflict"
	InvalidState        = "invalid_state"
	PayloadTooLarge     = "payload_too_large"
	UnsupportedMedia    = "unsupported_media_type"
	IdempotencyReused   = "idempotency_key_reused"
	IdempotencyInFlight = "idempotency_in_progress"
	RateLimited         = "rate_limited"
	Internal            = "internal_error"
	Unavailable         = "service_unavailable"
	UnknownApprover     = "unknown_approver"
	AmbiguousApprover   = "ambiguous_approver"
	InvalidCallbackURL  = "invalid_callback_url"
	NotAnApprover       = "not_an_approver"
	NotTheRequester     = "not_the_requester"
	QuestionPending     = "question_pending"
	QuestionNotFound    = "question_not_found"
	AlreadyAnswered     = "already_answered"
	VersionConflict     = "version_conflict"
	PlanRequired        = "plan_required"
	PublicSharingDenied = "public_sharing_denied"
	UploadNotFound      = "upload_not_found"
	QuoteNotFound       = "quote_not_found"
	QuoteAmbiguous      = "quote_ambiguous"
	UnknownReviewer     = "unknown_reviewer"
	AmbiguousReviewer   = "ambiguous_reviewer"
	ReviewerCannotRead  = "reviewer_cannot_read"
	NotAReviewer        = "not_a_reviewer"
	AlreadyDecided      = "already_decided"
	SharingDenied       = "sharing_denied"
	UnknownAudience     = "unknown_audience"
	AmbiguousAudience   = "ambiguous_audience"
	UnknownRespondent   = "unknown_respondent"
	AmbiguousRespondent = "ambiguous_respondent"
	InvalidAnswer       = "invalid_answer"
	NotARespondent      = "not_a_respondent"
	AlreadySubmitted    = "already_submitted"
	SlugTaken           = "slug_taken"
	ContentTooLarge     = "content_too_large"
	InvalidArchive      = "invalid_archive"
	LimitReached        = "limit_reached"
	GateDenied          = "gate_denied"
	ReceiptExists       = "receipt_exists"
	InputMismatch       = "input_mismatch"
	DelegationCycle     = "delegation_cycle"
)

var statusByCode = map[string]int{
	InvalidRequest:      http.StatusBadRequest,
	Unauthorized:        http.StatusUnauthorized,
	InsufficientScope:   http.StatusForbidden,
	Forbidden:           http.StatusForbidden,
	NotFound:            http.StatusNotFound,
	MethodNotAllowed:    http.StatusMethodNotAllowed,
	Conflict:            http.StatusConflict,
	InvalidState:        http.StatusConflict,
	PayloadTooLarge:     http.StatusRequestEntityTooLarge,
	UnsupportedMedia:    http.StatusUnsupportedMediaType,
	IdempotencyReused:   http.StatusUnprocessableEntity,
	IdempotencyInFlight: http.StatusConflict,
	RateLimited:         http.StatusTooManyRequests,
	Internal:            http.StatusInternalServerError,
	Unavailable:         http.StatusServiceUnavailable,
	UnknownApprover:     http.StatusBadRequest,
	AmbiguousApprover:   http.StatusBadRequest,
	InvalidCallbackURL:  http.StatusBadRequest,
	NotAnApprover:       http.StatusForbidden,
	NotTheRequester:     http.StatusForbidden,
	QuestionPending:     http.StatusConflict,
	QuestionNotFound:    http.StatusNotFound,
	AlreadyAnswered:     http.StatusConflict,
	VersionConflict:     http.StatusConflict,
	PlanRequired:        http.StatusPaymentRequired,
	PublicSharingDenied: http.StatusForbidden,
	UploadNotFound:      http.StatusNotFound,
	QuoteNotFound:       http.StatusNotFound,
	QuoteAmbiguous:      http.StatusBadRequest,
	UnknownReviewer:     http.StatusBadRequest,
	AmbiguousReviewer:   http.StatusBadRequest,
	ReviewerCannotRead:  http.StatusBadRequest,
	NotAReviewer:        http.StatusForbidden,
	AlreadyDecided:      http.StatusConflict,
	SharingDenied:       http.StatusForbidden,
	UnknownAudience:     http.StatusBadRequest,
	AmbiguousAudience:   http.StatusBadRequest,
	UnknownRespondent:   http.StatusBadRequest,
	AmbiguousRespondent: http.StatusBadRequest,
	InvalidAnswer:       http.StatusBadRequest,
	NotARespondent:      http.StatusForbidden,
	AlreadySubmitted:    http.StatusConflict,
	SlugTaken:           http.StatusConflict,
	ContentTooLarge:     http.StatusRequestEntityTooLarge,
	InvalidArchive:      http.StatusBadRequest,
	LimitReached:        http.StatusConflict,
	GateDenied:          http.StatusForbidden,
	ReceiptExists:       http.StatusConflict,
	InputMismatch:       http.StatusConflict,
	DelegationCycle:     http.StatusConflict,
}

// Error is a failure the caller can act on.
type Error struct {
	Code       string   `json:"code"`
	Message    string   `json:"message"`
	Field      string   `json:"field,omitempty"`
	Candidates []string `json:"candidates,omitempty"`
	// Says, when set, is what Field must be in a person's words, without
	// naming it ("must be at most 1,000"): the pages put the field's label
	// before it. The API sends Message, never this.
	Says string `json:"-"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Status is the HTTP status for the error's code.
func (e *Error) Status() int { return Status(e.Code) }

// Status maps a code to its HTTP status; unknown codes are internal errors.
func Status(code string) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// New returns an Error with a formatted message.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Field returns an Error about one request field.
func Field(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// As extracts an *Error from err's chain, or makes one for a transient
// condition of the workflow service (Transient): every adapter reads
// errors through here, so none answers those with a 500.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	if e := Transient(err); e != nil {
		return e, true
	}
	return nil, false
}

// RetryAfter is the Retry-After, in seconds, of a service_unavailable
// answer.
const RetryAfter = 1

// Transient is service_unavailable for a condition of the workflow
// service or the database that passes by itself, nil for any other error:
// an Update or query refused while the workflow's task is being retried
// (after a worker crashed, or while no worker holding the key runs it),
// Temporal's frontend unavailable, overloaded or out of time, and the
// database unreachable, restarting or dropping the connection.
func Transient(err error) *Error {
	if e := temporalTransient(err); e != nil {
		return e
	}
	if databaseTransient(err) {
		return New(Unavailable, "the database is unavailable; retry shortly")
	}
	return nil
}

// databaseTransient reports a connection the database refused, dropped or
// is not yet taking: SQLSTATE class 08 or 57P01–57P03 (PostgreSQL's
// shutting down and starting up), an error its driver marks safe to
// retry, a network error, or a connection cut mid-answer; and a statement
// the connection prepared before a migration changed what it reads
// (0A000, which the driver answers by preparing it again next time).
func databaseTransient(err error) bool {
	var state interface {
		SQLState() string
		Error() string
	}
	if errors.As(err, &state) {
		s := state.SQLState()
		return strings.HasPrefix(s, "08") || s == "57P01" || s == "57P02" || s == "57P03" ||
			(s == "0A000" && strings.Contains(state.Error(), "cached plan must not change result type"))
	}
	var retry interface{ SafeToRetry() bool }
	var netErr *net.OpError
	return (errors.As(err, &retry) && retry.SafeToRetry()) || errors.As(err, &netErr) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || sqliteBusy(err)
}

// sqliteBusy reports SQLite's SQLITE_BUSY or SQLITE_LOCKED: another writer
// held the file past the busy timeout, which a retry outlasts. The driver
// gives no code to read through an interface, only its message.
func sqliteBusy(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "database is locked") || strings.Contains(msg, "database table is locked")
}

// temporalTransient is Transient for the workflow service.
func temporalTransient(err error) *Error {
	var (
		notReady    *serviceerror.WorkflowNotReady
		unavailable *serviceerror.Unavailable
		exhausted   *serviceerror.ResourceExhausted
		deadline    *serviceerror.DeadlineExceeded
	)
	switch {
	case errors.As(err, &notReady):
		return New(Unavailable, "the request's workflow is recovering from a failed step and cannot take this yet; retry shortly")
	case errors.As(err, &unavailable):
		return New(Unavailable, "the workflow service is unavailable; retry shortly")
	case errors.As(err, &exhausted):
		return New(Unavailable, "the workflow service is overloaded; retry shortly")
	case errors.As(err, &deadline):
		return New(Unavailable, "the workflow service did not answer in time; retry shortly")
	}
	return nil
}

// Is reports whether err carries the given code.
func Is(err error, code string) bool {
	e, ok := As(err)
	return ok && e.Code == code
}
