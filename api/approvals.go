package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/actions"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/internal/start"
	"github.com/assent-hq/assent/internal/wire"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// MaxWait bounds a long-poll.
const MaxWait = 60 * time.Second

type approvalFactor struct {
	Label  string `json:"label" validate:"required,max=200"`
	Status string `json:"status" validate:"required,oneof=ok warning info"`
	Detail string `json:"detail" validate:"max=2000"`
}

type approvalLink struct {
	Label string `json:"label" validate:"required,max=200"`
	URL   string `json:"url" validate:"required,max=2048,http_url"`
}

// createApprovalRequest is spec 2.1's create body with its limits.
type createApprovalRequest struct {
	Title          string           `json:"title" validate:"required,notblank,max=200"`
	Description    string           `json:"description" validate:"max=20000"`
	Risk           string           `json:"risk" validate:"omitempty,oneof=low medium high critical"`
	Factors        []approvalFactor `json:"factors" validate:"max=20,dive"`
	Links          []approvalLink   `json:"links" validate:"max=10,dive"`
	ReportID       *string          `json:"reportId" validate:"omitempty,max=40"`
	Approvers      []string         `json:"approvers" validate:"max=20,dive,required,max=320"`
	ExpiresAt      *string          `json:"expiresAt"`
	ExternalID     *string          `json:"externalId" validate:"omitempty,max=255"`
	FlowID         *string          `json:"flowId" validate:"omitempty,max=40"`
	Metadata       json.RawMessage  `json:"metadata"`
	Input          json.RawMessage  `json:"input"`
	EditableFields []string         `json:"editableFields" validate:"max=100,dive,required,max=200"`
	CallbackURL    *string          `json:"callbackUrl" validate:"omitempty,max=2048"`
}

func (h *handlers) createApproval(c *gin.Context) {
	var in createApprovalRequest
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	ctx := c.Request.Context()
	p := principal(c)
	rec, err := h.newApproval(ctx, p, &in)
	if err != nil {
		fail(c, err)
		return
	}
	if err := h.store.CreateApproval(ctx, rec); err != nil {
		fail(c, err)
		return
	}
	if err := start.Approval(ctx, h.temporal, rec); err != nil {
		// Nothing may be left that no workflow owns: take the record back.
		// Should that fail too, the worker's reconciler starts it later.
		if derr := h.store.DeleteUnstartedApproval(context.WithoutCancel(ctx), rec.OrganizationID, rec.ID); derr != nil {
			h.log.Error("remove approval after failed start", "approval", rec.ID, "error", derr)
		}
		h.log.Error("start approval workflow", "approval", rec.ID, "error", err)
		fail(c, apperr.New(apperr.Unavailable, "the approval could not be started, so nothing was created; try again"))
		return
	}
	out := wire.NewApproval(rec, h.baseURL)
	out.CallbackSecret = rec.CallbackSecret
	c.Header("Location", "/api/v1/approvals/"+rec.ID)
	c.JSON(http.StatusCreated, out)
}

// newApproval checks what the validator tags cannot and builds the record.
func (h *handlers) newApproval(ctx context.Context, p *models.Principal, in *createApprovalRequest) (*models.Approval, error) {
	now := models.Now()
	rec := &models.Approval{
		OrganizationID: p.Organization.ID, Title: strings.TrimSpace(in.Title), Description: in.Description,
		Risk: in.Risk, ReportID: in.ReportID, Approvers: in.Approvers, ExternalID: in.ExternalID, FlowID: in.FlowID,
		EditableFields: in.EditableFields, RequiredApprovals: 1, Requester: p.Actor().ID, RequestedBy: p.Actor().Name,
		ApprovedBy: models.StringList{},
	}
	if rec.Risk == "" {
		rec.Risk = models.RiskMedium
	}
	for _, f := range in.Factors {
		rec.Factors.V = append(rec.Factors.V, models.Factor(f))
	}
	for _, l := range in.Links {
		rec.Links.V = append(rec.Links.V, models.Link(l))
	}
	var err error
	if rec.ExpiresAt, err = expiry(in.ExpiresAt, now, p.Organization.MaxApprovalExpiry()); err != nil {
		return nil, err
	}
	if rec.Metadata, err = jsonObject("metadata", in.Metadata); err != nil {
		return nil, err
	}
	if rec.Input, err = jsonObject("input", in.Input); err != nil {
		return nil, err
	}
	if err := checkEditableFields(rec.Input, in.EditableFields); err != nil {
		return nil, err
	}
	if in.CallbackURL != nil {
		if err := h.netPolicy.CheckURL(ctx, *in.CallbackURL); err != nil {
			return nil, apperr.Field(apperr.InvalidCallbackURL, "callbackUrl", "callbackUrl is refused: %v", err)
		}
		secret := newSecret("asnt_cbs_")
		rec.CallbackURL, rec.CallbackSecret = in.CallbackURL, &secret
	}
	if rec.ApproverIDs, err = h.store.ResolveApprovers(ctx, p.Organization, in.Approvers); err != nil {
		return nil, err
	}
	if len(rec.ApproverIDs) == 0 {
		return nil, apperr.Field(apperr.UnknownApprover, "approvers", "nobody could approve this request: the organisation has no active owner or administrator")
	}
	if err := h.applyRules(ctx, rec, in); err != nil {
		return nil, err
	}
	return rec, nil
}

