package flows_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/flows"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestWhoMayFinishAFlow: its starter completes or cancels it; an owner or
// administrator may cancel it in their stead, audited as such, but not
// complete it; anyone else is refused, and a finished flow stays as it
// is. A completion writes flow.completed with the flow as completed.
func TestWhoMayFinishAFlow(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		svc := flows.New(store.FlowStore, nil, "http://assent.test")
		starter := models.Actor{ID: "key_starter", Name: "agent", Organization: org}
		other := models.Actor{ID: "key_other", Name: "another agent", Organization: org}
		admin := models.Actor{ID: "mem_admin", Name: "Ada", IsPerson: true, Administrator: true, Organization: org}
		start := func(title string) *models.Flow {
			f, err := svc.Create(ctx, starter, &flows.CreateInput{Title: "  " + title + " "})
			require.NoError(t, err)
			assert.Equal(t, title, f.Title, "kept trimmed")
			return f
		}

		f := start("close the quarter")
		_, err = svc.Complete(ctx, other, f.ID)
		assert.True(t, apperr.Is(err, apperr.Forbidden), "%v", err)
		_, err = svc.Complete(ctx, admin, f.ID)
		assert.True(t, apperr.Is(err, apperr.Forbidden), "an administrator cancels, never completes: %v", err)
		_, err = svc.Cancel(ctx, other, f.ID)
		assert.True(t, apperr.Is(err, apperr.Forbidden), "%v", err)
		done, err := svc.Complete(ctx, starter, f.ID)
		require.NoError(t, err)
		assert.Equal(t, models.FlowCompleted, done.Status)
		require.NotNil(t, done.CompletedAt)
		_, err = svc.Cancel(ctx, starter, f.ID)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "already completed: %v", err)

		evs, err := store.ListEvents(ctx, org.ID, f.ID)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		assert.Equal(t, events.FlowCompleted, evs[0].Kind)
		var data struct {
			ID       string
			Timeline []struct{ Action string }
		}
		require.NoError(t, json.Unmarshal(evs[0].Data, &data))
		assert.Equal(t, f.ID, data.ID)
		require.Len(t, data.Timeline, 2, "the flow as completed: %s", evs[0].Data)
		assert.Equal(t, models.FlowCompleted, data.Timeline[1].Action)

		g := start("withdrawn")
		cancelled, err := svc.Cancel(ctx, admin, g.ID)
		require.NoError(t, err)
		assert.Equal(t, models.FlowCancelled, cancelled.Status)
		d, err := store.GetFlowDetail(ctx, org.ID, g.ID)
		require.NoError(t, err)
		require.Len(t, d.Timeline, 2)
		assert.Equal(t, models.AsAdministrator, d.Timeline[1].Detail)
		assert.Equal(t, "Ada", d.Timeline[1].ActorName)
		evs, err = store.ListEvents(ctx, org.ID, g.ID)
		require.NoError(t, err)
		assert.Empty(t, evs, "a cancellation sends no event")
		require.NoError(t, store.VerifyAuditChain(ctx, org.ID))
	})
}
