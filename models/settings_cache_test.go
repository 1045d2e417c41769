package models_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestSettingsReadFromTheProcesssCopy: under SeenSettings a create's
// reads of its organisation's settings (rules, the model screen's switch,
// delegations) read the database once per settings version, and every
// write to them (and to a member's standing) moves the version, so a
// request that saw the write never reads the copy from before it.
func TestSettingsReadFromTheProcesssCopy(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		o := testenv.NewPeople(t, s, "agent")
		var reads atomic.Int32
		require.NoError(t, db.Callback().Query().After("gorm:query").Register("count_reads", func(d *gorm.DB) {
			if !d.DryRun { // not a subquery being built
				reads.Add(1)
			}
		}))
		org := func() *models.Organization {
			got, err := s.GetOrganization(ctx, o.ID)
			require.NoError(t, err)
			return got
		}
		// What a create reads, under the version the request saw; the
		// database reads it cost.
		read := func(seen *models.Organization) (rules int, screen bool, away int, cost int32) {
			before := reads.Load()
			c := models.SeenSettings(ctx, seen)
			rs, err := s.EnabledRules(c, o.ID)
			require.NoError(t, err)
			screen, err = s.ModelScreenOn(c, o.ID)
			require.NoError(t, err)
			ds, err := s.ActiveDelegations(c, o.ID, models.Now())
			require.NoError(t, err)
			return len(rs), screen, len(ds), reads.Load() - before
		}
		bumped := func(before *models.Organization, what string) *models.Organization {
			after := org()
			assert.Greater(t, after.SettingsVersion, before.SettingsVersion, "%s moves the settings version", what)
			return after
		}

		v0 := org()
		rules, screen, away, cost := read(v0)
		assert.Equal(t, []any{0, false, 0}, []any{rules, screen, away})
		assert.Equal(t, int32(3), cost, "the first read of a version reads the database")
		_, _, _, cost = read(v0)
		assert.Zero(t, cost, "the same version: the copy")
		_, _, _, cost = read(nil)
		assert.Equal(t, int32(3), cost, "no version seen (the worker): the database")
		before := reads.Load()
		_, err := s.ActiveDelegations(models.FreshSettings(models.SeenSettings(ctx, v0)), o.ID, models.Now())
		require.NoError(t, err)
		assert.Equal(t, int32(1), reads.Load()-before, "a read that must be fresh: the database")

		rule := &models.Rule{OrganizationID: o.ID, Name: "two", Kind: "approval", RequiredApprovals: 2, Enabled: true}
		require.NoError(t, s.CreateRule(ctx, rule))
		v1 := bumped(v0, "a new rule")
		_, _, _, cost = read(v0)
		assert.Zero(t, cost, "a request that saw only the older version may read the copy")
		rules, _, _, cost = read(v1)
		assert.Equal(t, 1, rules, "a request that saw the rule's write reads it")
		assert.Equal(t, int32(3), cost)

		_, err = s.SetRuleEnabled(ctx, o.ID, rule.ID, false)
		require.NoError(t, err)
		v2 := bumped(v1, "a rule switched off")
		rules, _, _, _ = read(v2)
		assert.Zero(t, rules)

		_, err = s.PutModelScreen(ctx, o.ID, "admin", models.ModelScreenChange{URL: "https://screen.example/v1", Model: "m"})
		require.NoError(t, err)
		v3 := bumped(v2, "the model screen switched on")
		_, screen, _, _ = read(v3)
		assert.True(t, screen)

		require.NoError(t, s.Tx(ctx, func(ctx context.Context) error {
			return s.ReplaceDelegation(ctx, &models.Delegation{OrganizationID: o.ID, DelegatorID: o.Bob.ID(), DelegateID: o.Cy.ID(),
				From: models.Now().Add(-time.Minute), Until: models.Now().Add(time.Hour)})
		}))
		v4 := bumped(v3, "a delegation")
		_, _, away, _ = read(v4)
		assert.Equal(t, 1, away)

		testenv.ChangeMember(t, s, o.ID, o.Cy.ID(), func(m *models.Member) { m.Active = false })
		v5 := bumped(v4, "the delegate deactivated")
		_, _, away, _ = read(v5)
		assert.Zero(t, away, "a delegation to an inactive member does not hold")

		_, err = s.CreateMember(ctx, o.ID, "new@example.com", "New", models.RoleMember)
		require.NoError(t, err)
		assert.Equal(t, v5.SettingsVersion, org().SettingsVersion, "a new member changes none of it")
	})
}
