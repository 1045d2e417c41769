package requests_test

import (
	"context"
	"encoding/json"
	"errors"
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

// pendingApproval is an organisation's approval, inserted as a create
// writes it, in a store over db.
func pendingApproval(t *testing.T, db *gorm.DB) (context.Context, *models.Store, *models.Organization, *approvals.Approval) {
	ctx := context.Background()
	s := models.NewStore(db, testenv.Keys())
	org := testenv.NewOrg(t, s)
	a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
		ExpiresAt: time.Now().Add(time.Hour), Requester: "key_x", RequestedBy: "agent"}, Risk: models.RiskLow, RequiredApprovals: 1}
	_, err := requests.Insert(ctx, s, approvals.Records(s), a, nil)
	require.NoError(t, err)
	return ctx, s, org, a
}

// A transition is written once, with its audit entry and its event; a
// retry of it changes nothing, and one of a record the API took back says
// so.
func TestPersistWritesATransitionOnce(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx, s, org, a := pendingApproval(t, db)

		applied := 0
		approve := requests.Change[approvals.Approval]{OrganizationID: org.ID, ID: a.ID, Seq: 1,
			Apply: func(rec *approvals.Approval) (models.AuditEntry, error) {
				applied++
				rec.Status = states.Approved
				return models.AuditEntry{Action: "approved", ActorID: "mem_a", ActorName: "Ada", At: models.Now()}, nil
			},
			Event: events.ApprovalApproved,
			EventData: func(rec *approvals.Approval) ([]byte, error) {
				return json.Marshal(map[string]string{"status": rec.Status})
			},
		}
		rec, err := requests.Persist(ctx, s, approvals.Records(s), approve)
		require.NoError(t, err)
		assert.Equal(t, states.Approved, rec.Status)
		assert.Equal(t, 1, rec.Seq)
		rec, err = requests.Persist(ctx, s, approvals.Records(s), approve)
		require.NoError(t, err)
		assert.Equal(t, 1, applied, "a retried transition is not applied again")
		assert.Equal(t, states.Approved, rec.Status, "and answers the record as it is")

		var entries []models.AuditEntry
		require.NoError(t, db.Where("subject_id = ?", a.ID).Find(&entries).Error)
		require.Len(t, entries, 1)
		assert.Equal(t, "approval", entries[0].SubjectType)
		assert.Equal(t, 1, entries[0].Seq)
		assert.Equal(t, "approved", entries[0].Action)
		evs, err := s.ListEvents(ctx, org.ID, a.ID)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		assert.Equal(t, events.ApprovalApproved, evs[0].Kind)
		assert.JSONEq(t, `{"status":"approved"}`, string(evs[0].Data), "the event reads the record as written")
		got, err := approvals.Records(s).Get(ctx, org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, states.Approved, got.Status)

		_, err = requests.Persist(ctx, s, approvals.Records(s), requests.Change[approvals.Approval]{OrganizationID: org.ID, ID: "apr_gone", Seq: 1,
			Apply: func(*approvals.Approval) (models.AuditEntry, error) { return models.AuditEntry{}, nil }})
		assert.ErrorIs(t, err, models.ErrRequestMissing)
		_, err = requests.Persist(ctx, s, approvals.Records(s), requests.Change[approvals.Approval]{OrganizationID: "org_other", ID: a.ID, Seq: 2,
			Apply: func(*approvals.Approval) (models.AuditEntry, error) { return models.AuditEntry{}, nil }})
		assert.ErrorIs(t, err, models.ErrRequestMissing, "another organisation's request is not found")
	})
}

// A transition that asks by email is written first, then emails, once per
// attempt, with the record as written; the answer says whether everyone
// was reached, and a failed email never fails the write.
func TestPersistTransitionEmailsAfterTheWrite(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx, s, org, a := pendingApproval(t, db)
		fill := func(rec *approvals.Approval, t *approvals.Transition) error { rec.Status = t.State.Status; return nil }
		data := func(rec *approvals.Approval) any { return map[string]string{"status": rec.Status} }
		var asked []int
		ask := func(failing error) func(context.Context, *approvals.Approval) error {
			return func(ctx context.Context, rec *approvals.Approval) error {
				got, err := approvals.Records(s).Get(ctx, org.ID, rec.ID)
				require.NoError(t, err)
				assert.Equal(t, got.Seq, rec.Seq, "asked once the write committed")
				asked = append(asked, rec.Seq)
				return failing
			}
		}
		created := approvals.Transition{RequestID: a.ID, OrganizationID: org.ID, Seq: 1, Action: "created", At: time.Now(),
			State: approvals.State{Status: states.Pending}, AskByEmail: true}

		res, err := requests.PersistTransition(ctx, s, approvals.Records(s), created, fill, data, ask(errors.New("smtp: 451 try again later")))
		require.NoError(t, err, "a failed email does not fail the write")
		assert.False(t, res.Emailed, "the email activity follows")
		res, err = requests.PersistTransition(ctx, s, approvals.Records(s), created, fill, data, ask(nil))
		require.NoError(t, err)
		assert.True(t, res.Emailed, "a retry of the write emails again (each email once, notify.Once)")
		assert.Equal(t, []int{1, 1}, asked)

		later := created
		later.Seq, later.Action, later.AskByEmail = 2, "reminded", false
		res, err = requests.PersistTransition(ctx, s, approvals.Records(s), later, fill, data, ask(nil))
		require.NoError(t, err)
		assert.False(t, res.Emailed)
		assert.Equal(t, []int{1, 1}, asked, "a transition that does not ask by email emails nobody")
	})
}
