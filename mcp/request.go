package mcp

import (
	"context"
	"errors"
	"strings"
	"time"

	assent "github.com/assent-hq/assent/sdk/go"
)

// Request is what every tool that asks a person returns: one shape for
// approvals, requests for information and reviews.
type Request struct {
	Kind      string `json:"kind" jsonschema:"approval, collection (a request for information) or review"`
	RequestID string `json:"requestId" jsonschema:"the request's id: pass it to wait_for_decision, get_request or cancel_request"`
	Status    string `json:"status" jsonschema:"pending or open while nobody has settled it (not a rejection: call wait_for_decision); approved, rejected, complete, changes_requested, expired or cancelled once settled"`
	Settled   bool   `json:"settled" jsonschema:"true once the request can no longer change"`
	URL       string `json:"url" jsonschema:"the page where people decide or answer"`
	Title     string `json:"title"`
	// Approvals.
	ApprovedInput     map[string]any `json:"approvedInput,omitempty" jsonschema:"the input as approved, with the person's corrections: run the action with exactly this, never with the input you proposed"`
	Changes           []Change       `json:"changes,omitempty" jsonschema:"what the person corrected"`
	DecisionToken     string         `json:"decisionToken,omitempty" jsonschema:"a signed token proving approvedInput was approved; pass it to the system that runs the action"`
	DecidedBy         string         `json:"decidedBy,omitempty"`
	DecidedOnBehalfOf string         `json:"decidedOnBehalfOf,omitempty" jsonschema:"the person away for whom decidedBy decided (their delegation); absent when decidedBy decided in their own name"`
	Note              string         `json:"note,omitempty" jsonschema:"what the person wrote with the decision"`
	Reason            string         `json:"reason,omitempty"`
	Questions         []Question     `json:"questions,omitempty" jsonschema:"questions an approver asked you and that are not answered yet: answer each with answer_question"`
	// Requests for information.
	Replies []Reply `json:"replies,omitempty" jsonschema:"the submitted answers, keyed by question id"`
	// Reviews.
	ReportID      string    `json:"reportId,omitempty"`
	Verdicts      []Verdict `json:"verdicts,omitempty"`
	RevisionBrief string    `json:"revisionBrief,omitempty" jsonschema:"when changes are requested: the reviewers' comments as one brief to revise the report by"`
}

// Change is one field a person corrected.
type Change struct {
	Field string `json:"field"`
	From  any    `json:"from"`
	To    any    `json:"to"`
}

// Question is one an approver asked the agent.
type Question struct {
	QuestionID string `json:"questionId"`
	Question   string `json:"question"`
	AskedBy    string `json:"askedBy"`
}

// Reply is one respondent's submitted answers.
type Reply struct {
	Respondent string         `json:"respondent"`
	OnBehalfOf string         `json:"onBehalfOf,omitempty" jsonschema:"the person away for whom the respondent answered; absent when they answered in their own name"`
	Answers    map[string]any `json:"answers"`
}

// Verdict is one reviewer's.
type Verdict struct {
	Reviewer   string `json:"reviewer"`
	OnBehalfOf string `json:"onBehalfOf,omitempty" jsonschema:"the person away for whom the reviewer gave the verdict; absent when they gave it in their own name"`
	Verdict    string `json:"verdict"`
	Note       string `json:"note,omitempty"`
}

func fromApproval(a *assent.Approval) *Request {
	r := &Request{Kind: "approval", RequestID: a.ID, Status: a.Status, Settled: a.Status != "pending", URL: a.URL,
		Title: a.Title, DecidedBy: deref(a.DecidedBy), DecidedOnBehalfOf: deref(a.DecidedOnBehalfOf), Note: deref(a.Note),
		Reason: deref(a.Reason)}
	if a.Status == "approved" {
		r.ApprovedInput = a.ApprovedInput
		if r.ApprovedInput == nil {
			r.ApprovedInput = map[string]any{}
		}
		r.DecisionToken = a.DecisionToken
	}
	for _, c := range a.Changes {
		r.Changes = append(r.Changes, Change{Field: c.Field, From: c.From, To: c.To})
	}
	for _, q := range a.Questions {
		if q.Answer == nil && a.Status == "pending" {
			r.Questions = append(r.Questions, Question{QuestionID: q.QuestionID, Question: q.Question, AskedBy: q.AskedBy})
		}
	}
	return r
}

