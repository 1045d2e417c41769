package models_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// TestCollectionLifecycleInTheReadModel: a collection is written with its
// respondent index and sealed callback secret, lists in the inbox of who
// has not replied, keeps drafts per person, and takes workflow transitions
// once each, with the audit entry and event beside them.
func TestCollectionLifecycleInTheReadModel(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		qs, err := questions.Define([]questions.Input{{Prompt: "Budget", Kind: questions.Number}})
		require.NoError(t, err)
		due := models.Now().Add(48 * time.Hour)
		secret := "whsec_test"
		c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Budgets",
			ExpiresAt: models.Now().Add(72 * time.Hour), Requester: "key_1", RequestedBy: "agent", CallbackSecret: &secret}, Questions: models.JSON[[]questions.Question]{V: qs},
			Respondents: []string{"everyone"}, RespondentIDs: []string{"mem_a", "mem_b"}, RequiredResponses: 2,
			DueAt: &due}
		_, err = requests.Insert(ctx, s, collections.Records(s), c, nil)
		require.NoError(t, err)
		assert.Regexp(t, `^col_`, c.ID)
		assert.Equal(t, states.Open, c.Status)

		got, err := collections.Records(s).Get(ctx, org.ID, c.ID)
		require.NoError(t, err)
		assert.NotEqual(t, secret, *got.SealedCallbackSecret, "the callback secret is sealed")
		require.NoError(t, collections.Records(s).Reveal(got))
		assert.Equal(t, secret, *got.CallbackSecret)
		assert.Equal(t, qs, got.Questions.V)
		_, err = collections.Records(s).Get(ctx, other.ID, c.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound), "another organisation's collection: %v", err)

		waiting, err := collections.Records(s).Waiting(ctx, org.ID, "mem_a", models.Attention, 10)
		require.NoError(t, err)
		require.Len(t, waiting, 1)

		require.NoError(t, s.SaveDraft(ctx, c.ID, "mem_a", json.RawMessage(`{"q1":1}`)))
		require.NoError(t, s.SaveDraft(ctx, c.ID, "mem_a", json.RawMessage(`{"q1":2}`)))
		d, err := s.Draft(ctx, c.ID, "mem_a")
		require.NoError(t, err)
		assert.JSONEq(t, `{"q1":2}`, string(d.Answers), "a draft is replaced, not added")
		d, err = s.Draft(ctx, c.ID, "mem_b")
		require.NoError(t, err)
		assert.Nil(t, d, "drafts are per person")

		reply := func(seq int) requests.Change[collections.Collection] {
			return requests.Change[collections.Collection]{OrganizationID: org.ID, ID: c.ID, Seq: seq,
				Apply: func(rec *collections.Collection) (models.AuditEntry, error) {
					rec.Replies.V = append(rec.Replies.V, collections.StoredReply{RespondentID: "mem_a", SubmittedAt: models.Now(),
						Answers: map[string]json.RawMessage{"q1": json.RawMessage(`12345678901234567890`)}})
					rec.ResponsesSoFar = len(rec.Replies.V)
					return models.AuditEntry{Action: "replied", ActorID: "mem_a", At: models.Now()}, nil
				}}
		}
		_, err = requests.Persist(ctx, s, collections.Records(s), reply(1))
		require.NoError(t, err)
		_, err = requests.Persist(ctx, s, collections.Records(s), reply(1))
		require.NoError(t, err, "a retried transition changes nothing")
		got, err = collections.Records(s).Get(ctx, org.ID, c.ID)
		require.NoError(t, err)
		require.Len(t, got.Replies.V, 1)
		assert.Equal(t, "12345678901234567890", string(got.Replies.V[0].Answers["q1"]))
		d, err = s.Draft(ctx, c.ID, "mem_a")
		require.NoError(t, err)
		assert.Nil(t, d, "a submitted reply's draft goes")
		waiting, err = collections.Records(s).Waiting(ctx, org.ID, "mem_a", models.Attention, 10)
		require.NoError(t, err)
		assert.Empty(t, waiting, "who replied has nothing waiting")

		_, err = requests.Persist(ctx, s, collections.Records(s), requests.Change[collections.Collection]{OrganizationID: org.ID, ID: c.ID, Seq: 2,
			Apply: func(rec *collections.Collection) (models.AuditEntry, error) {
				rec.Status = states.Complete
				return models.AuditEntry{Action: "replied", At: models.Now()}, nil
			},
			Event: "collection.completed",
			EventData: func(rec *collections.Collection) ([]byte, error) {
				return json.Marshal(map[string]string{"id": rec.ID})
			},
		})
		require.NoError(t, err)
		var events []models.Event
		require.NoError(t, db.Where("subject_id = ?", c.ID).Find(&events).Error)
		require.Len(t, events, 1)
		assert.Equal(t, "collection", events[0].SubjectType)
		var audit int64
		require.NoError(t, db.Model(&models.AuditEntry{}).Where("subject_id = ?", c.ID).Count(&audit).Error)
		assert.Equal(t, int64(2), audit)
		st, err := collections.Records(s).Statuses(ctx, []string{c.ID, "col_missing"})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{c.ID: states.Complete}, st)
	})
}
