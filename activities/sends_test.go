package activities_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/activities"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// flakyMailer fails its first sends, then hands mail to the mailbox.
type flakyMailer struct {
	box   *mail.Mailbox
	fails atomic.Int32
}

func (m *flakyMailer) Send(ctx context.Context, msg mail.Message) error {
	if m.fails.Add(-1) >= 0 {
		return errors.New("smtp: 451 try again later")
	}
	return m.box.Send(ctx, msg)
}

// TestReportSendEmailsEachRecipientOnce: the ReportSend workflow, with
// time skipping, the real activities, a database and a mailbox, marks the
// send started and emails each recipient its link and note once, through
// a failing mail server's retries.
func TestReportSendEmailsEachRecipientOnce(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		ada, err := store.CreateMember(ctx, org.ID, "ada@example.com", "Ada", "")
		require.NoError(t, err)
		r, _, err := reports.Versions{Store: store}.Create(ctx, models.NewReport{OrganizationID: org.ID, Title: "Q3 numbers", Slug: "finance/q3", Classification: "internal"},
			models.Publication{State: models.VersionPublished, By: models.Actor{ID: ada.ID, Name: "Ada", IsPerson: true}}, nil)
		require.NoError(t, err)
		sent, err := reports.New(reports.Deps{Store: store}).Send(ctx, (&models.Person{Organization: org, Member: ada}).Actor(), r.ID,
			&reports.SendInput{To: []string{ada.Email, "pat@new.example"}, Note: "For Monday's review"}, nil)
		require.NoError(t, err)
		send, err := store.GetSend(ctx, org.ID, sent.ID)
		require.NoError(t, err)

		box := mail.NewMailbox(0)
		mailer := &flakyMailer{box: box}
		mailer.fails.Store(2)
		acts := &activities.Activities{ActivityEnv: requests.ActivityEnv{Store: store, Notify: &notify.Notifier{Store: store, Mailer: mailer, BaseURL: "https://assent.example"}}}
		run := func() {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterWorkflow(workflows.ReportSend)
			env.RegisterActivityWithOptions(acts.StartSend, activity.RegisterOptions{Name: workflows.ActivityStartSend})
			env.RegisterActivityWithOptions(acts.EmailSend, activity.RegisterOptions{Name: workflows.ActivityEmailSend})
			env.ExecuteWorkflow(workflows.ReportSend, workflows.ReportSendInput{OrganizationID: org.ID, SendID: send.ID})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
		}
		run()
		got, err := store.GetSend(ctx, org.ID, send.ID)
		require.NoError(t, err)
		assert.True(t, got.Started, "the reconciler leaves it alone")
		msgs := box.Messages()
		require.Len(t, msgs, 2, "two failures were retried; each recipient once")
		for _, m := range msgs {
			assert.Equal(t, "Ada shared Q3 numbers with you", m.Subject)
			assert.Contains(t, m.Text, "For Monday's review")
			assert.Contains(t, m.Text, "https://assent.example/reports/finance/q3")
		}
		for _, m := range msgs {
			assert.Equal(t, m.To[0] == "pat@new.example", strings.Contains(m.Text, "you are a guest there"), "only the new address is told it is a guest")
		}
		run()
		assert.Len(t, box.Messages(), 2, "a second run sends nothing again")
		assert.True(t, strings.HasPrefix(send.Recipients.V[1].PersonID, "gst_"))
	})
}
