package assent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"
)

// RunRequest is what Run asks a person.
type RunRequest[T any] struct {
	// Input is the proposed input; it must encode as a JSON object.
	Input T
	// Approval is the approval to create (Title required; EditableFields,
	// Risk, Approvers, …); its Input is set from Input.
	Approval ApprovalCreate
	// Action, when set, names a registered action: the call goes through
	// the gate (POST /api/v1/gate) first, and the token must name it.
	Action string
	// FlowID and ExternalID go with the gate check.
	FlowID, ExternalID string
}

// DeniedError is returned by Run when the approval settled otherwise than
// approved (rejected, expired or cancelled).
type DeniedError struct{ Approval *Approval }

func (e *DeniedError) Error() string {
	s := fmt.Sprintf("assent: approval %s was %s", e.Approval.ID, e.Approval.Status)
	if e.Approval.Note != nil && *e.Approval.Note != "" {
		s += ": " + *e.Approval.Note
	}
	return s
}

// Run runs fn only after a person approved, with the approved input (the
// approver's corrections applied), and only when the decision token
// verifies against that input for the caller's organisation (and the
// action); otherwise fn does not run and the error says why: a
// *DeniedError, a decisiontoken error, an *Error (a denied gate check is
// CodeGateDenied) or a *WaitTimeoutError when ctx ends first. An allowed
// gate check runs fn at once with the input as given. Once fn has run, Run
// posts its execution receipt (POST /api/v1/receipts: succeeded, or
// failed with fn's error, cut to 4096 bytes, as the result); a receipt
// that cannot be posted is logged (slog), and Run still returns fn's own
// error.
func Run[T any](ctx context.Context, c *Client, req RunRequest[T], fn func(context.Context, T) error) error {
	proposed, err := objectOf(req.Input)
	if err != nil {
		return err
	}
	var approval *Approval
	if req.Action != "" {
		check := &GateCheckRequest{Action: req.Action, Input: proposed}
		if req.FlowID != "" {
			check.FlowID = &req.FlowID
		}
		if req.ExternalID != "" {
			check.ExternalID = &req.ExternalID
		}
		answer, err := c.Gate.Check(ctx, check)
		if err != nil {
			return err
		}
		if answer.Decision == "allowed" {
			if _, err := c.VerifyDecisionToken(ctx, answer.DecisionToken, proposed, req.Action); err != nil {
				return err
			}
			return c.runReported(ctx, answer.DecisionToken, proposed, func(ctx context.Context) error { return fn(ctx, req.Input) })
		}
		approval = answer.Approval
	}
	if approval == nil {
		create := req.Approval
		create.Input = proposed
		if approval, err = c.Approvals.Create(ctx, &create); err != nil {
			return err
		}
	}
	settled, err := c.Approvals.Wait(ctx, approval.ID)
	if err != nil {
		return err
	}
	if settled.Status != "approved" {
		return &DeniedError{Approval: settled}
	}
	if settled.DecisionToken == "" {
		return &Error{Code: CodeNoDecisionToken, Message: "approval " + settled.ID +
			" carries no decision token; the instance issues none without ASSENT_BASE_URL"}
	}
	approved := settled.ApprovedInput
	if approved == nil {
		approved = map[string]any{}
	}
	if _, err := c.VerifyDecisionToken(ctx, settled.DecisionToken, approved, req.Action); err != nil {
		return err
	}
	raw, err := json.Marshal(approved)
	if err != nil {
		return err
	}
	var input T
	if err := json.Unmarshal(raw, &input); err != nil {
		return fmt.Errorf("assent: the approved input does not fit %T: %w", input, err)
	}
	return c.runReported(ctx, settled.DecisionToken, approved, func(ctx context.Context) error { return fn(ctx, input) })
}

// runReported runs fn, then posts the receipt of token for input: what
// happened to what was approved is recorded with it. A receipt that
// cannot be posted is logged, never the caller's failure.
func (c *Client) runReported(ctx context.Context, token string, input map[string]any, fn func(context.Context) error) error {
	started := time.Now()
	runErr := fn(ctx)
	receipt := &ReceiptCreate{DecisionToken: token, Input: input, Outcome: "succeeded", StartedAt: started, FinishedAt: time.Now()}
	if runErr != nil {
		receipt.Outcome, receipt.Result = "failed", failureResult(runErr.Error())
	}
	// fn may have ended with ctx; its receipt still goes.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if _, err := c.Receipts.Create(rctx, receipt); err != nil {
		slog.WarnContext(ctx, "assent: the execution receipt was not posted", "token", token, "error", err)
	}
	return runErr
}

// maxFailureResult bounds the error message a failure receipt keeps, in
// bytes of UTF-8, marker included: the API refuses a result over 64 KB,
// and a refused receipt would lose the record of the run, not just the
// message's tail. The Python and TypeScript SDKs cut at the same length.
const maxFailureResult = 4096

// failureResult is msg cut to maxFailureResult bytes on a character's
// boundary, ending with a marker that says so and how long it was.
func failureResult(msg string) string {
	if len(msg) <= maxFailureResult {
		return msg
	}
	marker := fmt.Sprintf("… [truncated from %d bytes]", len(msg))
	cut := maxFailureResult - len(marker)
	// A character is at most UTFMax bytes; bytes that are no UTF-8 at
	// all are cut where they fall.
	for back := 0; back < utf8.UTFMax-1 && !utf8.RuneStart(msg[cut]); back++ {
		cut--
	}
	return msg[:cut] + marker
}

func objectOf(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("assent: the input is not JSON: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("assent: the input must be a JSON object, not %s", raw)
	}
	return m, nil
}
