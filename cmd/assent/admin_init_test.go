package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// `assent admin init` makes a new instance usable in one command, once:
// a mistake leaves nothing behind, and a second run makes nothing.
func TestAdminInit(t *testing.T) {
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			url, db := adminDB(t, kind)
			store := models.NewStore(db, testenv.Keys())
			t.Setenv(secretkey.Env, testenv.SecretKey)
			run := func(args ...string) (string, error) {
				var out bytes.Buffer
				err := runAdmin(ctx, append(append([]string{"init"}, args...), "--database-url", url), &out, &bytes.Buffer{})
				return out.String(), err
			}

			out, err := run("--name", "Acme", "--owner-email", "not an address")
			require.Error(t, err)
			assert.Contains(t, out, `"email"`, "the refusal names the field")
			_, err = run("--name", "Acme")
			assert.ErrorContains(t, err, "--owner-email is required")
			orgs, err := store.ListOrganizations(ctx)
			require.NoError(t, err)
			assert.Empty(t, orgs, "a refused init makes nothing")

			out, err = run("--name", "Acme", "--owner-email", "ada@acme.example", "--owner-name", "Ada", "--plan", "team")
			require.NoError(t, err)
			var got struct {
				Organization                   struct{ ID, Name, Plan string }
				Owner                          struct{ ID, Email, Role string }
				OwnerToken, AgentKey, AdminKey string
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got), out)
			assert.Equal(t, "Acme", got.Organization.Name)
			assert.Equal(t, "team", got.Organization.Plan)
			assert.Equal(t, "ada@acme.example", got.Owner.Email)
			assert.Equal(t, models.RoleOwner, got.Owner.Role)
			for secret, prefix := range map[string]string{got.AgentKey: "asnt_agent_", got.AdminKey: "asnt_admin_", got.OwnerToken: "asnt_"} {
				assert.True(t, strings.HasPrefix(secret, prefix), "%q starts with %s", secret, prefix)
			}
			for secret, kind := range map[string]string{got.AgentKey: models.KeyAgent, got.AdminKey: models.KeyAdmin} {
				actor, err := accounts.New(store).Authenticate(ctx, secret)
				require.NoError(t, err)
				assert.Equal(t, got.Organization.ID, actor.Organization.ID)
				assert.Equal(t, kind, actor.Key.Kind)
			}
			owner, err := accounts.New(store).Authenticate(ctx, got.OwnerToken)
			require.NoError(t, err)
			assert.Equal(t, got.Owner.ID, owner.Member().ID, "the owner's token acts as the owner")

			_, err = run("--name", "Acme again", "--owner-email", "bob@acme.example")
			assert.ErrorContains(t, err, "already holds 1 organisation")
			orgs, err = store.ListOrganizations(ctx)
			require.NoError(t, err)
			assert.Len(t, orgs, 1)
		})
	}
}