// applyRules evaluates the organisation's rules over the request as sent
// and records what they ask: more approvals, concerns, hidden fields.
func (h *handlers) applyRules(ctx context.Context, rec *models.Approval, in *createApprovalRequest) error {
	stored, err := h.store.EnabledRules(ctx, rec.OrganizationID)
	if err != nil || len(stored) == 0 {
		return err
	}
	rs := make([]rules.Rule, len(stored))
	for i, r := range stored {
		rs[i] = rules.Rule{Name: r.Name, Kind: r.Kind, Condition: r.Condition, RequiredApprovals: r.RequiredApprovals,
			Principle: r.Principle, Concern: r.Concern, Fields: r.Fields}
	}
	request, err := ruleInput(in, rec.Risk)
	if err != nil {
		return err
	}
	out := rules.Evaluate(rs, request)
	for _, e := range out.Errors {
		h.log.Warn("rule did not evaluate", "organization", rec.OrganizationID, "error", e)
	}
	eligible := slices.DeleteFunc(slices.Clone(rec.ApproverIDs), func(id string) bool { return id == rec.Requester })
	if out.RequiredApprovals > len(eligible) {
		return apperr.Field(apperr.InvalidRequest, "approvers", "an organisation rule needs %d approvals, but only %d people can approve this request", out.RequiredApprovals, len(eligible))
	}
	rec.RequiredApprovals = out.RequiredApprovals
	for _, c := range out.Concerns {
		rec.Concerns.V = append(rec.Concerns.V, models.Concern(c))
	}
	rec.RestrictedFields = out.RestrictedFields
	return nil
}

// ruleInput is the request as rule conditions see it: the fields as sent,
// with the default risk filled in.
func ruleInput(in *createApprovalRequest, risk string) (map[string]any, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	out["risk"] = risk
	return out, nil
}

// expiry is the requested expiry, which must lie in the future and within
// the organisation's maximum; absent, it is the maximum, so nothing waits
// forever.
func expiry(raw *string, now time.Time, max time.Duration) (time.Time, error) {
	if raw == nil {
		return now.Add(max), nil
	}
	t, err := time.Parse(time.RFC3339Nano, *raw)
	if err != nil {
		return time.Time{}, apperr.Field(apperr.InvalidRequest, "expiresAt", "expiresAt must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z")
	}
	t = t.UTC().Truncate(time.Microsecond)
	switch {
	case !t.After(now):
		return time.Time{}, apperr.Field(apperr.InvalidRequest, "expiresAt", "expiresAt must be in the future")
	case t.After(now.Add(max)):
		return time.Time{}, apperr.Field(apperr.InvalidRequest, "expiresAt", "expiresAt may be at most %s ahead (the organisation's maximum)", max)
	}
	return t, nil
}

// jsonObject keeps a JSON object as sent (compacted); null means absent.
func jsonObject(field string, raw json.RawMessage) (models.RawJSON, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, apperr.Field(apperr.InvalidRequest, field, "%s must be a JSON object", field)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, apperr.Field(apperr.InvalidRequest, field, "%s is not valid JSON", field)
	}
	return buf.Bytes(), nil
}

// checkEditableFields requires each editable field to name a key of input
// whose value is flat: a string, number or boolean.
func checkEditableFields(input models.RawJSON, fields []string) error {
	var values map[string]json.RawMessage
	if len(input) > 0 {
		_ = json.Unmarshal(input, &values)
	}
	for i, f := range fields {
		field := fmt.Sprintf("editableFields[%d]", i)
		v, ok := values[f]
		if !ok {
			return apperr.Field(apperr.InvalidRequest, field, "editable field %q is not a key of input", f)
		}
		if slices.Contains(fields[:i], f) {
			return apperr.Field(apperr.InvalidRequest, field, "editable field %q is listed twice", f)
		}
		switch v[0] {
		case '{', '[', 'n':
			return apperr.Field(apperr.InvalidRequest, field, "editable field %q must hold a string, number or boolean", f)
		}
	}
	return nil
}