func fromCollection(c *assent.Collection) *Request {
	r := &Request{Kind: "collection", RequestID: c.ID, Status: c.Status, Settled: c.Status != "open", URL: c.URL, Title: c.Title}
	for _, rep := range c.Replies {
		who := rep.Respondent.Name
		if rep.Respondent.Email != "" {
			who += " <" + rep.Respondent.Email + ">"
		}
		r.Replies = append(r.Replies, Reply{Respondent: strings.TrimSpace(who), OnBehalfOf: onBehalfOf(rep.OnBehalfOf),
			Answers: rep.Answers})
	}
	return r
}

func fromReview(ctx context.Context, c *assent.Client, v *assent.Review) *Request {
	r := &Request{Kind: "review", RequestID: v.ID, Status: v.Status, Settled: v.Status != "open", URL: v.URL, Title: v.Title,
		ReportID: v.ReportID}
	for _, x := range v.Verdicts {
		r.Verdicts = append(r.Verdicts, Verdict{Reviewer: x.Reviewer.Name, OnBehalfOf: onBehalfOf(x.OnBehalfOf),
			Verdict: x.Verdict, Note: x.Note})
	}
	if v.Status == "changes_requested" {
		// The brief is a convenience: a key that cannot read comments
		// still gets the verdicts.
		if b, err := c.Comments.RevisionBrief(ctx, v.ReportID, &assent.RevisionBriefCreate{}); err == nil {
			r.RevisionBrief = b.Text
		}
	}
	return r
}

// kindOf reads a request's kind from its id's prefix.
func kindOf(id string) (string, error) {
	prefix, _, _ := strings.Cut(id, "_")
	switch prefix {
	case "apr":
		return "approval", nil
	case "col":
		return "collection", nil
	case "rev":
		return "review", nil
	}
	return "", &assent.Error{Code: assent.CodeNotFound, Status: 404, Field: "requestId",
		Message: "requestId must name an approval (apr_…), a request for information (col_…) or a review (rev_…)"}
}

func getRequest(ctx context.Context, c *assent.Client, id string) (*Request, error) {
	kind, err := kindOf(id)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "approval":
		a, err := c.Approvals.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		return fromApproval(a), nil
	case "collection":
		x, err := c.Collections.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		return fromCollection(x), nil
	default:
		x, err := c.Reviews.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		return fromReview(ctx, c, x), nil
	}
}

// waitRequest long-polls id for up to seconds and returns it settled or
// still open; an open request is never reported as settled.
func waitRequest(ctx context.Context, c *assent.Client, id string, seconds int) (*Request, error) {
	kind, err := kindOf(id)
	if err != nil {
		return nil, err
	}
	if seconds <= 0 {
		return getRequest(ctx, c, id)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Duration(seconds)*time.Second)
	defer cancel()
	switch kind {
	case "approval":
		a, err := waitOne(ctx, c.Approvals.Wait, wctx, id)
		if a == nil {
			return orGet(ctx, c, id, err)
		}
		return fromApproval(a), nil
	case "collection":
		x, err := waitOne(ctx, c.Collections.Wait, wctx, id)
		if x == nil {
			return orGet(ctx, c, id, err)
		}
		return fromCollection(x), nil
	default:
		x, err := waitOne(ctx, c.Reviews.Wait, wctx, id)
		if x == nil {
			return orGet(ctx, c, id, err)
		}
		return fromReview(ctx, c, x), nil
	}
}

// waitOne turns the SDK's timeout into its last read, still open.
func waitOne[T any](ctx context.Context, wait func(context.Context, string) (*T, error), wctx context.Context, id string) (*T, error) {
	v, err := wait(wctx, id)
	var timeout *assent.WaitTimeoutError[T]
	if errors.As(err, &timeout) && ctx.Err() == nil {
		return timeout.Last, nil
	}
	return v, err
}

// orGet reads the request once when the wait ended before any read.
func orGet(ctx context.Context, c *assent.Client, id string, err error) (*Request, error) {
	if err != nil {
		return nil, err
	}
	return getRequest(ctx, c, id)
}

// onBehalfOf names the person a delegate stood in for, as decidedBy names
// the decider: by name.
func onBehalfOf(p *assent.OnBehalfOf) string {
	if p == nil {
		return ""
	}
	return p.Name
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
