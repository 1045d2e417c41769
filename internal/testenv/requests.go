package testenv

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// Transition changes a request's record as its workflow's persist does
// (requests.Persist), as transition seq, so that what the record indexes
// (the inbox) follows: for tests that need a request in a state without
// running its workflow.
func Transition[T any](t testing.TB, j requests.Journal, r requests.Writable[T], orgID, id string, seq int, set func(*T)) {
	t.Helper()
	_, err := requests.Persist(context.Background(), j, r, requests.Change[T]{OrganizationID: orgID, ID: id, Seq: seq,
		Apply: func(rec *T) (models.AuditEntry, error) {
			set(rec)
			return models.AuditEntry{Action: "changed", ActorID: "key_test", ActorName: "test", At: models.Now()}, nil
		}})
	require.NoError(t, err)
}
