// Package actions is what people and agents do to a request once it
// exists: decide, ask, answer, cancel. It is the one code path behind the
// REST endpoints and the pages. Each action is an Update to the request's
// workflow, which decides who may act; this package sends it and maps what
// Temporal answers to the API's errors.
package actions

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// Service runs actions against the store and Temporal.
type Service struct {
	Store    *models.Store
	Temporal client.Client
}

// Decision is a person's decision on an approval. Its tags are the limits
// for the REST body and the page's form alike.
type Decision struct {
	Decision    string         `json:"decision" validate:"required,oneof=approve reject"`
	Note        string         `json:"note" validate:"max=5000"`
	Reason      string         `json:"reason" validate:"max=5000"`
	Corrections map[string]any `json:"corrections" validate:"max=100"`
}

// Question is an approver's question to the requester.
type Question struct {
	Question string `json:"question" validate:"required,max=5000"`
}

// Decide records who decides what; the workflow refuses a person who may
// not, or a decision the request's state forbids.
func (s *Service) Decide(ctx context.Context, orgID, approvalID, updateID string, who models.Actor, d Decision) (*models.Approval, error) {
	return s.Update(ctx, orgID, approvalID, updateID, workflows.UpdateDecide, workflows.DecideRequest{ActorID: who.ID,
		ActorName: who.Name, Decision: d.Decision, Note: d.Note, Reason: d.Reason, Corrections: d.Corrections})
}

// Ask puts a question to the requester and returns the approval with the
// question asked.
func (s *Service) Ask(ctx context.Context, orgID, approvalID, updateID string, who models.Actor, q Question) (*models.Approval, *models.Question, error) {
	req := workflows.AskRequest{ActorID: who.ID, ActorName: who.Name, QuestionID: ids.New(ids.Question), Question: q.Question}
	a, err := s.Update(ctx, orgID, approvalID, updateID, workflows.UpdateAsk, req)
	if err != nil {
		return nil, nil, err
	}
	for i := range a.Questions.V {
		if asked := &a.Questions.V[i]; asked.QuestionID == req.QuestionID {
			return a, asked, nil
		}
	}
	return nil, nil, fmt.Errorf("question %s missing after it was asked", req.QuestionID)
}

// Update sends an Update to the approval's workflow and returns the record
// as the workflow left it: the transition is persisted before the Update
// completes. updateID, when set (the Idempotency-Key), makes Temporal run a
// retried request once.
func (s *Service) Update(ctx context.Context, orgID, approvalID, updateID, name string, arg any) (*models.Approval, error) {
	a, err := s.Store.GetApproval(ctx, orgID, approvalID)
	if err != nil {
		return nil, err
	}
	handle, err := s.Temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflows.ApprovalWorkflowID(a.ID),
		UpdateID:     updateID,
		UpdateName:   name,
		Args:         []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, nil)
	}
	if err != nil {
		return nil, s.workflowError(ctx, a, err)
	}
	// The transition may have been persisted by a worker in another
	// process; long-polls in this one hear of it here.
	s.Store.ApprovalChanged(a.ID)
	return s.Store.GetApproval(ctx, a.OrganizationID, a.ID)
}
