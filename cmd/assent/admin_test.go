package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/payloadcodec"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/worker"
)

// TestAdminGuestRemove: `assent admin guest remove` removes a guest named
// by email through the same service as the API, and the pending request
// they alone could decide goes to the owner, which its timeline says.
func TestAdminGuestRemove(t *testing.T) {
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			url, db := adminDB(t, kind)
			store := models.NewStore(db, testenv.Keys())

			// The command encrypts its Updates as serve does; so does the worker.
			t.Setenv(secretkey.Env, testenv.SecretKey)
			ts := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseClientOptions(
				payloadcodec.ClientOptions(client.Options{}, payloadcodec.New(testenv.Keys()))))
			tc := ts.GetDefaultClient()
			require.NoError(t, worker.RegisterSearchAttributes(ctx, tc, ts.GetDefaultNamespace()))
			w := worker.New(tc, worker.Deps{Kinds: app.Workers(), Store: store, BaseURL: "http://assent.test"})
			require.NoError(t, w.Start())
			t.Cleanup(w.Stop)

			org, err := store.CreateOrganization(ctx, "Acme", "")
			require.NoError(t, err)
			ada, err := store.CreateMember(ctx, org.ID, "ada@example.com", "Ada", models.RoleOwner)
			require.NoError(t, err)
			gus, _, err := store.CreateGuest(ctx, org.ID, "gus@partner.example", "")
			require.NoError(t, err)
			a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Share",
				ExpiresAt: time.Now().Add(time.Hour).UTC().Truncate(time.Second),
				Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskMedium, ApproverIDs: []string{gus.ID},
				RequiredApprovals: 1,
			}
			_, err = requests.Insert(ctx, store, approvals.Records(store), a, nil)
			require.NoError(t, err)
			require.NoError(t, app.Build(app.Deps{Store: store, Temporal: tc}).Approvals.Start(ctx, a))
			require.Eventually(t, func() bool {
				got, err := approvals.Records(store).Get(ctx, org.ID, a.ID)
				return err == nil && got.Seq > 0
			}, 15*time.Second, 20*time.Millisecond)

			run := func(args ...string) (string, error) {
				var out, errs bytes.Buffer
				args = append(args, "--database-url", url)
				if args[1] == "remove" {
					args = append(args, "--temporal-address", ts.GetFrontendHostPort(), "--temporal-namespace", ts.GetDefaultNamespace())
				}
				err := runAdmin(ctx, args, &out, &errs)
				return out.String(), err
			}
			_, err = run("guest", "remove")
			assert.EqualError(t, err, "--guest is required: the guest's email or id (gst_…)")
			_, err = run("guest", "remove", "--guest", "Gus")
			assert.EqualError(t, err, `--guest "Gus" is neither an email nor a guest's id (gst_…)`)
			out, err := run("guest", "remove", "--guest", "nobody@partner.example")
			assert.Error(t, err)
			assert.Contains(t, out, `"not_found"`)
			assert.Contains(t, out, `"field":"guest"`)

			out, err = run("guest", "remove", "--guest", "GUS@partner.example")
			require.NoError(t, err)
			var removed struct {
				ID      string
				Removed bool
			}
			require.NoError(t, json.Unmarshal([]byte(out), &removed))
			assert.Equal(t, gus.ID, removed.ID)
			assert.True(t, removed.Removed)

			got, err := approvals.Records(store).Get(ctx, org.ID, a.ID)
			require.NoError(t, err)
			assert.Equal(t, models.StringList{ada.ID}, got.ApproverIDs)
			var last models.AuditEntry
			require.NoError(t, db.Where("subject_id = ?", a.ID).Order("seq DESC").Take(&last).Error)
			assert.Equal(t, approvals.ActionApproverRemoved, last.Action)
			assert.Equal(t, admin.Operator.Name, last.ActorName)
			assert.Contains(t, last.Detail, approvals.DefaultApproversAdded)

			out, err = run("guest", "list", "--org", org.ID)
			require.NoError(t, err)
			assert.NotContains(t, out, "gus@partner.example")

			// A namespace another instance marked is refused, as serve and
			// worker refuse it: its workflows are sealed under another key.
			_, _, err = store.CreateGuest(ctx, org.ID, "gil@partner.example", "")
			require.NoError(t, err)
			other, err := secretkey.Parse(secretkey.Generate())
			require.NoError(t, err)
			require.NoError(t, payloadcodec.ClaimMarker(ctx, tc, ts.GetDefaultNamespace(), other))
			_, err = run("guest", "remove", "--guest", "gil@partner.example")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "belongs to another Assent instance")
		})
	}
}

