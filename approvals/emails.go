package approvals

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"

	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/requests"
)

// An approval's emails: to its approvers (at creation, when one is added,
// the reminder) and, with the answer, to whoever asked a question.

//go:embed emails
var emailFiles embed.FS

var emails = notify.MustTemplates(emailFiles, "emails")

// approverMail is the data of the email to one approver.
type approverMail struct {
	notify.AskedMail
	Description string
	Risk        string
	Concerns    bool
	// LinkURL is the sign-in-free decision link; empty for high and
	// critical risk.
	LinkURL string
	// OnBehalfOf names the person away whom the approver stands in for,
	// when they were asked as a delegate.
	OnBehalfOf string
}

// emailApprovers emails each approver of the approval who has not been
// emailed about it yet or, for the reminder, personIDs (who had not
// decided when it was due) less whoever approved since, each once.
// Nothing is sent once the approval is no longer pending.
func emailApprovers(ctx context.Context, env requests.ActivityEnv, orgID, approvalID string, reminder bool, personIDs []string) error {
	a, err := Records(env.Store).Get(ctx, orgID, approvalID)
	if err != nil {
		return err
	}
	return askApprovers(ctx, env, a, reminder, personIDs)
}

// askApprovers is emailApprovers of a as read.
func askApprovers(ctx context.Context, env requests.ActivityEnv, a *Approval, reminder bool, personIDs []string) error {
	n := env.Notify
	if a.Status != states.Pending {
		return nil
	}
	ids := a.ApproverIDs
	if reminder {
		ids = slices.DeleteFunc(slices.Clone(personIDs), func(id string) bool { return !a.ApproverIDs.Contains(id) || a.ApprovedBy.Contains(id) })
	}
	// The requester cannot approve their own request.
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == a.Requester })
	return n.AskAbout(ctx, notify.Asking{Kind: Kind, Request: &a.RequestBase, Reminder: reminder, Risk: a.Risk}, ids,
		func(p *models.Person, m notify.AskedMail) (notify.Draft, error) {
			return approverMessage(ctx, env, a, p, m)
		})
}

// approverMessage is the email to approver p, with a sign-in-free
// decision link when the risk allows one.
func approverMessage(ctx context.Context, env requests.ActivityEnv, a *Approval, p *models.Person, m notify.AskedMail) (notify.Draft, error) {
	n := env.Notify
	data := approverMail{AskedMail: m,
		Description: notify.Shorten(a.Description, notify.DescriptionLimit), Risk: a.Risk, Concerns: len(a.Concerns.V) > 0}
	if v, ok := a.StandsInFor(p.ID()); ok {
		data.OnBehalfOf = v.Name
	}
	var d notify.Draft
	if SignInFree(a.Risk) {
		token, err := env.Store.CreateDecisionLink(ctx, a.OrganizationID, a.ID, a.ExpiresAt, p.ID())
		if err != nil {
			return notify.Draft{}, err
		}
		data.LinkURL = n.BaseURL + paths.DecisionLink(a.ID, token)
		// A link in an email that was not sent must not stay live.
		d.Discard = func(ctx context.Context) error { return env.Store.DiscardDecisionLink(ctx, token) }
	}
	var err error
	subject := "Approval needed: "
	if m.Reminder {
		subject = "Reminder, approval needed: "
	}
	d.Msg, err = emails.Render("approver", p.Email(), subject+a.Title, data)
	if err != nil && d.Discard != nil {
		err = errors.Join(err, d.Discard(ctx))
	}
	return d, err
}

// answerMail is the data of the email that brings an answer.
type answerMail struct {
	Name     string
	Title    string
	Question string
	Answer   string
	PageURL  string
}

// emailAnswer emails whoever asked questionID its answer. An asker who is
// no longer a member, or an agent's key, gets nothing.
func emailAnswer(ctx context.Context, env requests.ActivityEnv, orgID, approvalID, questionID, askerID string) error {
	n := env.Notify
	a, err := Records(env.Store).Get(ctx, orgID, approvalID)
	if err != nil {
		return err
	}
	var q *models.Question
	for i := range a.Questions.V {
		if a.Questions.V[i].QuestionID == questionID {
			q = &a.Questions.V[i]
		}
	}
	if q == nil || q.Answer == nil {
		return fmt.Errorf("question %s of approval %s has no answer to send", questionID, approvalID)
	}
	people, err := env.Store.People(ctx, orgID, []string{askerID})
	if err != nil || len(people) == 0 {
		return err
	}
	p := people[0]
	return n.Once(ctx, orgID, "answer/"+questionID, func() (notify.Draft, error) {
		msg, err := emails.Render("answer", p.Email(), "Answered: "+a.Title, answerMail{Name: p.DisplayName(), Title: a.Title,
			Question: q.Question, Answer: *q.Answer, PageURL: PageURL(n.BaseURL, a.ID)})
		return notify.Draft{Msg: msg}, err
	})
}
