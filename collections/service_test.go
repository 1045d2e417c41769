package collections_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// env is one database with the service over it and a worker of its own
// running its workflows; org is one test's people (testenv.People).
type (
	env = temporalenv.KindEnv[*collections.Service]
	org = testenv.People
)

// eachDB runs each of tests on SQLite and on PostgreSQL, each in an
// organisation of its own.
func eachDB(t *testing.T, tests map[string]func(t *testing.T, e *env, o *org)) {
	temporalenv.EachKindDB(t, collections.New, "survey agent", tests)
}

// budget asks Bob and Gus one required number and one optional text.
func budget(respondents ...string) *collections.CreateInput {
	if respondents == nil {
		respondents = []string{"bob@example.com", "gus@partner.example"}
	}
	return &collections.CreateInput{Fields: requests.Fields{Title: "Q3 budgets"}, Respondents: respondents, Questions: []questions.Input{
		{ID: "budget", Prompt: "Budget", Kind: questions.Number},
		{ID: "note", Prompt: "Anything else", Kind: questions.Text, Required: new(false)}}}
}

// started creates in and waits until its workflow has written its first
// step.
func started(t *testing.T, e *env, o *org, in *collections.CreateInput) *collections.Collection {
	t.Helper()
	c, err := e.Svc.Create(context.Background(), o.Agent, in, nil)
	return temporalenv.Started(t, e.Svc, c, err)
}

func at(d time.Duration) *string { return new(time.Now().Add(d).UTC().Format(time.RFC3339)) }

