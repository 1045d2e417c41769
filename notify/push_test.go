package notify_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/outbound"
	"github.com/assent-hq/assent/internal/pushtest"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
)

// opened decrypts a push with the browser's keys, checks its VAPID
// signature against the server's public key, and returns its payload as
// a map, so a field beyond those allowed shows.
func opened(t *testing.T, svc *pushtest.Service, b *pushtest.Browser, p pushtest.Push, vapidPublic string) map[string]any {
	t.Helper()
	assert.Equal(t, "aes128gcm", p.Header.Get("Content-Encoding"))
	assert.NotEmpty(t, p.Header.Get("TTL"))
	claims, err := pushtest.VerifyVAPID(p.Header, vapidPublic, svc.URL, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "https://assent.example", claims.Sub)
	plain, err := b.Decrypt(p.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(plain, &out), string(plain))
	return out
}

// TestAskedPeopleArePushedOnceEach: an approval's approver is pushed, on
// each of their browsers, the title, kind, risk and page, nothing else,
// encrypted to the browser and signed with the instance's VAPID key; a
// push service's 5xx fails the attempt and its retry pushes only what was
// not pushed; a 410 removes the subscription; the reminder is pushed
// too, and a request for information and a review alike.
func TestAskedPeopleArePushedOnceEach(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		person := func(email string) *models.Person {
			m, err := store.CreateMember(ctx, org.ID, email, "", "")
			require.NoError(t, err)
			return &models.Person{Organization: org, Member: m}
		}
		ann, ben := person("ann@example.com"), person("ben@example.com")
		svc := pushtest.New(t)
		subscribe := func(p *models.Person) *pushtest.Browser {
			b := svc.Subscribe(t)
			_, err := store.SubscribePush(ctx, p, "", models.NewPushSubscription{Endpoint: b.Endpoint, P256dh: b.P256dh, Auth: b.Auth})
			require.NoError(t, err)
			return b
		}
		laptop, phone, bens := subscribe(ann), subscribe(ann), subscribe(ben)
		vapid, _, err := store.VAPIDKey(ctx)
		require.NoError(t, err)

		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Refund order 42",
			ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_1", RequestedBy: "agent"}, Risk: models.RiskHigh,
			Description: "The customer's card ends 4242.", ApproverIDs: []string{ann.ID(), ben.ID()},
			RequiredApprovals: 1,
			Input:             models.RawJSON(`{"payee":{"ssn":"999-00-1111"}}`), RestrictedFields: models.StringList{"ssn"}}
		_, err = requests.Insert(ctx, store, approvals.Records(store), a, nil)
		require.NoError(t, err)

		box := mail.NewMailbox(0)
		n := &notify.Notifier{Store: store, Mailer: box, BaseURL: "https://assent.example",
			Push: &notify.Push{HTTP: outbound.NewClient(netguard.DevLoopback), Subject: "https://assent.example"}}
		env := requests.ActivityEnv{Store: store, BaseURL: n.BaseURL, Notify: n}
		apr := &approvals.Activities{ActivityEnv: env}
		svc.Answer(phone, http.StatusServiceUnavailable)
		svc.Answer(bens, http.StatusGone)
		err = apr.EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID})
		require.Error(t, err, "the push service's 503 fails the attempt, for the activity's retry")
		assert.Contains(t, err.Error(), "503")
		assert.NotContains(t, err.Error(), phone.Endpoint, "the endpoint is a credential")
		assert.Len(t, box.Messages(), 2, "the emails went all the same")

		require.NoError(t, apr.EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID}), "the retry")
		require.NoError(t, apr.EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID}), "and another pushes nothing more")
		require.Len(t, svc.To(laptop), 1, "once")
		require.Len(t, svc.To(phone), 2, "the 503, then the retry")
		require.Len(t, svc.To(bens), 1, "the 410, not retried")

		want := map[string]any{"title": "Refund order 42", "kind": "approval", "risk": "high",
			"url": "https://assent.example/approvals/" + a.ID}
		for _, b := range []*pushtest.Browser{laptop, phone} {
			pushes := svc.To(b)
			p := pushes[len(pushes)-1]
			assert.Equal(t, want, opened(t, svc, b, p, vapid), "only the title, kind, risk and page")
			assert.Equal(t, "high", p.Header.Get("Urgency"))
			assert.NotContains(t, string(p.Body), "Refund", "encrypted")
		}
		_, err = laptop.Decrypt(svc.To(phone)[1].Body)
		assert.Error(t, err, "a push opens only with its own browser's keys")

		subs, err := store.PushSubscriptions(ctx, org.ID, ben.ID())
		require.NoError(t, err)
		assert.Empty(t, subs, "the 410 removed Ben's browser")
		subs, err = store.PushSubscriptions(ctx, org.ID, ann.ID())
		require.NoError(t, err)
		assert.Len(t, subs, 2)

		// The reminder is pushed too, once.
		require.NoError(t, apr.EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID, Reminder: true, PersonIDs: []string{ann.ID()}}))
		require.NoError(t, apr.EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: org.ID, ApprovalID: a.ID, Reminder: true, PersonIDs: []string{ann.ID()}}))
		assert.Len(t, svc.To(laptop), 2)

		// A request for information and a review push their page.
		qs, err := questions.Define([]questions.Input{{ID: "q1", Prompt: "Revenue?", Kind: questions.Text}})
		require.NoError(t, err)
		c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Q3 numbers",
			Requester: "key_1", RequestedBy: "agent",
			ExpiresAt: time.Now().Add(time.Hour).UTC()}, Description: "secret detail",
			RespondentIDs: []string{ann.ID()}, RequiredResponses: 1,
			Questions: models.JSON[[]questions.Question]{V: qs}}
		_, err = requests.Insert(ctx, store, collections.Records(store), c, nil)
		require.NoError(t, err)
		require.NoError(t, (&collections.Activities{ActivityEnv: env}).EmailRespondents(ctx, collections.EmailRespondentsInput{OrganizationID: org.ID, CollectionID: c.ID}))
		pushes := svc.To(laptop)
		require.Len(t, pushes, 3)
		assert.Equal(t, map[string]any{"title": "Q3 numbers", "kind": "collection", "url": "https://assent.example/collections/" + c.ID},
			opened(t, svc, laptop, pushes[2], vapid))
		assert.False(t, strings.Contains(string(pushes[2].Body), "secret"))

		r := &reviews.Review{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Q3 report",
			Requester: "key_1", RequestedBy: "agent", ExpiresAt: time.Now().Add(time.Hour).UTC()}, Instructions: "check the numbers",
			ReportID: "rpt_x", VersionID: "ver_x", Version: 2, ReviewerIDs: []string{ann.ID()}, RequiredApprovals: 1,
		}
		_, err = requests.Insert(ctx, store, reviews.Records(store), r, nil)
		require.NoError(t, err)
		require.NoError(t, (&reviews.Activities{ActivityEnv: env}).EmailReviewers(ctx, reviews.EmailReviewersInput{OrganizationID: org.ID, ReviewID: r.ID}))
		require.NoError(t, (&reviews.Activities{ActivityEnv: env}).EmailReviewers(ctx, reviews.EmailReviewersInput{OrganizationID: org.ID, ReviewID: r.ID}))
		pushes = svc.To(laptop)
		require.Len(t, pushes, 4)
		assert.Equal(t, map[string]any{"title": "Q3 report", "kind": "review", "url": "https://assent.example/reviews/" + r.ID},
			opened(t, svc, laptop, pushes[3], vapid))
	})
}