// TestAdminRotateSecretKey: with the new key first in ASSENT_SECRET_KEY,
// `assent admin rotate-secret-key` re-seals what the old key sealed, after
// which the old key can be dropped.
func TestAdminRotateSecretKey(t *testing.T) {
	ctx := context.Background()
	url, db := adminDB(t, "sqlite")
	oldKey, newKey := secretkey.Generate(), secretkey.Generate()
	oldRing, err := secretkey.Parse(oldKey)
	require.NoError(t, err)
	org, err := models.NewStore(db, oldRing).CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	ep, err := models.NewStore(db, oldRing).CreateWebhookEndpoint(ctx, org.ID, models.NewWebhookEndpoint{URL: "https://hooks.example/a",
		Format: models.FormatJSON, Events: []string{"approval.approved"}, Enabled: true, Secret: "whsec_one"})
	require.NoError(t, err)
	// As a version before values were bound to their rows sealed it.
	legacy, err := models.NewStore(db, oldRing).CreateWebhookEndpoint(ctx, org.ID, models.NewWebhookEndpoint{URL: "https://hooks.example/b",
		Format: models.FormatJSON, Events: []string{"approval.approved"}, Enabled: true, Secret: "unused"})
	require.NoError(t, err)
	require.NoError(t, db.Exec("UPDATE webhook_endpoints SET secret = ? WHERE id = ?", oldRing.Seal("webhook_endpoints.secret", "whsec_v1"), legacy.ID).Error)

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
	assert.Equal(t, 2, got.Resealed)

	for id, want := range map[string]string{ep.ID: "whsec_one", legacy.ID: "whsec_v1"} {
		stored, err := models.NewStore(db, newRing).GetWebhookEndpoint(ctx, org.ID, id)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(stored.SealedSecret, "v2."+newRing.CurrentID()+"."), "sealed bound to its row, under the new key")
		secrets, err := models.NewStore(db, newRing).WebhookSecrets(stored, time.Now())
		require.NoError(t, err)
		assert.Equal(t, []string{want}, secrets)
	}

	t.Setenv(secretkey.Env, "")
	err = runAdmin(ctx, []string{"rotate-secret-key", "--database-url", url, "--data-dir", t.TempDir()}, io.Discard, io.Discard)
	assert.ErrorContains(t, err, "ASSENT_SECRET_KEY is required")
}