func TestCollectionRules(t *testing.T) {
	eachDB(t, map[string]func(*testing.T, *env, *org){
		"create refuses what build checks": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			with := func(change func(in *collections.CreateInput)) *collections.CreateInput {
				in := budget()
				change(in)
				return in
			}
			cases := []struct {
				name        string
				in          *collections.CreateInput
				code, field string
			}{
				{"dueAt in the past", with(func(in *collections.CreateInput) { in.DueAt = at(-time.Hour) }), apperr.InvalidRequest, "dueAt"},
				{"dueAt after expiresAt", with(func(in *collections.CreateInput) { in.ExpiresAt, in.DueAt = at(24*time.Hour), at(48*time.Hour) }),
					apperr.InvalidRequest, "dueAt"},
				{"dueAt not a timestamp", with(func(in *collections.CreateInput) { in.DueAt = new("friday") }), apperr.InvalidRequest, "dueAt"},
				{"expiresAt beyond the maximum", with(func(in *collections.CreateInput) { in.ExpiresAt = at(31 * 24 * time.Hour) }),
					apperr.InvalidRequest, "expiresAt"},
				{"no response required", with(func(in *collections.CreateInput) { in.RequiredResponses = new(0) }), apperr.InvalidRequest, "requiredResponses"},
				{"more responses than people", with(func(in *collections.CreateInput) { in.RequiredResponses = new(3) }), apperr.InvalidRequest, "requiredResponses"},
				{"unknown respondent", budget("bob@example.com", "nobody@example.com"), apperr.UnknownRespondent, "respondents"},
				{"inactive respondent", budget("dee@example.com"), apperr.UnknownRespondent, "respondents"},
				{"no questions", with(func(in *collections.CreateInput) { in.Questions = nil }), apperr.InvalidRequest, "questions"},
				{"a question of no kind", with(func(in *collections.CreateInput) { in.Questions[1].Kind = "essay" }), apperr.InvalidRequest, "questions[1].kind"},
				{"metadata not an object", with(func(in *collections.CreateInput) { in.Metadata = json.RawMessage(`[1]`) }), apperr.InvalidRequest, "metadata"},
				{"private callback", with(func(in *collections.CreateInput) { in.CallbackURL = new("https://10.0.0.7/hook") }),
					apperr.InvalidCallbackURL, "callbackUrl"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					_, err := e.Svc.Create(ctx, o.Agent, c.in, nil)
					testenv.Refused(t, err, c.code, c.field)
				})
			}
			_, err := e.Svc.Create(ctx, o.Agent, with(func(in *collections.CreateInput) { in.RequiredResponses = new(3) }), nil)
			assert.Contains(t, err.Error(), "between 1 and the 2 people asked")
			list, _, err := e.Svc.List(ctx, o.Agent, models.RequestFilter{}, models.Page{Limit: 10})
			require.NoError(t, err)
			assert.Empty(t, list, "no refused create left a record")
		},

		"a created collection runs until its replies complete it": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			in := budget()
			in.DueAt, in.ExpiresAt = at(24*time.Hour), at(48*time.Hour)
			c := started(t, e, o, in)
			assert.Equal(t, states.Open, c.Status)
			assert.Equal(t, 2, c.RequiredResponses, "everyone asked, by default")
			assert.Equal(t, models.StringList{o.Bob.ID(), o.Gus.ID()}, c.RespondentIDs)
			assert.Equal(t, o.Agent.Key.ID, c.Requester)

			_, err := e.Svc.Reply(ctx, o.Bob.Actor(), c.ID, "bob-1", collections.ReplyInput{Submit: true,
				Answers: map[string]json.RawMessage{"budget": json.RawMessage(`1200`)}})
			require.NoError(t, err)
			_, err = e.Svc.Reply(ctx, o.Gus.Actor(), c.ID, "gus-1", collections.ReplyInput{Submit: true,
				Answers: map[string]json.RawMessage{"budget": json.RawMessage(`800`), "note": json.RawMessage(`"from the partner side"`)}})
			require.NoError(t, err)
			done, err := e.Svc.Wait(ctx, o.ID, c.ID, 10*time.Second)
			require.NoError(t, err)
			assert.Equal(t, states.Complete, done.Status)
			assert.Equal(t, 2, done.ResponsesSoFar)
		},

		"a draft is kept for its author while they may still reply": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			c := started(t, e, o, budget())
			draft := collections.ReplyInput{Answers: map[string]json.RawMessage{"budget": json.RawMessage(`1200`)}}

			_, err := e.Svc.Reply(ctx, o.Cy.Actor(), c.ID, "", draft)
			testenv.Refused(t, err, apperr.NotARespondent, "")
			_, err = e.Svc.Reply(ctx, o.Bob.Actor(), c.ID, "", collections.ReplyInput{Answers: map[string]json.RawMessage{"budget": json.RawMessage(`"lots"`)}})
			testenv.Refused(t, err, apperr.InvalidAnswer, "answers.budget")
			_, err = e.Svc.Reply(ctx, o.Bob.Actor(), c.ID, "", draft)
			require.NoError(t, err)
			got, err := e.Svc.Draft(ctx, o.Bob.Actor(), c.ID)
			require.NoError(t, err)
			assert.Equal(t, map[string]json.RawMessage{"budget": json.RawMessage(`1200`)}, got)
			for _, other := range []*models.Person{o.Gus, o.Cy, o.Ada} {
				d, err := e.Svc.Draft(ctx, other.Actor(), c.ID)
				require.NoError(t, err)
				assert.Nil(t, d, "%s sees no one else's draft", other.Email())
			}

			_, err = e.Svc.Reply(ctx, o.Bob.Actor(), c.ID, "bob-1", collections.ReplyInput{Submit: true, Answers: draft.Answers})
			require.NoError(t, err)
			_, err = e.Svc.Reply(ctx, o.Bob.Actor(), c.ID, "", draft)
			testenv.Refused(t, err, apperr.AlreadySubmitted, "")
			d, err := e.Svc.Draft(ctx, o.Bob.Actor(), c.ID)
			require.NoError(t, err)
			assert.Nil(t, d, "a submitted reply's draft goes")

			_, err = e.Svc.Cancel(ctx, o.ID, c.ID, "cancel-1", o.Agent)
			require.NoError(t, err)
			_, err = e.Svc.Reply(ctx, o.Gus.Actor(), c.ID, "", draft)
			testenv.Refused(t, err, apperr.InvalidState, "")
		},
	})
}
