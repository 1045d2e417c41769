package approvals_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// env is one database with the service over it and a worker of its own
// running its workflows; org is one test's people (testenv.People).
type (
	env = temporalenv.KindEnv[*approvals.Service]
	org = testenv.People
)

// eachDB runs each of tests on SQLite and on PostgreSQL, each in an
// organisation of its own.
func eachDB(t *testing.T, tests map[string]func(t *testing.T, e *env, o *org)) {
	temporalenv.EachKindDB(t, approvals.New, "payments agent", tests)
}

// payment asks Bob to approve a payment whose amount he may correct.
func payment() *approvals.CreateInput {
	return &approvals.CreateInput{Fields: requests.Fields{Title: "Pay invoice 7"}, Approvers: []string{"bob@example.com"},
		Input: json.RawMessage(`{"amount":1200,"payee":"Globex"}`), EditableFields: []string{"amount"}}
}

// started creates in and waits until its workflow has written its first
// step.
func started(t *testing.T, e *env, o *org, in *approvals.CreateInput) *approvals.Approval {
	t.Helper()
	a, err := e.Svc.Create(context.Background(), o.Agent, in, nil)
	return temporalenv.Started(t, e.Svc, a, err)
}

func at(d time.Duration) *string { return new(time.Now().Add(d).UTC().Format(time.RFC3339)) }

