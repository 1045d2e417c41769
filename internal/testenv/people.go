package testenv

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// People is one test's organisation: Ada owns it, Bob and Cy are members,
// Dee is an inactive member and Gus a guest; Agent acts with an agent key.
type People struct {
	*models.Organization
	Ada, Bob, Cy, Dee, Gus *models.Person
	Agent                  models.Actor
}

// NewOrg makes a fresh organisation, Acme, in store.
func NewOrg(t testing.TB, store *models.Store) *models.Organization {
	t.Helper()
	org, err := store.CreateOrganization(context.Background(), "Acme", "")
	require.NoError(t, err)
	return org
}

// NewPeople makes a fresh organisation and its people in store; agentName
// names the agent's key.
func NewPeople(t testing.TB, store *models.Store, agentName string) *People {
	t.Helper()
	ctx := context.Background()
	o, err := store.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	p := &People{Organization: o}
	member := func(email, name, role string) *models.Person {
		m, err := store.CreateMember(ctx, o.ID, email, name, role)
		require.NoError(t, err)
		return &models.Person{Organization: o, Member: m}
	}
	p.Ada = member("ada@example.com", "Ada", models.RoleOwner)
	p.Bob = member("bob@example.com", "Bob", models.RoleMember)
	p.Cy = member("cy@example.com", "Cy", models.RoleMember)
	p.Dee = member("dee@example.com", "Dee", models.RoleMember)
	p.Dee.Member = ChangeMember(t, store, o.ID, p.Dee.ID(), func(m *models.Member) { m.Active = false })
	g, _, err := store.CreateGuest(ctx, o.ID, "gus@partner.example", "Gus")
	require.NoError(t, err)
	p.Gus = &models.Person{Organization: o, Guest: g}
	key, _, err := store.CreateKey(ctx, o.ID, agentName, models.KeyAgent, nil)
	require.NoError(t, err)
	p.Agent = models.KeyActor(o, key, nil)
	return p
}

// ChangeMember changes a member to set a test's stage, as the store
// writes it and without the administration's rules (admin.UpdateMember's:
// who may, the last owner), and returns it.
func ChangeMember(t testing.TB, store *models.Store, orgID, id string, change func(*models.Member)) *models.Member {
	t.Helper()
	var m *models.Member
	require.NoError(t, store.Tx(context.Background(), func(ctx context.Context) error {
		var err error
		if m, err = store.LockMember(ctx, orgID, id); err != nil {
			return err
		}
		change(m)
		return store.SaveMember(ctx, m)
	}))
	return m
}

// Refused asserts that err is the API error code naming field, and
// returns it.
func Refused(t testing.TB, err error, code, field string) *apperr.Error {
	t.Helper()
	e, ok := apperr.As(err)
	require.True(t, ok, "want %s on %s, got %v", code, field, err)
	assert.Equal(t, code, e.Code, e.Message)
	assert.Equal(t, field, e.Field, e.Message)
	return e
}

// CreateTeam is a test's team in store, its members named by id or email
// as the admin service takes them; a reference to nobody is an error.
func CreateTeam(store *models.Store, ctx context.Context, orgID, name, kind string, refs []string) (*models.Team, error) {
	members, unknown, err := store.FindMembers(ctx, orgID, refs)
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("no members %v", unknown)
	}
	return store.CreateTeam(ctx, orgID, name, kind, members)
}