// TestAdminHelp: `assent admin --help` lists the commands with what each
// does; `assent admin <command> --help` shows only that command's flags,
// each described, and the settings it reads; an unknown command says so
// and lists the commands.
func TestAdminHelp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	help := func(args ...string) (string, string, error) {
		var out, errs bytes.Buffer
		err := runAdmin(ctx, args, &out, &errs)
		return out.String(), errs.String(), err
	}
	out, _, err := help("--help")
	require.NoError(t, err)
	assert.Contains(t, out, "usage: assent admin <command> [flags]")
	assert.Regexp(t, `(?m)^  team update +rename a team or replace its members`, out)
	assert.Regexp(t, `(?m)^  guest update +rename a guest`, out)
	assert.Regexp(t, `(?m)^  rotate-secret-key +re-seal every stored secret`, out)

	out, _, err = help("team", "update", "--help")
	require.NoError(t, err)
	assert.Contains(t, out, "usage: assent admin team update [flags]")
	assert.Contains(t, out, "  --members list\n      a comma-separated list of member emails or ids that replaces the team's")
	assert.Contains(t, out, "  --id id\n      the team's id (team_…, required)")
	assert.Contains(t, out, "  --database-url string\n")
	for _, other := range []string{"--kind", "--email", "--scopes", "--temporal-address", "--http-addr", "--smtp-host"} {
		assert.NotContains(t, out, other, "team update does not take %s", other)
	}
	out, _, err = help("guest", "remove", "-h")
	require.NoError(t, err)
	assert.Contains(t, out, "--temporal-address", "removing a guest reaches Temporal")

	// Every flag of every command is described.
	for _, c := range adminCommands {
		out, _, err := help(append(strings.Fields(c.name), "--help")...)
		require.NoError(t, err, c.name)
		for _, f := range c.flags {
			assert.Regexp(t, `(?m)^  --`+f.name+` \S+\n      \S`, out, "%s --%s", c.name, f.name)
		}
	}

	_, errs, err := help("team", "frob")
	assert.EqualError(t, err, `unknown admin command "team frob"; the commands are listed above`)
	assert.Contains(t, errs, "  team remove ")
	_, errs, err = help("team", "list", "--kind", "team")
	assert.EqualError(t, err, "flag provided but not defined: -kind")
	assert.Contains(t, errs, "usage: assent admin team list [flags]")
	_, _, err = help("guest", "update", "gus@partner.example")
	assert.EqualError(t, err, `assent admin guest update takes only flags; got "gus@partner.example"`)
	_, _, err = help()
	assert.EqualError(t, err, "admin needs a command")
}

// TestAdminEditsTeamsAndGuests: `assent admin team update` renames a team
// and replaces or empties its members, `team remove` removes it, and
// `guest update` renames a guest named by email or id; a request made
// before keeps the people it was asked of.
func TestAdminEditsTeamsAndGuests(t *testing.T) {
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) { testAdminEditsTeamsAndGuests(t, kind) })
	}
}

