package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestDemoOrganizationIsOnTheTeamPlan: `assent dev` shows what the team
// plan adds (readership analytics), while a new organisation starts on
// free.
func TestDemoOrganizationIsOnTheTeamPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	svc := admin.New(store)
	b, created, err := ensureBootstrap(ctx, store, svc, t.TempDir(), "http://127.0.0.1:8080")
	require.NoError(t, err)
	require.True(t, created)
	demo, err := store.GetOrganization(ctx, b.OrganizationID)
	require.NoError(t, err)
	assert.Equal(t, models.PlanTeam, demo.Plan)

	fresh, err := svc.CreateOrganization(ctx, admin.NewOrganization{Name: "Acme"})
	require.NoError(t, err)
	assert.Equal(t, models.PlanFree, fresh.Plan)
}
