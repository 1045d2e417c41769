package gate

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/models"
)

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		2 * time.Hour: "2h", 90 * time.Minute: "1h30m", 45 * time.Minute: "45m", 90 * time.Second: "1m30s",
		30 * time.Second: "30s", 26*time.Hour + time.Second: "26h0m1s",
	} {
		assert.Equal(t, want, shortDuration(d))
		back, err := time.ParseDuration(want)
		assert.NoError(t, err)
		assert.Equal(t, d, back)
	}
}

func TestApprovalFor(t *testing.T) {
	a := &models.Action{Name: "refund.create", Description: "Refund a customer", EditableFields: models.StringList{"amount", "lines", "note", "missing", "flag"}}
	in := approvalFor(a, models.PolicyRule{Name: "review", Outcome: "approval", Risk: "high", ExpiresIn: "2h"}, "",
		[]byte(`{"amount": 12, "lines": [1], "note": null, "flag": false}`), &CheckInput{})
	assert.Equal(t, "Refund a customer", in.Title)
	assert.Equal(t, []string{"amount", "flag"}, in.EditableFields, "only flat values the input holds can be corrected")
	assert.Equal(t, "refund.create", in.Gate.Action)
	assert.NotNil(t, in.ExpiresAt)
	assert.Equal(t, "Policy rule", in.Factors[1].Label)

	long := &models.Action{Name: strings.Repeat("x", 200), Description: strings.Repeat("é", 201)}
	in = approvalFor(long, noRuleMatched, "", []byte(`{}`), &CheckInput{})
	assert.Len(t, in.Title, 200, "a long description gives way to the name, cut to fit")
	assert.Nil(t, in.ExpiresAt, "the organisation's default expiry")
	assert.Equal(t, "no rule matched, so a person decides", in.Factors[1].Detail)
}
