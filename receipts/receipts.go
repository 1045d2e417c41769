// Package receipts records execution receipts: an executor's report, after
// running what a decision token decided, of what ran, when and how it
// ended. The token is verified as any tool verifies it (package
// decisiontoken) with the instance's decision keys, and only who the token
// was issued to or its action's executors report (mayReport). A token
// takes one receipt; one whose input is not the input the token approved
// is recorded as a mismatch and announced (execution.mismatch): what ran
// is not what was allowed.
package receipts

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/decisions"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/sdk/go/decisiontoken"
	"github.com/assent-hq/assent/wire"
)

// MaxResult is the most a receipt's result may hold, in bytes of compact
// JSON: enough for an outcome's summary or an error, not for the output
// itself.
const MaxResult = 64 << 10

// Store is what the service reads and writes through.
type Store interface {
	Tx(ctx context.Context, fn func(ctx context.Context) error) error
	ClaimedResource(ctx context.Context, c *models.Claim) (string, error)
	BindClaim(ctx context.Context, c *models.Claim, id string) (string, error)
	InsertReceipt(ctx context.Context, rec *models.Receipt) error
	LockReceipt(ctx context.Context, orgID, id string) (*models.Receipt, error)
	Receipt(ctx context.Context, orgID, id string) (*models.Receipt, error)
	ReceiptOfToken(ctx context.Context, orgID, tokenID string) (*models.Receipt, error)
	NextSeq(ctx context.Context, orgID, subjectID string) (int, error)
	Audited(ctx context.Context, e *models.AuditEntry) (bool, error)
	Audit(ctx context.Context, e *models.AuditEntry) error
	Emit(ctx context.Context, e *models.Event) error
	Changed(ctx context.Context, id string)
	SigningKeys(ctx context.Context, f models.KeyFamily) ([]models.SigningKey, error)
	// The approvals a token may be of (approvals.Records).
	models.RequestsHost
	GetGateCheck(ctx context.Context, orgID, id string) (*models.GateCheck, error)
	ActionNamed(ctx context.Context, orgID, name string) (*models.Action, error)
}

// Service records receipts.
type Service struct {
	store Store
	// issuer is the instance's public address, as its tokens name it.
	issuer string
	// now is the clock tokens are checked by; nil is time.Now.
	now func() time.Time
}

// New returns the service over store, accepting tokens issued by issuer.
func New(store Store, issuer string) *Service {
	return &Service{store: store, issuer: issuer}
}

// SetIssuer names the instance as its tokens do: its configured public
// address, when that is not the address it was built with (as the gate's).
func (s *Service) SetIssuer(issuer string) { s.issuer = issuer }

// SetClock checks tokens by now instead of the time, so a test can let
// one expire.
func (s *Service) SetClock(now func() time.Time) { s.now = now }

// ReportInput is an execution receipt as an executor posts it.
type ReportInput struct {
	DecisionToken string `json:"decisionToken" validate:"required,max=8192"`
	// Input is what ran, as JSON; null for an approval without input.
	Input      json.RawMessage `json:"input" nullable:"true"`
	Outcome    string          `json:"outcome" validate:"required,oneof=succeeded failed"`
	Result     json.RawMessage `json:"result" nullable:"true"`
	StartedAt  string          `json:"startedAt" validate:"required"`
	FinishedAt string          `json:"finishedAt" validate:"required"`
}