func testAdminEditsTeamsAndGuests(t *testing.T, kind string) {
	ctx := context.Background()
	url, db := adminDB(t, kind)
	store := models.NewStore(db, testenv.Keys())
	t.Setenv(secretkey.Env, testenv.SecretKey)
	org, err := store.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	ada, err := store.CreateMember(ctx, org.ID, "ada@example.com", "Ada", models.RoleOwner)
	require.NoError(t, err)
	bob, err := store.CreateMember(ctx, org.ID, "bob@example.com", "Bob", "")
	require.NoError(t, err)
	team, err := testenv.CreateTeam(store, ctx, org.ID, "Finance", models.TeamKindTeam, []string{ada.ID})
	require.NoError(t, err)
	gus, _, err := store.CreateGuest(ctx, org.ID, "gus@partner.example", "Gus")
	require.NoError(t, err)
	earlier := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
		ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow, ApproverIDs: []string{ada.ID, gus.ID},
		RequiredApprovals: 1}
	_, err = requests.Insert(ctx, store, approvals.Records(store), earlier, nil)
	require.NoError(t, err)

	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := runAdmin(ctx, append(args, "--database-url", url), &out, io.Discard)
		return out.String(), err
	}
	var got struct {
		ID, Name, Email string
		Members         []struct{ Email string }
		Removed         bool
	}
	decode := func(out string) {
		t.Helper()
		got.Members, got.Removed = nil, false
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	}

	out, err := run("team", "update", "--id", team.ID, "--name", "Finance team")
	require.NoError(t, err, out)
	decode(out)
	assert.Equal(t, "Finance team", got.Name)
	require.Len(t, got.Members, 1, "members stay when not given")
	out, err = run("team", "update", "--id", team.ID, "--members", "bob@example.com, "+ada.ID)
	require.NoError(t, err, out)
	decode(out)
	assert.Equal(t, "Finance team", got.Name)
	require.Len(t, got.Members, 2)
	assert.ElementsMatch(t, []string{ada.Email, bob.Email}, []string{got.Members[0].Email, got.Members[1].Email})
	out, err = run("team", "update", "--id", team.ID, "--members", "")
	require.NoError(t, err, out)
	decode(out)
	assert.Empty(t, got.Members, "an empty list empties the team")
	out, err = run("team", "update", "--id", team.ID, "--members", "nobody@example.com")
	assert.Error(t, err)
	assert.Contains(t, out, `"field":"members"`)
	assert.Contains(t, out, "nobody@example.com")

	out, err = run("guest", "update", "--guest", "GUS@partner.example", "--name", "Gus Grey")
	require.NoError(t, err, out)
	decode(out)
	assert.Equal(t, gus.ID, got.ID)
	assert.Equal(t, "Gus Grey", got.Name)
	out, err = run("guest", "update", "--guest", gus.ID, "--name", strings.Repeat("x", 201))
	assert.Error(t, err)
	assert.Contains(t, out, `"field":"name"`)
	out, err = run("guest", "update", "--guest", "nobody@partner.example", "--name", "X")
	assert.Error(t, err)
	assert.Contains(t, out, `"not_found"`)
	_, err = run("guest", "update", "--name", "X")
	assert.EqualError(t, err, "--guest is required: the guest's email or id (gst_…)")
	_, err = run("guest", "update", "--guest", "ada@example.com", "--name", "X")
	assert.Error(t, err, "a member is not a guest")

	out, err = run("team", "remove", "--id", team.ID)
	require.NoError(t, err, out)
	decode(out)
	assert.Equal(t, team.ID, got.ID)
	assert.True(t, got.Removed)
	out, err = run("team", "remove", "--id", team.ID)
	assert.Error(t, err)
	assert.Contains(t, out, `"not_found"`)
	teams, _, err := store.ListTeams(ctx, org.ID, models.Page{Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, teams)

	kept, err := approvals.Records(store).Get(ctx, org.ID, earlier.ID)
	require.NoError(t, err)
	assert.Equal(t, models.StringList{ada.ID, gus.ID}, kept.ApproverIDs, "a request made earlier is unchanged")
}

// TestAdminRotateEvidenceKey: `assent admin rotate-evidence-key` makes a
// new signing key and keeps the old one listed, retired.
func TestAdminRotateEvidenceKey(t *testing.T) {
	ctx := context.Background()
	url, db := adminDB(t, "sqlite")
	key := secretkey.Generate()
	ring, err := secretkey.Parse(key)
	require.NoError(t, err)
	store := models.NewStore(db, ring)
	first, _, err := store.SigningEvidenceKey(ctx)
	require.NoError(t, err)

	t.Setenv(secretkey.Env, key)
	var out bytes.Buffer
	require.NoError(t, runAdmin(ctx, []string{"rotate-evidence-key", "--database-url", url}, &out, io.Discard))
	var got struct{ EvidenceKeyID string }
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	now, _, err := store.SigningEvidenceKey(ctx)
	require.NoError(t, err)
	assert.Equal(t, now.ID, got.EvidenceKeyID)
	assert.NotEqual(t, first.ID, now.ID)
	keys, err := store.EvidenceKeys(ctx)
	require.NoError(t, err)
	require.Len(t, keys, 2)
	assert.Equal(t, first.ID, keys[0].ID)
	assert.NotNil(t, keys[0].RetiredAt)
}

