package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/payloadcodec"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/worker"
	"github.com/assent-hq/assent/workflows"
)

// TestAdminGuestRemove: `assent admin guest remove` removes a guest named
// by email through the same service as the API, and the pending request
// they alone could decide goes to the owner, which its timeline says.
func TestAdminGuestRemove(t *testing.T) {
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			url := "sqlite:" + filepath.Join(t.TempDir(), "assent.db")
			if kind == "postgres" {
				url = testenv.PostgresURL(t)
			}
			db, err := models.Open(url)
			require.NoError(t, err)
			t.Cleanup(func() { _ = models.Close(db) })
			require.NoError(t, models.Migrate(db))
			store := models.NewStore(db, testenv.Keys())

			// The command encrypts its Updates as serve does; so does the worker.
			t.Setenv(secretkey.Env, testenv.SecretKey)
			codec := payloadcodec.New(testenv.Keys())
			ts := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseClientOptions(client.Options{
				DataConverter: payloadcodec.DataConverter(codec), FailureConverter: payloadcodec.FailureConverter(codec)}))
			tc := ts.GetDefaultClient()
			require.NoError(t, worker.RegisterSearchAttributes(ctx, tc, ts.GetDefaultNamespace()))
			w := worker.New(tc, worker.Deps{Store: store, BaseURL: "http://assent.test"})
			require.NoError(t, w.Start())
			t.Cleanup(w.Stop)

			org, err := store.CreateOrganization(ctx, "Acme", "")
			require.NoError(t, err)
			ada, err := store.CreateMember(ctx, org.ID, "ada@example.com", "Ada", models.RoleOwner)
			require.NoError(t, err)
			gus, _, err := store.CreateGuest(ctx, org.ID, "gus@partner.example", "")
			require.NoError(t, err)
			a := &models.Approval{OrganizationID: org.ID, Title: "Share", Risk: models.RiskMedium, ApproverIDs: []string{gus.ID},
				ExpiresAt: time.Now().Add(time.Hour).UTC().Truncate(time.Second), RequiredApprovals: 1,
				Requester: "key_test", RequestedBy: "agent"}
			_, err = store.CreateApproval(ctx, a, nil)
			require.NoError(t, err)
			require.NoError(t, approvals.New(approvals.Deps{Store: store, Temporal: tc}).Start(ctx, a))
			require.Eventually(t, func() bool {
				got, err := store.GetApproval(ctx, org.ID, a.ID)
				return err == nil && got.Seq > 0
			}, 15*time.Second, 20*time.Millisecond)

			run := func(args ...string) (string, error) {
				var out, errs bytes.Buffer
				args = append(args, "--database-url", url, "--temporal-address", ts.GetFrontendHostPort(),
					"--temporal-namespace", ts.GetDefaultNamespace())
				err := runAdmin(ctx, args, &out, &errs)
				return out.String(), err
			}
			_, err = run("guest", "remove", "--email", "gus@partner.example", "--id", gus.ID)
			assert.ErrorContains(t, err, "exactly one of --id and --email")
			out, err := run("guest", "remove", "--email", "nobody@partner.example")
			assert.Error(t, err)
			assert.Contains(t, out, `"not_found"`)

			out, err = run("guest", "remove", "--email", "GUS@partner.example")
			require.NoError(t, err)
			var removed struct {
				ID      string
				Removed bool
			}
			require.NoError(t, json.Unmarshal([]byte(out), &removed))
			assert.Equal(t, gus.ID, removed.ID)
			assert.True(t, removed.Removed)

			got, err := store.GetApproval(ctx, org.ID, a.ID)
			require.NoError(t, err)
			assert.Equal(t, models.StringList{ada.ID}, got.ApproverIDs)
			var last models.AuditEntry
			require.NoError(t, db.Where("subject_id = ?", a.ID).Order("seq DESC").Take(&last).Error)
			assert.Equal(t, workflows.ActionApproverRemoved, last.Action)
			assert.Equal(t, admin.Operator.Name, last.ActorName)
			assert.Contains(t, last.Detail, workflows.DefaultApproversAdded)

			out, err = run("guest", "list", "--org", org.ID)
			require.NoError(t, err)
			assert.NotContains(t, out, "gus@partner.example")
		})
	}
}

// TestAdminRotateSecretKey: with the new key first in ASSENT_SECRET_KEY,
// `assent admin rotate-secret-key` re-seals what the old key sealed, after
// which the old key can be dropped.
func TestAdminRotateSecretKey(t *testing.T) {
	ctx := context.Background()
	url := "sqlite:" + filepath.Join(t.TempDir(), "assent.db")
	db, err := models.Open(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = models.Close(db) })
	require.NoError(t, models.Migrate(db))
	oldKey, newKey := secretkey.Generate(), secretkey.Generate()
	oldRing, err := secretkey.Parse(oldKey)
	require.NoError(t, err)
	org, err := models.NewStore(db, oldRing).CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	ep, err := models.NewStore(db, oldRing).CreateWebhookEndpoint(ctx, org.ID, models.NewWebhookEndpoint{URL: "https://hooks.example/a",
		Format: models.FormatJSON, Events: []string{"approval.approved"}, Enabled: true, Secret: "whsec_one"})
	require.NoError(t, err)

	t.Setenv(secretkey.Env, newKey+","+oldKey)
	var out bytes.Buffer
	require.NoError(t, runAdmin(ctx, []string{"rotate-secret-key", "--database-url", url}, &out, io.Discard))
	newRing, err := secretkey.Parse(newKey)
	require.NoError(t, err)
	var got struct {
		CurrentKeyID string
		Resealed     int
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	assert.Equal(t, newRing.CurrentID(), got.CurrentKeyID)
	assert.Equal(t, 1, got.Resealed)

	stored, err := models.NewStore(db, newRing).GetWebhookEndpoint(ctx, org.ID, ep.ID)
	require.NoError(t, err)
	secrets, err := models.NewStore(db, newRing).WebhookSecrets(stored, time.Now())
	require.NoError(t, err)
	assert.Equal(t, []string{"whsec_one"}, secrets)

	t.Setenv(secretkey.Env, "")
	err = runAdmin(ctx, []string{"rotate-secret-key", "--database-url", url, "--data-dir", t.TempDir()}, io.Discard, io.Discard)
	assert.ErrorContains(t, err, "ASSENT_SECRET_KEY is required")
}