func TestApprovalRules(t *testing.T) {
	eachDB(t, map[string]func(*testing.T, *env, *org){
		"create refuses what build checks": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			require.NoError(t, e.Store.CreateRule(ctx, &models.Rule{OrganizationID: o.ID, Name: "critical", Kind: rules.KindApproval,
				Condition: `request.risk == "critical"`, RequiredApprovals: 2, Enabled: true}))
			with := func(change func(in *approvals.CreateInput)) *approvals.CreateInput {
				in := payment()
				change(in)
				return in
			}
			cases := []struct {
				name        string
				in          *approvals.CreateInput
				code, field string
			}{
				{"expiresAt in the past", with(func(in *approvals.CreateInput) { in.ExpiresAt = at(-time.Minute) }), apperr.InvalidRequest, "expiresAt"},
				{"expiresAt beyond the maximum", with(func(in *approvals.CreateInput) { in.ExpiresAt = at(31 * 24 * time.Hour) }), apperr.InvalidRequest, "expiresAt"},
				{"expiresAt not a timestamp", with(func(in *approvals.CreateInput) { in.ExpiresAt = new("tomorrow") }), apperr.InvalidRequest, "expiresAt"},
				{"input not an object", with(func(in *approvals.CreateInput) { in.Input = json.RawMessage(`"rm -rf"`) }), apperr.InvalidRequest, "input"},
				{"input with a key twice", with(func(in *approvals.CreateInput) { in.Input = json.RawMessage(`{"amount":1,"amount":2}`) }), apperr.InvalidRequest, "input"},
				{"editable field not in input", with(func(in *approvals.CreateInput) { in.EditableFields = []string{"currency"} }), apperr.InvalidRequest, "editableFields[0]"},
				{"editable field listed twice", with(func(in *approvals.CreateInput) { in.EditableFields = []string{"amount", "amount"} }), apperr.InvalidRequest, "editableFields[1]"},
				{"editable field not flat", with(func(in *approvals.CreateInput) {
					in.Input, in.EditableFields = json.RawMessage(`{"amount":1,"lines":[1,2]}`), []string{"amount", "lines"}
				}), apperr.InvalidRequest, "editableFields[1]"},
				{"editable field without input", with(func(in *approvals.CreateInput) { in.Input = nil }), apperr.InvalidRequest, "editableFields[0]"},
				{"private callback", with(func(in *approvals.CreateInput) { in.CallbackURL = new("https://10.0.0.7/hook") }), apperr.InvalidCallbackURL, "callbackUrl"},
				{"metadata address callback", with(func(in *approvals.CreateInput) { in.CallbackURL = new("https://169.254.169.254/") }), apperr.InvalidCallbackURL, "callbackUrl"},
				{"unknown approver", with(func(in *approvals.CreateInput) { in.Approvers = []string{"bob@example.com", "nobody@example.com"} }),
					apperr.UnknownApprover, "approvers"},
				{"inactive approver", with(func(in *approvals.CreateInput) { in.Approvers = []string{"dee@example.com"} }), apperr.UnknownApprover, "approvers"},
				{"guest, where guests may not approve", with(func(in *approvals.CreateInput) { in.Approvers = []string{"gus@partner.example"} }),
					apperr.UnknownApprover, "approvers"},
				{"escalation after the expiry", with(func(in *approvals.CreateInput) {
					in.ExpiresAt = at(time.Hour)
					in.Escalation = &approvals.Escalation{After: json.RawMessage(`"2h"`), To: []string{"cy@example.com"}}
				}), apperr.InvalidRequest, "escalation.after"},
				{"escalation not a duration", with(func(in *approvals.CreateInput) {
					in.Escalation = &approvals.Escalation{After: json.RawMessage(`"soon"`), To: []string{"cy@example.com"}}
				}), apperr.InvalidRequest, "escalation.after"},
				{"escalation to nobody known", with(func(in *approvals.CreateInput) {
					in.Escalation = &approvals.Escalation{After: json.RawMessage(`3600`), To: []string{"nobody@example.com"}}
				}), apperr.UnknownApprover, "escalation.to"},
				{"a rule needs more approvers than named", with(func(in *approvals.CreateInput) { in.Risk = "critical" }), apperr.InvalidRequest, "approvers"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					_, err := e.Svc.Create(ctx, o.Agent, c.in, nil)
					testenv.Refused(t, err, c.code, c.field)
				})
			}

			// Nobody named falls to the owners and administrators: an
			// organisation without any has nobody to ask.
			empty, err := e.Store.CreateOrganization(ctx, "Empty", "")
			require.NoError(t, err)
			_, err = e.Svc.Create(ctx, models.KeyActor(empty, o.Agent.Key, nil), &approvals.CreateInput{Fields: requests.Fields{Title: "x"}}, nil)
			testenv.Refused(t, err, apperr.UnknownApprover, "approvers")

			_, _, err = e.Svc.List(ctx, o.Agent, models.RequestFilter{Status: "open"}, models.Page{Limit: 10})
			testenv.Refused(t, err, apperr.InvalidRequest, "status")
			list, _, err := e.Svc.List(ctx, o.Agent, models.RequestFilter{}, models.Page{Limit: 10})
			require.NoError(t, err)
			assert.Empty(t, list, "no refused create left a record")
		},

		"a created approval runs until it is decided": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			a := started(t, e, o, payment())
			assert.Equal(t, states.Pending, a.Status)
			assert.Equal(t, models.StringList{o.Bob.ID()}, a.ApproverIDs)
			assert.Equal(t, models.RiskMedium, a.Risk, "the default risk")

			_, err := e.Svc.Waiting(ctx, o.ID, o.Agent, models.Attention, 10)
			testenv.Refused(t, err, apperr.Forbidden, "")
			waiting, err := e.Svc.Waiting(ctx, o.ID, o.Bob.Actor(), models.Attention, 10)
			require.NoError(t, err)
			require.Len(t, waiting, 1)
			assert.Equal(t, a.ID, waiting[0].ID)

			approve := approvals.Decision{Decision: "approve", Corrections: map[string]json.RawMessage{"amount": json.RawMessage(`1100`)}}
			_, err = e.Svc.Decide(ctx, o.ID, a.ID, "", o.Agent, approve)
			testenv.Refused(t, err, apperr.Forbidden, "")
			_, err = e.Svc.Decide(ctx, o.ID, a.ID, "cy-1", o.Cy.Actor(), approve)
			testenv.Refused(t, err, apperr.NotAnApprover, "")
			_, err = e.Svc.Decide(ctx, o.ID, a.ID, "bob-1", o.Bob.Actor(), approve)
			require.NoError(t, err)
			done, err := e.Svc.Wait(ctx, o.ID, a.ID, 10*time.Second)
			require.NoError(t, err)
			assert.Equal(t, states.Approved, done.Status)
			assert.JSONEq(t, `{"amount":1100,"payee":"Globex"}`, string(done.ApprovedInput), "the correction applies")
		},

		"nobody named asks the owners and administrators": func(t *testing.T, e *env, o *org) {
			a := started(t, e, o, &approvals.CreateInput{Fields: requests.Fields{Title: "Rotate the keys"}})
			assert.Equal(t, models.StringList{o.Ada.ID()}, a.ApproverIDs)
		},

		"a rule's approvals are asked for when enough can give them": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			require.NoError(t, e.Store.CreateRule(ctx, &models.Rule{OrganizationID: o.ID, Name: "critical", Kind: rules.KindApproval,
				Condition: `request.risk == "critical"`, RequiredApprovals: 2, Enabled: true}))
			in := payment()
			in.Risk, in.Approvers = "critical", []string{"bob@example.com", "cy@example.com"}
			a := started(t, e, o, in)
			assert.Equal(t, 2, a.RequiredApprovals)
		},
	})
}
