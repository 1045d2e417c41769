package collections

import (
	"encoding/json"
	"slices"

	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// checkOpen refuses any change to a settled collection.
func (s *State) checkOpen() error {
	return workflows.RefuseSettled(s.Status, states.Open, "request for information")
}

// checkReply says whether a respondent's reply may be stored now: the
// validator calls it to refuse early, the handler again under the lock.
func checkReply(in *WorkflowInput, s *State, r SubmitReplyRequest) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if !slices.Contains(s.RespondentIDs, r.RespondentID) {
		return workflows.Refuse(apperr.NotARespondent, "you were not asked to reply to this request for information")
	}
	if s.submitted(r.RespondentID) {
		return workflows.Refuse(apperr.AlreadySubmitted, "you have already submitted your reply")
	}
	if workflows.ActedFor(s.OnBehalfOf, s.respondents(), r.RespondentID) {
		return workflows.Refuse(apperr.AlreadySubmitted, "a reply was already submitted by or on behalf of the person you act for")
	}
	_, err := checkAnswers(in.Questions, r.Answers)
	return err
}

// checkAnswers types a submitted reply's answers, refusing with the
// question at fault.
func checkAnswers(qs []questions.Question, answers map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	typed, err := questions.Check(qs, answers, true)
	if e, ok := apperr.As(err); ok {
		return nil, temporal.NewNonRetryableApplicationError(e.Message, apperr.InvalidAnswer, nil, e.Field)
	}
	return typed, err
}

// checkRemoveRespondent takes off an open request only someone asked who
// has not replied; the caller treats any refusal as nothing left to do.
func (s *State) checkRemoveRespondent(r RemoveRespondentRequest) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if !slices.Contains(s.RespondentIDs, r.PersonID) {
		return workflows.Refuse(apperr.NotARespondent, "%s is not among this request's respondents", r.PersonID)
	}
	if s.submitted(r.PersonID) {
		return workflows.Refuse(apperr.AlreadySubmitted, "%s has already replied", r.PersonID)
	}
	return nil
}
