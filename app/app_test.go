package app_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/wiring"
	"github.com/assent-hq/assent/models"
)

// TestBuildSetsEveryService: Build leaves no service out, even without
// Temporal or a blob store, nor does what it hands each adapter.
func TestBuildSetsEveryService(t *testing.T) {
	store := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	svc := app.Build(app.Deps{Store: store})
	assert.NotPanics(t, func() { wiring.Require("test", svc) })
	assert.NotPanics(t, func() { wiring.Require("api", svc.API()) })
	assert.NotPanics(t, func() { wiring.Require("web", svc.Web()) })
}