// TestAdminRotateDecisionKey: `assent admin rotate-decision-key` makes a
// new decision key, keeps the old one listed, retired, and leaves the
// evidence keys alone.
func TestAdminRotateDecisionKey(t *testing.T) {
	ctx := context.Background()
	url, db := adminDB(t, "sqlite")
	key := secretkey.Generate()
	ring, err := secretkey.Parse(key)
	require.NoError(t, err)
	store := models.NewStore(db, ring)
	first, _, err := store.ActiveSigningKey(ctx, models.DecisionFamily)
	require.NoError(t, err)
	evidence, _, err := store.SigningEvidenceKey(ctx)
	require.NoError(t, err)

	t.Setenv(secretkey.Env, key)
	var out bytes.Buffer
	require.NoError(t, runAdmin(ctx, []string{"rotate-decision-key", "--database-url", url}, &out, io.Discard))
	var got struct{ DecisionKeyID string }
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	now, _, err := store.ActiveSigningKey(ctx, models.DecisionFamily)
	require.NoError(t, err)
	assert.Equal(t, now.ID, got.DecisionKeyID)
	assert.NotEqual(t, first.ID, now.ID)
	keys, err := store.SigningKeys(ctx, models.DecisionFamily)
	require.NoError(t, err)
	require.Len(t, keys, 2)
	assert.Equal(t, first.ID, keys[0].ID)
	assert.NotNil(t, keys[0].RetiredAt)
	still, _, err := store.SigningEvidenceKey(ctx)
	require.NoError(t, err)
	assert.Equal(t, evidence.ID, still.ID, "the evidence key is another family's")
}

// TestAdminTokenCreate: the operator's shell mints a member token for
// anyone, owners included, with every scope unless told fewer: it holds
// the instance's database and key anyway. Each mint is in the audit trail,
// naming the operator.
func TestAdminTokenCreate(t *testing.T) {
	ctx := context.Background()
	url, db := adminDB(t, "sqlite")
	t.Setenv(secretkey.Env, testenv.SecretKey)
	store := models.NewStore(db, testenv.Keys())
	org, err := store.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	ada, err := store.CreateMember(ctx, org.ID, "ada@example.com", "Ada", models.RoleOwner)
	require.NoError(t, err)

	// The member is named by id or by email, as every command names a
	// person.
	for flags, want := range map[string][]string{"": scopes.All, "approvals:read,approvals:write": {scopes.ApprovalsRead, scopes.ApprovalsWrite}} {
		member := ada.ID
		if flags != "" {
			member = "ADA@example.com"
		}
		args := []string{"token", "create", "--database-url", url, "--org", org.ID, "--member", member}
		if flags != "" {
			args = append(args, "--scopes", flags)
		}
		var out bytes.Buffer
		require.NoError(t, runAdmin(ctx, args, &out, io.Discard))
		var got struct{ ID, Token string }
		require.NoError(t, json.Unmarshal(out.Bytes(), &got))
		p, err := accounts.New(store).Authenticate(ctx, got.Token)
		require.NoError(t, err)
		assert.Equal(t, ada.ID, p.Member().ID)
		assert.Equal(t, want, []string(p.Key.Scopes))
		var e models.AuditEntry
		require.NoError(t, db.Where("subject_type = ? AND subject_id = ?", "key", got.ID).Take(&e).Error)
		assert.Equal(t, admin.Operator.ID, e.ActorID)
		assert.Contains(t, e.Detail, "ada@example.com")

		// Revoked from the shell, audited naming the operator.
		require.NoError(t, runAdmin(ctx, []string{"key", "revoke", "--database-url", url, "--org", org.ID, "--id", got.ID}, io.Discard, io.Discard))
		_, err = accounts.New(store).Authenticate(ctx, got.Token)
		require.Error(t, err, "revoked")
		var revoked models.AuditEntry
		require.NoError(t, db.Where("subject_type = ? AND subject_id = ? AND action = ?", "key", got.ID, models.KeyRevoked).Take(&revoked).Error)
		assert.Equal(t, admin.Operator.ID, revoked.ActorID)
		assert.Equal(t, 2, revoked.Seq)
	}
	require.NoError(t, store.VerifyAuditChain(ctx, org.ID))
}

