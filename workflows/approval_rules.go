package workflows

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
)

// Approval states.
const (
	StatusPending   = "pending"
	StatusApproved  = "approved"
	StatusRejected  = "rejected"
	StatusExpired   = "expired"
	StatusCancelled = "cancelled"
)

// ApprovalStatuses lists every approval state.
var ApprovalStatuses = []string{StatusPending, StatusApproved, StatusRejected, StatusExpired, StatusCancelled}

// Decisions an approver gives.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// ApprovalInput is what the workflow needs from the created record. The
// approvers are already resolved to person ids (teams expanded once).
type ApprovalInput struct {
	ApprovalID        string
	OrganizationID    string
	Risk              string
	ExternalID        string
	ExpiresAt         time.Time
	RequiredApprovals int
	ApproverIDs       []string
	// RequesterMemberID is set when a person created the request with a
	// member token; that person may not approve it.
	RequesterMemberID string
	// Requester is who created the request (a member id, or the key id
	// for an agent); only the requester answers questions.
	Requester      string
	Input          map[string]any
	EditableFields []string
	// ReasonRequired is set when an ethics rule matched.
	ReasonRequired bool
}

// DecideRequest is one approver's decision.
type DecideRequest struct {
	ActorID     string
	ActorName   string
	Decision    string
	Note        string
	Reason      string
	Corrections map[string]any
}

// AskRequest is an approver's question to the requester. The caller makes
// QuestionID so the workflow stays deterministic.
type AskRequest struct {
	ActorID    string
	ActorName  string
	QuestionID string
	Question   string
}

// AnswerRequest is the requester's answer.
type AnswerRequest struct {
	// Requester is whoever answers, identified as in ApprovalInput.
	Requester  string
	QuestionID string
	Answer     string
}

// CancelRequest withdraws a pending approval.
type CancelRequest struct {
	ActorID   string
	ActorName string
}

// Question is a question on an approval.
type Question struct {
	QuestionID string
	Question   string
	AskedBy    string
	// AskedByID is who gets the answer by email.
	AskedByID  string
	AskedAt    time.Time
	Answer     *string
	AnsweredAt *time.Time
}

// Change is one applied correction.
type Change struct {
	Field string `json:"field"`
	From  any    `json:"from"`
	To    any    `json:"to"`
}

// ApprovalState is the workflow's view of an approval; every transition
// persists a copy.
type ApprovalState struct {
	Status         string
	ApprovedBy     []string
	Questions      []Question
	DecidedByID    string
	DecidedByName  string
	DecidedAt      *time.Time
	Note           string
	Reason         string
	ApprovedInput  map[string]any
	Changes        []Change
	ApprovalsSoFar int
}

// Error types carried by Temporal application errors; the API maps each to
// the error code of the same name.
const (
	ErrInvalidState     = "invalid_state"
	ErrQuestionPending  = "question_pending"
	ErrNotAnApprover    = "not_an_approver"
	ErrQuestionNotFound = "question_not_found"
	ErrAlreadyAnswered  = "already_answered"
	ErrInvalidRequest   = "invalid_request"
	ErrNotTheRequester  = "not_the_requester"
)

func refuse(code, format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), code, nil)
}

// refuseField names the request field at fault in the error details.
func refuseField(field, format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), ErrInvalidRequest, nil, field)
}

// checkPending refuses any change to a settled approval.
func (s *ApprovalState) checkPending() error {
	if s.Status != StatusPending {
		return refuse(ErrInvalidState, "the approval is already %s", s.Status)
	}
	return nil
}

func (s *ApprovalState) openQuestion() *Question {
	for i := range s.Questions {
		if s.Questions[i].Answer == nil {
			return &s.Questions[i]
		}
	}
	return nil
}

