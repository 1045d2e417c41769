package decisions_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/decisions"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

// TestLifetime: an approval's (or action's) own lifetime, else its
// organisation's, else an hour.
func TestLifetime(t *testing.T) {
	org := &models.Organization{}
	assert.Equal(t, time.Hour, decisions.Lifetime(nil, org))
	org.DecisionTokenTTLSeconds = 600
	assert.Equal(t, 10*time.Minute, decisions.Lifetime(nil, org))
	assert.Equal(t, 10*time.Minute, org.DecisionTokenLifetime())
	own := 120
	assert.Equal(t, 2*time.Minute, decisions.Lifetime(&own, org))
	zero := 0
	assert.Equal(t, 10*time.Minute, decisions.Lifetime(&zero, org), "an unset own lifetime falls back")
}

// TestForApproval: the approved input's canonical hash, the deciders, the
// action, the decision time plus the lifetime, and a jti of its own.
func TestForApproval(t *testing.T) {
	decided := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	action := "pay"
	a := decisions.Approved{ID: "apr_1", OrganizationID: "org_1", Input: []byte(`{"b":[1,2],"a":"x"}`),
		Deciders: []string{"mem_1"}, DecidedAt: decided, Action: &action}
	c, err := decisions.ForApproval(a, &models.Organization{DecisionTokenTTLSeconds: 300}, "https://assent.example")
	require.NoError(t, err)
	sum, err := decisiontoken.InputSHA256([]byte(`{"a":"x","b":[1,2]}`))
	require.NoError(t, err)
	assert.True(t, ids.HasPrefix(c.ID, ids.TokenID), c.ID)
	first := c.ID
	c.ID = ""
	assert.Equal(t, decisiontoken.Claims{Issuer: "https://assent.example", Subject: "apr_1", Organization: "org_1",
		Action: "pay", InputSHA256: sum, Deciders: []string{"mem_1"}, IssuedAt: decided, Expiry: decided.Add(5 * time.Minute)}, c)

	a.Deciders, a.Action = nil, nil
	c, err = decisions.ForApproval(a, &models.Organization{}, "https://assent.example")
	require.NoError(t, err)
	assert.NotEqual(t, first, c.ID, "every token its own jti")
	assert.Equal(t, []string{}, c.Deciders, "no deciders is an empty list, not null")
	assert.Equal(t, decided.Add(time.Hour), c.Expiry)
}

// TestForGateCheck: an allow by policy names the action, no deciders, and
// holds for the action's own lifetime.
func TestForGateCheck(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	own := 90
	c, err := decisions.ForGateCheck(&models.GateCheck{ID: "chk_1", OrganizationID: "org_1", Action: "deploy",
		Input: models.RawJSON(`{"env":"prod"}`), CreatedAt: at}, &models.Action{DecisionTokenTTLSeconds: &own},
		&models.Organization{DecisionTokenTTLSeconds: 600}, "https://assent.example")
	require.NoError(t, err)
	assert.Equal(t, "deploy", c.Action)
	assert.Equal(t, []string{}, c.Deciders)
	assert.Equal(t, at.Add(90*time.Second), c.Expiry)
	assert.True(t, ids.HasPrefix(c.ID, ids.TokenID), c.ID)
}