// adminDB is a migrated database of kind for the shell to open, and its
// URL.
func adminDB(t *testing.T, kind string) (string, *gorm.DB) {
	t.Helper()
	url := testenv.MigratedURL(t, kind)
	db, err := models.Open(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = models.Close(db) })
	return url, db
}

// TestAdminNamesPeopleByEmailOrID: every command that names a person
// takes their email or their id through one resolver: a member to update
// or mint a token for, a guest to update or remove; an inactive member is
// still found by email, to let them back in.
func TestAdminNamesPeopleByEmailOrID(t *testing.T) {
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			url, db := adminDB(t, kind)
			store := models.NewStore(db, testenv.Keys())
			t.Setenv(secretkey.Env, testenv.SecretKey)
			org, err := store.CreateOrganization(ctx, "Acme", "")
			require.NoError(t, err)
			_, err = store.CreateMember(ctx, org.ID, "ada@example.com", "Ada", models.RoleOwner)
			require.NoError(t, err)
			bob, err := store.CreateMember(ctx, org.ID, "bob@example.com", "Bob", "")
			require.NoError(t, err)
			run := func(args ...string) (string, error) {
				var out bytes.Buffer
				err := runAdmin(ctx, append(args, "--database-url", url), &out, io.Discard)
				return out.String(), err
			}
			var got struct {
				ID, Role string
				Active   bool
			}
			out, err := run("member", "update", "--member", "BOB@example.com", "--active", "false")
			require.NoError(t, err, out)
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			assert.Equal(t, bob.ID, got.ID)
			assert.False(t, got.Active)
			out, err = run("member", "update", "--member", "bob@example.com", "--active", "true", "--role", "admin")
			require.NoError(t, err, "an inactive member is found by email: %s", out)
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			assert.True(t, got.Active)
			assert.Equal(t, "admin", got.Role)
			out, err = run("member", "update", "--member", bob.ID, "--role", "member")
			require.NoError(t, err, out)
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			assert.Equal(t, "member", got.Role)

			out, err = run("member", "update", "--member", "nobody@example.com", "--role", "admin")
			assert.Error(t, err)
			assert.Contains(t, out, `"not_found"`)
			assert.Contains(t, out, `"field":"member"`)
			_, err = run("member", "update", "--member", "Bob", "--role", "admin")
			assert.EqualError(t, err, `--member "Bob" is neither an email nor a member's id (mem_…)`)
			_, err = run("token", "create")
			assert.EqualError(t, err, "--member is required: the member's email or id (mem_…)")
			out, err = run("token", "create", "--member", "bob@example.com", "--scopes", "approvals:read")
			require.NoError(t, err, out)

			// Every command naming a person offers the same flag.
			for _, c := range adminCommands {
				for _, f := range c.flags {
					switch f.name {
					case "id", "email":
						assert.NotContains(t, []string{"member update", "token create", "guest update", "guest remove"}, c.name,
							"%s names a person with --member or --guest", c.name)
					case "member":
						assert.Equal(t, memberFlag, f, c.name)
					case "guest":
						assert.Equal(t, guestFlag, f, c.name)
					}
				}
			}
		})
	}
}

