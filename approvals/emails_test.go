package approvals_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/requests"
)

// flaky refuses mail to one address the first time, then delivers to
// the mailbox.
type flaky struct {
	*mail.Mailbox
	mu      sync.Mutex
	refuse  string
	refused bool
}

func (f *flaky) Send(ctx context.Context, m mail.Message) error {
	f.mu.Lock()
	if m.To[0] == f.refuse && !f.refused {
		f.refused = true
		f.mu.Unlock()
		return errors.New("451 try again later")
	}
	f.mu.Unlock()
	return f.Mailbox.Send(ctx, m)
}

// emailer is an approval's activities over store sending through n.
func emailer(store *models.Store, n *notify.Notifier) *approvals.Activities {
	return &approvals.Activities{ActivityEnv: requests.ActivityEnv{Store: store, BaseURL: n.BaseURL, Notify: n}}
}

func recipients(b *mail.Mailbox) []string {
	var out []string
	for _, m := range b.Messages() {
		out = append(out, m.To...)
	}
	return out
}

func TestApproversAreEmailedOnceEachAcrossRetries(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		member := func(email string, active bool) *models.Member {
			m, err := store.CreateMember(ctx, org.ID, email, strings.Split(email, "@")[0], "")
			require.NoError(t, err)
			if !active {
				testenv.ChangeMember(t, store, org.ID, m.ID, func(m *models.Member) { m.Active = active })
			}
			return m
		}
		ann, ben, gone, req := member("ann@example.com", true), member("ben@example.com", true),
			member("gone@example.com", false), member("req@example.com", true)
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay\r\nBcc: evil@example.com",
			ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: req.ID, RequestedBy: "req",
			Metadata: models.RawJSON(`{"customer":{"ssn":"123-45-6789"}}`)}, Risk: models.RiskMedium,
			Description: strings.Repeat("word ", 1000), ApproverIDs: []string{ann.ID, ben.ID, gone.ID, req.ID},
			RequiredApprovals: 1,
			Input:             models.RawJSON(`{"payee":{"ssn":"999-00-1111"}}`),
			RestrictedFields:  models.StringList{"ssn"}}
		_, err = requests.Insert(ctx, store, approvals.Records(store), a, nil)
		require.NoError(t, err)

		liveLinks := func(personID string) int64 {
			var n int64
			require.NoError(t, db.Model(&models.DecisionLink{}).Where("person_id = ? AND used_at IS NULL", personID).Count(&n).Error)
			return n
		}
		box := &flaky{Mailbox: mail.NewMailbox(0), refuse: "ann@example.com"}
		n := &notify.Notifier{Store: store, Mailer: box, BaseURL: "https://assent.example"}
		err = emailer(store, n).EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID})
		require.Error(t, err, "the refused send fails the attempt, so Temporal retries it")
		assert.Contains(t, err.Error(), "451 try again later")
		assert.Equal(t, []string{"ben@example.com"}, recipients(box.Mailbox), "one refused address does not stop the rest")
		assert.Zero(t, liveLinks(ann.ID), "the link in the email that was not sent is gone")
		assert.EqualValues(t, 1, liveLinks(ben.ID))

		require.NoError(t, emailer(store, n).EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID}), "the retry")
		require.NoError(t, emailer(store, n).EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID}), "and another changes nothing")
		assert.ElementsMatch(t, []string{"ann@example.com", "ben@example.com"}, recipients(box.Mailbox),
			"each approver once; not the deactivated member, not the requester")

		assert.EqualValues(t, 1, liveLinks(ann.ID), "one live link each: the one sent")
		assert.EqualValues(t, 1, liveLinks(ben.ID))

		msg := box.Messages()[0] // newest first: Ann's was the last sent
		assert.Equal(t, "Approval needed: Pay Bcc: evil@example.com", msg.Subject, "the title cannot add headers")
		assert.Less(t, len(msg.Text), 2500, "the description is cut short")
		assert.Contains(t, msg.Text, "https://assent.example/approvals/"+a.ID+"\n")
		assert.Contains(t, msg.Text, "https://assent.example/approvals/"+a.ID+"/link/")
		for _, hidden := range []string{"999-00-1111", "123-45-6789"} {
			assert.NotContains(t, msg.Text+msg.HTML, hidden, "a restricted field, at any depth, is not emailed")
		}

		// A settled request emails nobody new.
		require.NoError(t, db.Model(&approvals.Approval{}).Where("id = ?", a.ID).Update("status", "approved").Error)
		cy := member("cy@example.com", true)
		require.NoError(t, db.Model(&approvals.Approval{}).Where("id = ?", a.ID).
			Update("approver_ids", models.StringList{ann.ID, cy.ID}).Error)
		require.NoError(t, emailer(store, n).EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID}))
		assert.Len(t, box.Messages(), 2)
	})
}

func TestWithoutAMailerNothingIsRetried(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		m, err := store.CreateMember(ctx, org.ID, "ann@example.com", "", "")
		require.NoError(t, err)
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "T",
			ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_1", RequestedBy: "agent"}, Risk: models.RiskHigh, ApproverIDs: []string{m.ID},
			RequiredApprovals: 1}
		_, err = requests.Insert(ctx, store, approvals.Records(store), a, nil)
		require.NoError(t, err)
		n := &notify.Notifier{Store: store, BaseURL: "https://assent.example"}
		assert.NoError(t, emailer(store, n).EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID}))
		var links int64
		require.NoError(t, db.Model(&models.DecisionLink{}).Count(&links).Error)
		assert.Zero(t, links)
	})
}

// TestApproverReminderGoesOnceToWhoHasNotDecided: the reminder skips who
// approved since it was due and who is no longer an approver, and a retry
// sends nothing twice.
func TestApproverReminderGoesOnceToWhoHasNotDecided(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		var ids []string
		for _, e := range []string{"ann@example.com", "ben@example.com", "cy@example.com"} {
			m, err := store.CreateMember(ctx, org.ID, e, "", "")
			require.NoError(t, err)
			ids = append(ids, m.ID)
		}
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
			ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_1", RequestedBy: "agent"}, Risk: models.RiskHigh, ApproverIDs: ids[:2],
			RequiredApprovals: 2,
			ApprovedBy:        models.StringList{ids[1]}}
		_, err = requests.Insert(ctx, store, approvals.Records(store), a, nil)
		require.NoError(t, err)
		box := mail.NewMailbox(0)
		n := &notify.Notifier{Store: store, Mailer: box, BaseURL: "https://assent.example"}
		require.NoError(t, emailer(store, n).EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID, Reminder: true, PersonIDs: ids}))
		require.NoError(t, emailer(store, n).EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID, Reminder: true, PersonIDs: ids}), "a retry")
		assert.Equal(t, []string{"ann@example.com"}, recipients(box), "not Ben, who approved, nor Cy, who is not asked")
		msg := box.Messages()[0]
		assert.Equal(t, "Reminder, approval needed: Pay", msg.Subject)
		assert.Contains(t, msg.Text, "A reminder: agent is still waiting for your approval")

		require.NoError(t, emailer(store, n).EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID}))
		assert.Len(t, box.Messages(), 3, "the reminder is not the email at creation: Ann and Ben still get that once")
	})
}