// checkDecide says whether req may be applied now. The validator calls it
// to refuse early; the handler calls it again under the lock, because two
// updates can pass validation before either runs.
func checkDecide(in *ApprovalInput, s *ApprovalState, req DecideRequest) error {
	if err := s.checkPending(); err != nil {
		return err
	}
	if err := checkApprover(in, req.ActorID); err != nil {
		return err
	}
	if q := s.openQuestion(); q != nil {
		return refuse(ErrQuestionPending, "question %s is waiting for the requester's answer; nobody can decide until it is answered", q.QuestionID)
	}
	switch req.Decision {
	case DecisionReject:
		if len(req.Corrections) > 0 {
			return refuseField("corrections", "corrections apply to approvals only")
		}
		return nil
	case DecisionApprove:
	default:
		return refuseField("decision", "decision must be approve or reject")
	}
	if slices.Contains(s.ApprovedBy, req.ActorID) {
		return refuse(ErrInvalidState, "you have already approved this request")
	}
	if in.ReasonRequired && req.Reason == "" {
		return refuseField("reason", "an ethics rule matched this request, so approving it needs a written reason")
	}
	return checkCorrections(in, req.Corrections)
}

func checkApprover(in *ApprovalInput, actorID string) error {
	if in.RequesterMemberID != "" && actorID == in.RequesterMemberID {
		return refuse(ErrNotAnApprover, "you created this request, so you cannot decide it")
	}
	if !slices.Contains(in.ApproverIDs, actorID) {
		return refuse(ErrNotAnApprover, "you are not among this request's approvers")
	}
	return nil
}

// checkCorrections holds corrections to the rules: editable fields only,
// flat values of the same type as the proposal.
func checkCorrections(in *ApprovalInput, corrections map[string]any) error {
	for _, field := range sortedKeys(corrections) {
		path := "corrections." + field
		if !slices.Contains(in.EditableFields, field) {
			return refuseField(path, "%s is not an editable field", field)
		}
		want, got := flatKind(in.Input[field]), flatKind(corrections[field])
		if got == "" {
			return refuseField(path, "%s must be a string, number or boolean", field)
		}
		if got != want {
			return refuseField(path, "%s must stay a %s", field, want)
		}
	}
	return nil
}

// flatKind names a JSON scalar's type, or "" for anything else.
func flatKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64, float32, int, int64, int32:
		return "number"
	case bool:
		return "boolean"
	}
	return ""
}

// applyCorrections returns input with corrections applied and the changes,
// sorted by field; a correction equal to the proposal is no change.
func applyCorrections(input, corrections map[string]any) (map[string]any, []Change) {
	out := make(map[string]any, len(input))
	for k, v := range input {
		out[k] = v
	}
	changes := []Change{}
	for _, field := range sortedKeys(corrections) {
		if input[field] == corrections[field] {
			continue
		}
		changes = append(changes, Change{Field: field, From: input[field], To: corrections[field]})
		out[field] = corrections[field]
	}
	return out, changes
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func checkAsk(in *ApprovalInput, s *ApprovalState, req AskRequest) error {
	if err := s.checkPending(); err != nil {
		return err
	}
	if err := checkApprover(in, req.ActorID); err != nil {
		return err
	}
	if req.Question == "" {
		return refuseField("question", "question is required")
	}
	if q := s.openQuestion(); q != nil {
		return refuse(ErrQuestionPending, "question %s is still waiting for an answer", q.QuestionID)
	}
	return nil
}

func checkAnswer(in *ApprovalInput, s *ApprovalState, req AnswerRequest) error {
	if req.Requester != in.Requester {
		return refuse(ErrNotTheRequester, "only the requester may answer questions")
	}
	for _, q := range s.Questions {
		if q.QuestionID != req.QuestionID {
			continue
		}
		if q.Answer != nil {
			return refuse(ErrAlreadyAnswered, "question %s already has an answer", q.QuestionID)
		}
		if err := s.checkPending(); err != nil {
			return err
		}
		if req.Answer == "" {
			return refuseField("answer", "answer is required")
		}
		return nil
	}
	return refuse(ErrQuestionNotFound, "question %s is not on this approval", req.QuestionID)
}
