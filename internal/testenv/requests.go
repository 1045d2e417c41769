package testenv

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/models"
)

// applier is a kind's records on the transition path
// (models.Requests[T, …]).
type applier[T any] interface {
	Apply(ctx context.Context, ch models.RequestChange[T]) (*T, error)
}

// Transition changes a request's record as its workflow's persist does,
// as transition seq, so that what the record indexes (the inbox) follows:
// for tests that need a request in a state without running its workflow.
func Transition[T any](t testing.TB, r applier[T], orgID, id string, seq int, set func(*T)) {
	t.Helper()
	_, err := r.Apply(context.Background(), models.RequestChange[T]{OrganizationID: orgID, ID: id, Seq: seq,
		Apply: func(rec *T) (models.AuditEntry, error) {
			set(rec)
			return models.AuditEntry{Action: "changed", ActorID: "key_test", ActorName: "test", At: models.Now()}, nil
		}})
	require.NoError(t, err)
}
