package approvals_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// TestEventPayloadAgreesWithLaterRead: the data of an event, built from the
// record as it is written, reads the same as a GET of it afterwards, on
// both databases, with every time at six fractional digits. The workflow's
// clock has nanoseconds, which the record in memory keeps and PostgreSQL
// does not.
func TestEventPayloadAgreesWithLaterRead(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, err := s.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		ada, err := s.CreateMember(ctx, org.ID, "ada@example.com", "Ada", models.RoleOwner)
		require.NoError(t, err)
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
			ExpiresAt: models.Now().Add(time.Hour), Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow, ApproverIDs: []string{ada.ID},
			RequiredApprovals: 1}
		_, err = requests.Insert(ctx, s, approvals.Records(s), a, nil)
		require.NoError(t, err)

		at := time.Date(2026, 1, 2, 3, 4, 5, 999999500, time.UTC)
		var payload []byte
		_, err = requests.Persist(ctx, s, approvals.Records(s), requests.Change[approvals.Approval]{OrganizationID: org.ID, ID: a.ID, Seq: 1,
			Apply: func(rec *approvals.Approval) (models.AuditEntry, error) {
				rec.Status, rec.DecidedAt = states.Approved, &at
				rec.Questions.V = []models.Question{{QuestionID: "q1", Question: "Why?", AskedBy: "Ada", AskedAt: at}}
				return models.AuditEntry{Action: "approved", ActorID: ada.ID, ActorName: "Ada", At: at}, nil
			},
			Event: events.ApprovalApproved,
			EventData: func(rec *approvals.Approval) ([]byte, error) {
				payload, err = json.Marshal(approvals.NewWire(rec, "http://assent.test"))
				return payload, err
			}})
		require.NoError(t, err)

		rec, err := approvals.Records(s).Get(ctx, org.ID, a.ID)
		require.NoError(t, err)
		read, err := json.Marshal(approvals.NewWire(rec, "http://assent.test"))
		require.NoError(t, err)
		assert.JSONEq(t, string(read), string(payload))
		assert.Contains(t, string(payload), `"resolvedApprovers":[{"id":"`+ada.ID+`","name":"Ada","email":"ada@example.com","kind":"member"}]`)

		var out struct {
			DecidedAt, CreatedAt, UpdatedAt, ExpiresAt string
			Questions                                  []struct{ AskedAt string }
		}
		require.NoError(t, json.Unmarshal(read, &out))
		assert.Equal(t, "2026-01-02T03:04:05.999999Z", out.DecidedAt)
		assert.Equal(t, "2026-01-02T03:04:05.999999Z", out.Questions[0].AskedAt)
		for _, ts := range []string{out.CreatedAt, out.UpdatedAt, out.ExpiresAt} {
			assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`, ts)
		}
	})
}