// newSecret makes a signing secret: 256 random bits after a prefix that
// says what it signs (asnt_cbs_ callbacks, whsec_ webhooks).
func newSecret(prefix string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func (h *handlers) listApprovals(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	f := models.ApprovalFilter{Status: c.Query("status"), ExternalID: c.Query("externalId")}
	if f.Status != "" && !slices.Contains(workflows.ApprovalStatuses, f.Status) {
		fail(c, apperr.Field(apperr.InvalidRequest, "status", "status must be one of: %s", strings.Join(workflows.ApprovalStatuses, ", ")))
		return
	}
	h.respondApprovals(c, f, p)
}

// inbox lists the requests the calling person may decide that are pending.
func (h *handlers) inbox(c *gin.Context) {
	m, err := person(c, "an inbox")
	if err != nil {
		fail(c, err)
		return
	}
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	h.respondApprovals(c, models.ApprovalFilter{Status: models.ApprovalPending, ApproverID: m.ID}, p)
}

func (h *handlers) respondApprovals(c *gin.Context, f models.ApprovalFilter, p models.Page) {
	rows, next, err := h.store.ListApprovals(c.Request.Context(), orgID(c), f, p)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, newList(rows, next, func(a *models.Approval) wire.Approval { return wire.NewApproval(a, h.baseURL) }))
}

// getApproval returns the approval; with ?wait= it first waits, up to
// MaxWait, for the approval to leave pending.
func (h *handlers) getApproval(c *gin.Context) {
	wait, err := waitParam(c.Query("wait"))
	if err != nil {
		fail(c, err)
		return
	}
	ctx := c.Request.Context()
	a, err := h.store.GetApproval(ctx, orgID(c), c.Param("id"))
	if err == nil && wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		// A wake-up means "may have changed": a question asked is a change
		// that leaves it pending, so wait on until it settles or time is up.
		for err == nil && a.Status == models.ApprovalPending && wctx.Err() == nil {
			h.watcher.Wait(wctx, a.ID)
			a, err = h.store.GetApproval(ctx, orgID(c), a.ID)
		}
		cancel()
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewApproval(a, h.baseURL))
}

// waitParam reads ?wait= as a duration ("30s") or whole seconds ("30").
func waitParam(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if n, nerr := strconv.Atoi(s); nerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil || d < 0 || d > MaxWait {
		return 0, apperr.Field(apperr.InvalidRequest, "wait", "wait must be a duration from 0s to %s, such as 30s", MaxWait)
	}
	return d, nil
}

// person is the member behind a member token, as an actor; for other keys
// the error names the action (what) that needs a person.
func person(c *gin.Context, what string) (models.Actor, error) {
	if p := principal(c); p.Member != nil {
		return p.Actor(), nil
	}
	return models.Actor{}, apperr.New(apperr.Forbidden, "%s belongs to a person: use a member token", what)
}

func (h *handlers) decideApproval(c *gin.Context) {
	var in actions.Decision
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	m, err := person(c, "deciding")
	if err != nil {
		fail(c, err)
		return
	}
	a, err := h.actions.Decide(c.Request.Context(), orgID(c), c.Param("id"), c.GetHeader(idempotencyHeader), m, in)
	h.respondApproval(c, a, err)
}

func (h *handlers) askQuestion(c *gin.Context) {
	var in actions.Question
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	m, err := person(c, "asking the requester")
	if err != nil {
		fail(c, err)
		return
	}
	_, q, err := h.actions.Ask(c.Request.Context(), orgID(c), c.Param("id"), c.GetHeader(idempotencyHeader), m, in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, wire.NewQuestion(q))
}

type answerRequest struct {
	QuestionID string `json:"questionId" validate:"required,max=40"`
	Answer     string `json:"answer" validate:"required,max=5000"`
}

func (h *handlers) answerQuestion(c *gin.Context) {
	var in answerRequest
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	req := workflows.AnswerRequest{Requester: principal(c).Actor().ID, QuestionID: in.QuestionID, Answer: in.Answer}
	h.respondUpdate(c, workflows.UpdateAnswer, req)
}

func (h *handlers) cancelApproval(c *gin.Context) {
	actor := principal(c).Actor()
	h.respondUpdate(c, workflows.UpdateCancel, workflows.CancelRequest{ActorID: actor.ID, ActorName: actor.Name})
}

// respondUpdate sends an Update on the approval in the path and answers
// with the approval as the workflow left it.
func (h *handlers) respondUpdate(c *gin.Context, name string, arg any) {
	a, err := h.actions.Update(c.Request.Context(), orgID(c), c.Param("id"), c.GetHeader(idempotencyHeader), name, arg)
	h.respondApproval(c, a, err)
}

func (h *handlers) respondApproval(c *gin.Context, a *models.Approval, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewApproval(a, h.baseURL))
}
