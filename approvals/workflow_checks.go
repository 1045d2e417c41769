package approvals

import (
	"encoding/json"
	"maps"
	"math/big"
	"slices"
	"strconv"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// checkPending refuses any change to a settled approval.
func (s *State) checkPending() error {
	return workflows.RefuseSettled(s.Status, states.Pending, "approval")
}

func (s *State) openQuestion() *AskedQuestion {
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
func checkDecide(in *WorkflowInput, s *State, req DecideRequest) error {
	if err := s.checkPending(); err != nil {
		return err
	}
	if err := checkApprover(in, s, req.ActorID); err != nil {
		return err
	}
	if q := s.openQuestion(); q != nil {
		return workflows.Refuse(apperr.QuestionPending, "question %s is waiting for the requester's answer; nobody can decide until it is answered", q.QuestionID)
	}
	switch req.Decision {
	case DecisionReject:
		if len(req.Corrections) > 0 {
			return workflows.RefuseField("corrections", "corrections apply to approvals only")
		}
		return nil
	case DecisionApprove:
	default:
		return workflows.RefuseField("decision", "decision must be approve or reject")
	}
	if slices.Contains(s.ApprovedBy, req.ActorID) {
		return workflows.Refuse(apperr.InvalidState, "you have already approved this request")
	}
	if workflows.ActedFor(s.OnBehalfOf, s.ApprovedBy, req.ActorID) {
		return workflows.Refuse(apperr.InvalidState, "this request was already approved by or on behalf of the person you act for")
	}
	if in.ReasonRequired && req.Reason == "" {
		return workflows.RefuseField("reason", "an ethics rule matched this request, so approving it needs a written reason")
	}
	if len(s.ScreenConcerns) > 0 && req.Reason == "" {
		return workflows.RefuseField("reason", "the model screen raised a concern about this request, so approving it needs a written reason")
	}
	return CheckCorrections(in.Input, in.EditableFields, req.Corrections)
}

// checkApprover holds the requester apart from deciding, also through a
// delegation: standing in for the requester is deciding as them.
func checkApprover(in *WorkflowInput, s *State, actorID string) error {
	if in.RequesterMemberID != "" && actorID == in.RequesterMemberID {
		return workflows.Refuse(apperr.NotAnApprover, "you created this request, so you cannot decide it")
	}
	if d := workflows.StandsInFor(s.OnBehalfOf, actorID); d != nil && in.RequesterMemberID != "" && d.ID == in.RequesterMemberID {
		return workflows.Refuse(apperr.NotAnApprover, "you stand in for %s, who created this request, so you cannot decide it", d.Name)
	}
	if !slices.Contains(s.ApproverIDs, actorID) {
		return workflows.Refuse(apperr.NotAnApprover, "you are not among this request's approvers")
	}
	return nil
}

// CheckCorrections holds corrections to the rules: editable fields only,
// flat values of the same type as the proposal. The approvals service
// asks too: it holds corrections the workflow accepts to a gated action's
// schema before it sends the decision, so no replay compiles a schema.
func CheckCorrections(input json.RawMessage, editable []string, corrections map[string]json.RawMessage) error {
	proposed := fields(input)
	for _, field := range sortedKeys(corrections) {
		path := "corrections." + field
		if !slices.Contains(editable, field) {
			return workflows.RefuseField(path, "%s is not an editable field", field)
		}
		want, got := flatKind(proposed[field]), flatKind(corrections[field])
		if got == "" {
			return workflows.RefuseField(path, "%s must be a string, number or boolean", field)
		}
		if got != want {
			return workflows.RefuseField(path, "%s must stay a %s", field, want)
		}
		if got == "number" {
			if _, err := strconv.ParseFloat(string(corrections[field]), 64); err != nil {
				return workflows.RefuseField(path, "%s is beyond the range of numbers", field)
			}
		}
	}
	return nil
}

// fields are the members of a JSON object, as raw JSON; none for anything
// else.
func fields(object json.RawMessage) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	_ = json.Unmarshal(object, &out)
	return out
}

// sortedKeys are m's keys in order, the same on every replay.
func sortedKeys(m map[string]json.RawMessage) []string {
	return slices.Sorted(maps.Keys(m)) //workflowcheck:ignore sorted
}

// flatKind names a JSON scalar's type, or "" for anything else.
func flatKind(v json.RawMessage) string {
	switch {
	case len(v) == 0:
		return ""
	case v[0] == '"':
		return "string"
	case v[0] == '-' || (v[0] >= '0' && v[0] <= '9'):
		return "number"
	case string(v) == "true" || string(v) == "false":
		return "boolean"
	}
	return ""
}

// CorrectedInput is input with corrections applied, as an approval with
// them approves it (applyCorrections): what the approvals service holds to
// a gated action's schema.
func CorrectedInput(input json.RawMessage, corrections map[string]json.RawMessage) json.RawMessage {
	corrected, _ := applyCorrections(input, corrections)
	return corrected
}

// applyCorrections returns input with corrections applied, and the
// changes sorted by field; a correction equal to the proposal is no
// change. It works on the raw JSON, so every value keeps its exact text.
// This is the one place approvedInput is computed.
func applyCorrections(input json.RawMessage, corrections map[string]json.RawMessage) (json.RawMessage, []AppliedChange) {
	out := fields(input)
	changes := []AppliedChange{}
	for _, field := range sortedKeys(corrections) {
		if sameValue(out[field], corrections[field]) {
			continue
		}
		changes = append(changes, AppliedChange{Field: field, From: out[field], To: corrections[field]})
	}
	if len(changes) == 0 {
		if len(input) == 0 {
			return json.RawMessage("{}"), changes
		}
		return input, changes
	}
	for _, c := range changes {
		out[c.Field] = c.To
	}
	b, _ := json.Marshal(out) // raw values of a decoded object always encode
	return b, changes
}

// sameValue reports whether two JSON scalars are equal as values: 100 and
// 100.0 are the same number, "\u0041" and "A" the same string.
func sameValue(a, b json.RawMessage) bool {
	switch ka := flatKind(a); {
	case ka == "" || ka != flatKind(b):
		return false
	case ka == "number":
		x, okx := new(big.Rat).SetString(string(a))
		y, oky := new(big.Rat).SetString(string(b))
		return okx && oky && x.Cmp(y) == 0
	case ka == "string":
		var x, y string
		return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && x == y
	}
	return string(a) == string(b)
}

func checkAsk(in *WorkflowInput, s *State, req AskRequest) error {
	if err := s.checkPending(); err != nil {
		return err
	}
	if err := checkApprover(in, s, req.ActorID); err != nil {
		return err
	}
	if req.Question == "" {
		return workflows.RefuseField("question", "question is required")
	}
	if q := s.openQuestion(); q != nil {
		return workflows.Refuse(apperr.QuestionPending, "question %s is still waiting for an answer", q.QuestionID)
	}
	// Every other Update replayed onto its own request is refused by its
	// state (already approved, answered, settled); an ask would add a
	// question nobody could answer, as answers find the first by its id.
	if slices.ContainsFunc(s.Questions, func(q AskedQuestion) bool { return q.QuestionID == req.QuestionID }) {
		return workflows.Refuse(apperr.Conflict, "question %s was already asked", req.QuestionID)
	}
	return nil
}

func checkAnswer(in *WorkflowInput, s *State, req AnswerRequest) error {
	if req.Requester != in.Requester {
		return workflows.Refuse(apperr.NotTheRequester, "only the requester may answer questions")
	}
	for _, q := range s.Questions {
		if q.QuestionID != req.QuestionID {
			continue
		}
		if q.Answer != nil {
			return workflows.Refuse(apperr.AlreadyAnswered, "question %s already has an answer", q.QuestionID)
		}
		if err := s.checkPending(); err != nil {
			return err
		}
		if req.Answer == "" {
			return workflows.RefuseField("answer", "answer is required")
		}
		return nil
	}
	return workflows.Refuse(apperr.QuestionNotFound, "question %s is not on this approval", req.QuestionID)
}
