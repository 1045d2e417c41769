package workflows_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/reviews"
)

// A persist activity scheduled by a worker from before the kinds shared
// one transition type named the id after the kind; a worker of today must
// still write it to the right record.
func TestTransitionReadsTheIDOlderWorkersScheduled(t *testing.T) {
	for name, payload := range map[string]string{
		"approval":   `{"ApprovalID":"apr_1","OrganizationID":"org_1","Action":"approved","Seq":2,"State":{"Status":"approved"}}`,
		"collection": `{"CollectionID":"apr_1","OrganizationID":"org_1","Action":"approved","Seq":2,"State":{"Status":"approved"}}`,
		"review":     `{"ReviewID":"apr_1","OrganizationID":"org_1","Action":"approved","Seq":2,"State":{"Status":"approved"}}`,
		"today":      `{"RequestID":"apr_1","OrganizationID":"org_1","Action":"approved","Seq":2,"State":{"Status":"approved"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			var tr approvals.Transition
			require.NoError(t, json.Unmarshal([]byte(payload), &tr))
			assert.Equal(t, approvals.Transition{RequestID: "apr_1", OrganizationID: "org_1", Action: "approved", Seq: 2,
				State: approvals.State{Status: "approved"}}, tr)
		})
	}
	var tr reviews.Transition
	assert.Error(t, json.Unmarshal([]byte(`{"Seq":"two"}`), &tr), "a malformed transition is an error, not a zero one")
}