// Report verifies in's decision token (signature, issuer, p's
// organisation, expiry, and a jti), holds p to who may report it, and
// records the receipt. Two refusals come with a receipt beside the error:
// receipt_exists with the token's first receipt (a report that disagrees
// with it kept), and input_mismatch with this one, recorded as a mismatch.
// With a claim, a retry answers as the first attempt did.
func (s *Service) Report(ctx context.Context, p models.Actor, in *ReportInput, claim *models.Claim) (*models.Receipt, error) {
	rec, err := s.build(p, in)
	if err != nil {
		return nil, err
	}
	// A retry of a report that was recorded answers as it did, though its
	// token has expired since: the same caller sent the same body, and
	// the receipt is kept.
	earlier, err := s.store.ClaimedResource(ctx, claim)
	if err != nil {
		return nil, err
	}
	if earlier != "" {
		got, err := s.store.Receipt(ctx, p.OrgID(), earlier)
		if err != nil {
			return nil, err
		}
		return got, mismatch(got)
	}
	claims, err := s.verify(ctx, p.OrgID(), in.DecisionToken)
	if err != nil {
		return nil, err
	}
	rec.TokenID, rec.ApprovedSHA256 = claims.ID, claims.InputSHA256
	rec.Mismatch = rec.InputSHA256 != claims.InputSHA256
	issuedTo, err := s.decided(ctx, rec, claims.Subject)
	if err != nil {
		return nil, err
	}
	if err := s.mayReport(ctx, p, rec, issuedTo); err != nil {
		return nil, err
	}
	got, err := s.record(ctx, p, rec, claim)
	if err != nil {
		return got, err
	}
	return got, mismatch(got)
}

// record writes rec, its audit entry (on its flow's timeline) and, for a
// mismatch, execution.mismatch, in one transaction, and binds claim (when
// not nil) to it. When an earlier attempt of the claimed request recorded
// one, that receipt is returned. When the token already has a receipt,
// the error is receipt_exists, with the first receipt returned beside it;
// a report that disagrees with it is kept as a disagreement (disagree),
// else nothing is.
func (s *Service) record(ctx context.Context, by models.Actor, rec *models.Receipt, claim *models.Claim) (*models.Receipt, error) {
	rec.ID, rec.CreatedAt = ids.New(ids.Receipt), models.Now()
	var earlier string
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if earlier, err = s.store.BindClaim(ctx, claim, rec.ID); err != nil || earlier != "" {
			return err
		}
		if err := s.store.InsertReceipt(ctx, rec); err != nil {
			return err
		}
		action, detail := "executed", rec.Subject()+": "+rec.Outcome
		if rec.Mismatch {
			action = "execution_mismatch"
			detail += "; the input that ran (sha256 " + rec.InputSHA256 + ") is not the one approved (sha256 " + rec.ApprovedSHA256 + ")"
		}
		if err := s.store.Audit(ctx, models.ReceiptAudit(rec, 1, action, detail, by, rec.CreatedAt)); err != nil {
			return err
		}
		if rec.ApprovalID != nil {
			s.store.Changed(ctx, *rec.ApprovalID)
		}
		if !rec.Mismatch {
			return nil
		}
		return s.emitMismatch(ctx, rec, rec.ID)
	})
	switch {
	case errors.Is(err, models.ErrDuplicate):
		first, ferr := s.store.ReceiptOfToken(ctx, rec.OrganizationID, rec.TokenID)
		if ferr != nil {
			return nil, ferr
		}
		if rec.InputSHA256 != first.InputSHA256 || rec.Outcome != first.Outcome {
			if err := s.disagree(ctx, by, rec, first); err != nil {
				return nil, err
			}
		}
		return first, apperr.Field(apperr.ReceiptExists, "decisionToken", "this decision token already has its receipt, %s, reported at %s",
			first.ID, first.CreatedAt.Format(time.RFC3339))
	case err != nil:
		return nil, err
	case earlier != "":
		return s.store.Receipt(ctx, rec.OrganizationID, earlier)
	}
	return rec, nil
}

// disagree keeps rec, a later report of first's token that says another
// input ran or it ended otherwise: an audit entry execution_mismatch on
// first's trail and execution.mismatch with the report as data, in one
// transaction under first's row lock. The same report again (a retry)
// writes nothing more. The token's receipt stays first.
func (s *Service) disagree(ctx context.Context, by models.Actor, rec, first *models.Receipt) error {
	rec.DisagreesWith = &first.ID
	detail := first.Subject() + ": a later report by " + by.Name + " (" + by.ID + ") says " + rec.Outcome +
		" with the input of sha256 " + rec.InputSHA256 + "; the receipt says " + first.Outcome + " with sha256 " + first.InputSHA256
	return s.store.Tx(ctx, func(ctx context.Context) error {
		if _, err := s.store.LockReceipt(ctx, first.OrganizationID, first.ID); err != nil {
			return err
		}
		entry := models.ReceiptAudit(first, 0, "execution_mismatch", detail, by, rec.CreatedAt)
		if seen, err := s.store.Audited(ctx, entry); err != nil || seen {
			return err
		}
		var err error
		if entry.Seq, err = s.store.NextSeq(ctx, first.OrganizationID, first.ID); err != nil {
			return err
		}
		if err := s.store.Audit(ctx, entry); err != nil {
			return err
		}
		return s.emitMismatch(ctx, rec, first.ID)
	})
}

