package approvals

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/rules"
)

// The fields a rule's condition may read are those rules checks it against:
// a field missing from that list would refuse a rule over it, one too many
// would let a rule that never applies be saved.
func TestRuleInputHasTheRequestFieldsRulesKnow(t *testing.T) {
	request, err := ruleInput(&CreateInput{}, "medium")
	require.NoError(t, err)
	var keys []string
	for k := range request {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, rules.RequestFields, keys)
}