// TestAdminListsPrintTheAPIShape: `assent admin … list` prints what the
// API's lists answer, {data, nextCursor}: every row with a null cursor,
// or one page with --limit and the next with --cursor.
func TestAdminListsPrintTheAPIShape(t *testing.T) {
	ctx := context.Background()
	url, db := adminDB(t, "sqlite")
	store := models.NewStore(db, testenv.Keys())
	t.Setenv(secretkey.Env, testenv.SecretKey)
	org, err := store.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	for _, email := range []string{"ada@example.com", "bob@example.com", "cy@example.com"} {
		_, err := store.CreateMember(ctx, org.ID, email, "", "")
		require.NoError(t, err)
	}
	run := func(args ...string) (map[string]json.RawMessage, error) {
		var out bytes.Buffer
		if err := runAdmin(ctx, append(args, "--database-url", url), &out, io.Discard); err != nil {
			return nil, err
		}
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
		return got, nil
	}
	emails := func(got map[string]json.RawMessage) []string {
		var rows []struct{ Email string }
		require.NoError(t, json.Unmarshal(got["data"], &rows))
		var out []string
		for _, r := range rows {
			out = append(out, r.Email)
		}
		return out
	}

	for _, c := range adminCommands {
		if !strings.HasSuffix(c.name, " list") {
			continue
		}
		got, err := run(strings.Fields(c.name)...)
		require.NoError(t, err, c.name)
		assert.Len(t, got, 2, "%s: data and nextCursor, nothing else", c.name)
		assert.True(t, strings.HasPrefix(string(got["data"]), "["), c.name)
		assert.Equal(t, "null", string(got["nextCursor"]), c.name)
	}
	all, err := run("member", "list")
	require.NoError(t, err)
	assert.Equal(t, []string{"cy@example.com", "bob@example.com", "ada@example.com"}, emails(all), "newest first, as the API lists")
	first, err := run("member", "list", "--limit", "2")
	require.NoError(t, err)
	assert.Equal(t, []string{"cy@example.com", "bob@example.com"}, emails(first))
	var cursor string
	require.NoError(t, json.Unmarshal(first["nextCursor"], &cursor))
	rest, err := run("member", "list", "--limit", "2", "--cursor", cursor)
	require.NoError(t, err)
	assert.Equal(t, []string{"ada@example.com"}, emails(rest))
	assert.Equal(t, "null", string(rest["nextCursor"]))
	_, err = run("member", "list", "--limit", "0")
	assert.EqualError(t, err, "--limit must be an integer from 1 to 200")
	_, err = run("member", "list", "--cursor", cursor)
	assert.EqualError(t, err, "--cursor goes with --limit")
}

// TestCommandHelp: `assent <command> -h` lists the settings that command
// reads and no other, each described without its current value, and
// exits cleanly; every setting is some command's.
func TestCommandHelp(t *testing.T) {
	ctx := context.Background()
	t.Setenv("ASSENT_DATABASE_URL", "postgres://user:hunter2@db.example/assent")
	for name, want := range map[string]struct{ has, not []string }{
		"dev":      {has: []string{"--http-addr", "--temporal-port", "--reports-domain", "--database-url"}, not: []string{"--smtp-host", "--temporal-address", "--temporal-tls-ca"}},
		"serve":    {has: []string{"--http-addr", "--temporal-address", "--smtp-host", "--oidc-issuer"}, not: []string{"--temporal-port", "--temporal-ui-port"}},
		"worker":   {has: []string{"--temporal-address", "--smtp-host", "--base-url"}, not: []string{"--http-addr", "--oidc-issuer", "--reports-domain", "--temporal-port"}},
		"migrate":  {has: []string{"--database-url", "--data-dir", "--log-level"}, not: []string{"--http-addr", "--temporal-address", "--smtp-host", "--base-url"}},
		"temporal": {has: []string{"--temporal-port", "--temporal-ui-port", "--data-dir"}, not: []string{"--database-url", "--http-addr", "--temporal-address"}},
	} {
		var out, errs bytes.Buffer
		err := run(ctx, []string{name, "-h"}, &out, &errs)
		require.ErrorIs(t, err, flag.ErrHelp, name)
		help := errs.String()
		assert.Contains(t, help, "usage: assent "+name+" [flags]", name)
		for _, f := range want.has {
			assert.Regexp(t, `(?m)^  `+f+` \S+\n      \S`, help, "%s lists %s", name, f)
		}
		for _, f := range want.not {
			assert.NotContains(t, help, f+" ", "%s does not read %s", name, f)
		}
		assert.NotContains(t, help, "hunter2", "no current value is shown")
		err = run(ctx, []string{name, "--smtp-frob", "x"}, io.Discard, io.Discard)
		assert.EqualError(t, err, "flag provided but not defined: -smtp-frob", name)
	}

}