// emitMismatch writes execution.mismatch, with rec as its data, about the
// receipt subjectID.
func (s *Service) emitMismatch(ctx context.Context, rec *models.Receipt, subjectID string) error {
	data, err := json.Marshal(wire.NewReceipt(rec))
	if err != nil {
		return err
	}
	return s.store.Emit(ctx, &models.Event{OrganizationID: rec.OrganizationID, Kind: events.ExecutionMismatch,
		SubjectType: "receipt", SubjectID: subjectID, Data: data, CreatedAt: rec.CreatedAt})
}

// mismatch is the refusal that comes with a receipt recorded as a
// mismatch, nil for one that matched.
func mismatch(r *models.Receipt) error {
	if !r.Mismatch {
		return nil
	}
	return apperr.Field(apperr.InputMismatch, "input",
		"input is not the input the decision token approved (its sha256 %s, approved %s); the receipt is recorded as a mismatch",
		r.InputSHA256, r.ApprovedSHA256)
}

// build holds in's fields to their rules, before the token is read.
func (s *Service) build(p models.Actor, in *ReportInput) (*models.Receipt, error) {
	if in.Input == nil {
		return nil, apperr.Field(apperr.InvalidRequest, "input", "input is required: the input that ran (null for an approval without input)")
	}
	if in := bytes.TrimSpace(in.Input); in[0] != '{' && string(in) != "null" {
		return nil, apperr.Field(apperr.InvalidRequest, "input", "input must be a JSON object, or null for an approval without input")
	}
	sum, err := decisiontoken.InputSHA256(in.Input)
	if err != nil {
		return nil, apperr.Field(apperr.InvalidRequest, "input", "input must be JSON with one meaning (RFC 8785): %v", err)
	}
	if err := decisions.OneMeaning("input", in.Input); err != nil {
		return nil, err
	}
	started, err := requests.Timestamp("startedAt", in.StartedAt)
	if err != nil {
		return nil, err
	}
	finished, err := requests.Timestamp("finishedAt", in.FinishedAt)
	if err != nil {
		return nil, err
	}
	if finished.Before(started) {
		return nil, apperr.Field(apperr.InvalidRequest, "finishedAt", "finishedAt must not come before startedAt")
	}
	rec := &models.Receipt{OrganizationID: p.OrgID(), Outcome: in.Outcome, Input: compact(in.Input), InputSHA256: sum,
		StartedAt: started, FinishedAt: finished, ReportedByID: p.ID, ReportedBy: p.Name}
	if r := compact(in.Result); r != nil && string(r) != "null" {
		if len(r) > MaxResult {
			return nil, apperr.Field(apperr.ContentTooLarge, "result", "result is %d bytes of JSON; a receipt's result may be at most %d", len(r), MaxResult)
		}
		rec.Result = r
	}
	return rec, nil
}

// compact is raw without insignificant space; bind has checked it is JSON.
func compact(raw json.RawMessage) models.RawJSON {
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return models.RawJSON(raw)
	}
	return b.Bytes()
}

