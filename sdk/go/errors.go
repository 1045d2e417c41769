package assent

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// ErrorCode is the API's stable, machine-readable error code; the
// document's codes are the Code… constants.
type ErrorCode string

// Codes of the SDK's own, for failures the API did not answer.
const (
	// CodeNetworkError: no answer came (Status 0), after the retries.
	CodeNetworkError ErrorCode = "network_error"
	// CodeNoDecisionToken: an approved approval carries no decision token
	// (the instance issues none without a base URL).
	CodeNoDecisionToken ErrorCode = "no_decision_token"
)

// Error is what the API refused or could not answer. Status is the HTTP
// status (0 when no answer came), Code the stable code, Message its
// explanation for a person, Field the request field at fault when there is
// one, Candidates what a name could have meant.
type Error struct {
	Status     int
	Code       ErrorCode
	Message    string
	Field      string
	Candidates []string
	Header     http.Header
	Err        error // the transport's error, with CodeNetworkError
	// Receipt is the execution receipt a 409 CodeInputMismatch answers
	// with (ReceiptConflict: this one, recorded as a mismatch), or the
	// token's receipt a 409 CodeReceiptExists names (ReceiptExists: only
	// its ID and times set); nil otherwise.
	Receipt *Receipt
}

func (e *Error) Error() string {
	s := fmt.Sprintf("assent: %s (%s", e.Message, e.Code)
	if e.Status != 0 {
		s += fmt.Sprintf(", %d", e.Status)
	}
	if e.Field != "" {
		s += ", field " + e.Field
	}
	return s + ")"
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error by Code (and Status when that one has it), so
// errors.Is(err, &assent.Error{Code: assent.CodeNotFound}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Status == 0 || t.Status == e.Status)
}

func errorFrom(resp *http.Response, payload []byte) *Error {
	var env struct {
		Error *struct {
			Code       string   `json:"code"`
			Message    string   `json:"message"`
			Field      string   `json:"field"`
			Candidates []string `json:"candidates"`
		} `json:"error"`
		Receipt json.RawMessage `json:"receipt"`
	}
	if json.Unmarshal(payload, &env) == nil && env.Error != nil && env.Error.Code != "" {
		e := &Error{Status: resp.StatusCode, Code: ErrorCode(env.Error.Code), Message: env.Error.Message,
			Field: env.Error.Field, Candidates: env.Error.Candidates, Header: resp.Header}
		// Decoded on its own, so a receipt this SDK cannot read keeps the error.
		var r Receipt
		if len(env.Receipt) > 0 && json.Unmarshal(env.Receipt, &r) == nil && r.ID != "" {
			e.Receipt = &r
		}
		return e
	}
	msg := string(payload)
	if len(msg) > 200 {
		msg = msg[:200]
	}
	if msg == "" {
		msg = fmt.Sprintf("HTTP %d without an error body", resp.StatusCode)
	}
	return &Error{Status: resp.StatusCode, Code: ErrorCode(fmt.Sprintf("http_%d", resp.StatusCode)), Message: msg, Header: resp.Header}
}
