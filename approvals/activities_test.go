package approvals_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// TestPersistApprovalSignsTheDecision: the transition to approved keeps a
// decision token on the record and puts the same one in the event's data;
// a retry of the transition changes nothing; a worker that knows no base
// URL issues none and still approves.
func TestPersistApprovalSignsTheDecision(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		approve := func(acts *approvals.Activities, approvedInput string) *approvals.Approval {
			a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
				ExpiresAt: time.Now().Add(time.Hour), Requester: "key_x", RequestedBy: "agent"}, Risk: models.RiskLow, Input: models.RawJSON(`{"amount":100}`),
				RequiredApprovals: 1}
			_, err := requests.Insert(ctx, store, approvals.Records(store), a, nil)
			require.NoError(t, err)
			at := time.Now().UTC()
			transition := approvals.Transition{RequestID: a.ID, OrganizationID: org.ID, Seq: 1, Action: approvals.ActionApproved,
				Event: "approval.approved", ActorID: "mem_1", ActorName: "Ada", At: at,
				State: approvals.State{Status: states.Approved, ApproverIDs: []string{"mem_1"}, ApprovedBy: []string{"mem_1"},
					DecidedByID: "mem_1", DecidedByName: "Ada", DecidedAt: &at, ApprovedInput: json.RawMessage(approvedInput), ApprovalsSoFar: 1}}
			_, err = acts.PersistApproval(ctx, transition)
			require.NoError(t, err)
			_, err = acts.PersistApproval(ctx, transition)
			require.NoError(t, err, "a retry")
			got, err := approvals.Records(store).Get(ctx, org.ID, a.ID)
			require.NoError(t, err)
			assert.Equal(t, states.Approved, got.Status)
			return got
		}

		got := approve(&approvals.Activities{ActivityEnv: requests.ActivityEnv{Store: store, BaseURL: "https://assent.example"}}, `{"amount":80}`)
		require.NotNil(t, got.DecisionToken)
		events, err := store.ListEvents(ctx, org.ID, got.ID)
		require.NoError(t, err)
		require.Len(t, events, 1, "the retry wrote nothing")
		var data map[string]any
		require.NoError(t, json.Unmarshal(events[0].Data, &data))
		assert.Equal(t, *got.DecisionToken, data["decisionToken"])

		unnamed := approve(&approvals.Activities{ActivityEnv: requests.ActivityEnv{Store: store}}, `{"amount":80}`)
		assert.Nil(t, unnamed.DecisionToken, "no issuer, no token")

		// An input with no canonical form (a key twice, kept from before
		// inputs were held to one) is approved without a token, never
		// held up by a failing persist.
		doubled := approve(&approvals.Activities{ActivityEnv: requests.ActivityEnv{Store: store, BaseURL: "https://assent.example"}}, `{"amount":80,"amount":5}`)
		assert.Nil(t, doubled.DecisionToken)
	})
}

// TestPersistOfAMissingRecordIsNotRetried: a transition of a request whose
// record was taken back fails for good, so its workflow ends instead of
// retrying a write that can never succeed.
func TestPersistOfAMissingRecordIsNotRetried(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(context.Background(), "Acme", "")
		require.NoError(t, err)
		acts := &approvals.Activities{ActivityEnv: requests.ActivityEnv{Store: store}}
		_, err = acts.PersistApproval(context.Background(), approvals.Transition{RequestID: "apr_01m8cpw1kg3vd6698yahdjwkgq",
			OrganizationID: org.ID, Seq: 1, Action: workflows.ActionCreated, At: time.Now().UTC(),
			State: approvals.State{Status: states.Pending}})
		var app *temporal.ApplicationError
		require.ErrorAs(t, err, &app)
		assert.True(t, app.NonRetryable())
		assert.Equal(t, workflows.ErrRequestMissing, app.Type())
	})
}