// verify checks token as any verifier does, with every decision key the
// instance has (retired ones too), for orgID; a token without a jti was
// issued before receipts and takes none.
func (s *Service) verify(ctx context.Context, orgID, token string) (*decisiontoken.Claims, error) {
	if s.issuer == "" {
		return nil, apperr.Field(apperr.InvalidRequest, "decisionToken", "this instance issues no decision tokens (it has no public base URL)")
	}
	keys, err := s.store.SigningKeys(ctx, models.DecisionFamily)
	if err != nil {
		return nil, err
	}
	v := &decisiontoken.Verifier{Issuer: s.issuer, Organization: orgID, Now: s.now}
	for _, k := range keys {
		v.Keys.Keys = append(v.Keys.Keys, jose.JSONWebKey{Key: ed25519.PublicKey(k.PublicKey), KeyID: k.ID,
			Algorithm: string(decisiontoken.Algorithm), Use: "sig"})
	}
	if len(v.Keys.Keys) == 0 {
		return nil, apperr.Field(apperr.InvalidRequest, "decisionToken", "decisionToken was not signed by this instance")
	}
	c, err := v.VerifyToken(token)
	if err != nil {
		return nil, apperr.Field(apperr.InvalidRequest, "decisionToken", "decisionToken %s", refusal(err))
	}
	if c.ID == "" {
		return nil, apperr.Field(apperr.InvalidRequest, "decisionToken",
			"decisionToken has no jti: it was issued before execution receipts and takes none")
	}
	return c, nil
}

// refusal says why a token was refused, in the API's words.
func refusal(err error) string {
	switch {
	case errors.Is(err, decisiontoken.ErrExpired):
		return "has expired: post the receipt while the token holds"
	case errors.Is(err, decisiontoken.ErrNotYetValid):
		return "is issued in the future"
	case errors.Is(err, decisiontoken.ErrOrganization):
		return "was decided in another organisation"
	case errors.Is(err, decisiontoken.ErrIssuer):
		return "was issued by another instance"
	case errors.Is(err, decisiontoken.ErrSignature), errors.Is(err, decisiontoken.ErrUnknownKey), errors.Is(err, decisiontoken.ErrAlgorithm):
		return "was not signed by this instance"
	}
	return "is not a decision token"
}

// decided fills what rec's token decided, subject: the approval or the
// gate check, its flow and its action; issuedTo is who the token was
// issued to, the approval's requester or the check's caller.
func (s *Service) decided(ctx context.Context, rec *models.Receipt, subject string) (issuedTo string, err error) {
	missing := apperr.Field(apperr.InvalidRequest, "decisionToken", "decisionToken names %s, which this organisation does not have", subject)
	switch {
	case ids.HasPrefix(subject, ids.Approval):
		a, err := approvals.Records(s.store).Get(ctx, rec.OrganizationID, subject)
		if apperr.Is(err, apperr.NotFound) {
			return "", missing
		}
		if err != nil {
			return "", err
		}
		rec.ApprovalID, rec.FlowID, rec.Action = &a.ID, a.FlowID, a.Action
		return a.Requester, nil
	case ids.HasPrefix(subject, ids.GateCheck):
		c, err := s.store.GetGateCheck(ctx, rec.OrganizationID, subject)
		if apperr.Is(err, apperr.NotFound) {
			return "", missing
		}
		if err != nil {
			return "", err
		}
		rec.GateCheckID, rec.FlowID, rec.Action = &c.ID, c.FlowID, &c.Action
		return c.CallerID, nil
	}
	return "", missing
}

// mayReport is who may report a token's receipt: the key or person it was
// issued to, or an agent key its action names among its executors. Anyone
// else holding the token could otherwise take its one receipt first.
func (s *Service) mayReport(ctx context.Context, p models.Actor, rec *models.Receipt, issuedTo string) error {
	if p.ID == issuedTo {
		return nil
	}
	who := "the key or person it was issued to (" + issuedTo + ")"
	if rec.Action != nil {
		a, err := s.store.ActionNamed(ctx, rec.OrganizationID, *rec.Action)
		switch {
		case err == nil:
			if !p.IsPerson && p.Key != nil && slices.Contains(a.Executors, p.Key.ID) {
				return nil
			}
			who += " or a key action " + a.Name + " names among its executors"
		case !apperr.Is(err, apperr.NotFound):
			return err
		}
	}
	return apperr.New(apperr.Forbidden, "only %s may report this decision token's receipt", who)
}
