package collections

import (
	"encoding/json"

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

// replyRefusals are how a reply is refused for who sends it.
var replyRefusals = workflows.ActRefusals{NotAsked: "you were not asked to reply to this request for information",
	Acted: "you have already submitted your reply", ActedCode: apperr.AlreadySubmitted,
	ActedFor: "a reply was already submitted by or on behalf of the person you act for"}

// checkReply says whether a respondent's reply may be stored now: the
// validator calls it to refuse early, the handler again under the lock.
func (c *collection) checkReply(r SubmitReplyRequest) error {
	if err := c.CheckAct(r.RespondentID, replyRefusals); err != nil {
		return err
	}
	_, err := checkAnswers(c.in.Questions, r.Answers)
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
