package models

import (
	"context"
	"sync"
	"time"
)

// seenSettingsKey carries, in a request's context, the settings version of
// the organisation whose row the request read (SeenSettings).
type seenSettingsKey struct{}

type seenSettings struct {
	orgID   string
	version int64
}

// SeenSettings marks ctx as a request's that read org's row (its API key's
// read brings it): under it, the reads of org's settings a create makes
// (EnabledRules, ModelScreenOn, ActiveDelegations) answer from this
// process's copy when the copy is of that version or later, and read the
// database only when it is not. Triggers bump the version on every write
// to those settings (migration 202612150001_settings_version), so a copy
// is never older than the row the request read. Without it (the worker,
// the reconciler, the pages) they read the database.
func SeenSettings(ctx context.Context, org *Organization) context.Context {
	if org == nil {
		return ctx
	}
	return context.WithValue(ctx, seenSettingsKey{}, seenSettings{org.ID, org.SettingsVersion})
}

// FreshSettings is ctx with no settings version seen: the reads under it
// go to the database, for one that must see what was written after the
// request read its organisation's row (a delegation begun meanwhile,
// requests.Lifecycle's handOverBegun).
func FreshSettings(ctx context.Context) context.Context {
	return context.WithValue(ctx, seenSettingsKey{}, nil)
}

// settingsCache is the process's copy of what creates read of each
// organisation's settings.
type settingsCache struct {
	rules    versioned[[]Rule]
	screenOn versioned[bool]
	// delegations are those not over when read, whose delegates were
	// active: ActiveDelegations picks those holding at its time.
	delegations versioned[[]Delegation]
}

// versioned keeps one value per organisation with the settings version it
// is at least as recent as.
type versioned[T any] struct {
	mu sync.Mutex
	of map[string]versionedValue[T]
}

type versionedValue[T any] struct {
	version int64
	value   T
}

// get is orgID's value as of at least the version ctx has seen: the copy
// if it is that recent, else load's, kept. Without a version seen for
// orgID, load's.
func (v *versioned[T]) get(ctx context.Context, orgID string, load func() (T, error)) (T, error) {
	seen, ok := ctx.Value(seenSettingsKey{}).(seenSettings)
	if !ok || seen.orgID != orgID {
		return load()
	}
	v.mu.Lock()
	got, hit := v.of[orgID]
	v.mu.Unlock()
	if hit && got.version >= seen.version {
		return got.value, nil
	}
	value, err := load()
	if err != nil {
		return value, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if cur, ok := v.of[orgID]; !ok || cur.version < seen.version {
		if v.of == nil {
			v.of = map[string]versionedValue[T]{}
		}
		// Read after the request saw seen.version, so at least as recent.
		v.of[orgID] = versionedValue[T]{seen.version, value}
	}
	return value, nil
}

// holding are the delegations of ds holding at t, by delegator.
func holding(ds []Delegation, t time.Time) map[string]Delegation {
	out := make(map[string]Delegation, len(ds))
	for _, d := range ds {
		if !d.From.After(t) && d.Until.After(t) {
			out[d.DelegatorID] = d
		}
	}
	return out
}
