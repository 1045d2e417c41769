package gate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
)

// TestGrantableFrom: the approval page offers a mandate only for a pending
// approval the gate raised for an agent, to a member allowed to grant who
// could decide it alone.
func TestGrantableFrom(t *testing.T) {
	org := &models.Organization{ID: "org_1"}
	bob := &models.Member{ID: "mem_bob", Name: "Bob", Role: models.RoleAdmin, Active: true}
	cy := &models.Member{ID: "mem_cy", Name: "Cy", Role: models.RoleMember, Active: true}
	as := func(o *models.Organization, m *models.Member) models.Actor {
		return (&models.Person{Organization: o, Member: m}).Actor()
	}
	raised := func(edit func(*approvals.Approval)) *approvals.Approval {
		a := &approvals.Approval{RequestBase: models.RequestBase{ID: "apr_1", Requester: "key_1", Status: states.Pending}, Action: new("refund.create"),
			ApproverIDs: []string{bob.ID, cy.ID}, RequiredApprovals: 1, Risk: models.RiskHigh}
		if edit != nil {
			edit(a)
		}
		return a
	}
	assert.NoError(t, GrantableFrom(as(org, bob), raised(nil)))
	lenient := &models.Organization{ID: "org_1", MembersMayGrantMandates: true}
	assert.NoError(t, GrantableFrom(as(lenient, cy), raised(func(a *approvals.Approval) { a.Risk = models.RiskMedium })))
	refusals := []struct {
		name string
		who  models.Actor
		a    *approvals.Approval
		says string
	}{
		{"not the gate's", as(org, bob), raised(func(a *approvals.Approval) { a.Action = nil }), "only an approval the gate raised"},
		{"a person's request", as(org, bob), raised(func(a *approvals.Approval) { a.Requester = cy.ID }), "only an approval the gate raised"},
		{"a guest", (&models.Person{Organization: org, Guest: &models.Guest{ID: "gst_1"}}).Actor(), raised(nil), "a person's standing approval"},
		{"a member, where only administrators grant", as(org, cy), raised(nil), "membersMayGrantMandates is off"},
		{"a member, above their ceiling", as(lenient, cy), raised(nil), "its risk is high, above the medium"},
		{"settled", as(org, bob), raised(func(a *approvals.Approval) { a.Status = states.Approved }), "is approved"},
		{"not asked", as(org, bob), raised(func(a *approvals.Approval) { a.ApproverIDs = []string{cy.ID} }), "Bob is not among its approvers"},
		{"two approvals", as(org, bob), raised(func(a *approvals.Approval) { a.RequiredApprovals = 2 }), "needs 2 approvals"},
		{"critical", as(org, bob), raised(func(a *approvals.Approval) { a.Risk = models.RiskCritical }), "its risk is critical"},
	}
	for _, c := range refusals {
		err := GrantableFrom(c.who, c.a)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.says, c.name)
	}
}

// TestCheckSumField: a sum budget holds only over a property the schema
// types as a number; one without a type (an enum of strings, say) could
// hold anything, so it is refused naming budget.sum.field.
func TestCheckSumField(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{
		"amount":{"type":"number"},"units":{"type":"integer"},"either":{"type":["integer","number"]},
		"currency":{"enum":["EUR","USD"]},"anything":{},"mixed":{"type":["number","string"]},"none":{"type":[]},
		"customer":{"type":"string"}}}`)
	for _, field := range []string{"amount", "units", "either"} {
		assert.NoError(t, checkSumField(schema, field), field)
	}
	for _, field := range []string{"currency", "anything", "mixed", "none", "customer", "absent"} {
		err := checkSumField(schema, field)
		require.Error(t, err, field)
		e, _ := apperr.As(err)
		assert.Equal(t, "budget.sum.field", e.Field, field)
		assert.Equal(t, apperr.InvalidRequest, e.Code, field)
	}
}
