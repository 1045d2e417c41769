package api_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
)

// TestCorrectionsHaveOneMeaning: an approver's correction becomes the
// approved input a token binds, so it is held to what an input is: an
// integer beyond 2^53 is refused, naming it, and 2^53 is taken.
func TestCorrectionsHaveOneMeaning(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["Finance"],"input":{"acct":1},"editableFields":["acct"]}`)
		path := "/api/v1/approvals/" + a["id"].(string) + "/decision"
		r := s.do(t, "POST", path, s.bobToken, `{"decision":"approve","corrections":{"acct":9007199254740993}}`, nil)
		require.Equal(t, 400, r.status, string(r.body))
		assert.Equal(t, "corrections.acct", errField(r, "field"))
		assert.Contains(t, errField(r, "message"), "send big ids and amounts as strings")
		r = s.do(t, "POST", path, s.bobToken, `{"decision":"approve","corrections":{"acct":9007199254740992}}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, 9007199254740992.0, r.decoded["approvedInput"].(map[string]any)["acct"])
	})
}
