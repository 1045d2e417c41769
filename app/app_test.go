package app_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestBuildSetsEveryService: Build leaves no service out, even without
// Temporal or a blob store, and Require names the one a hand-made
// Services lacks.
func TestBuildSetsEveryService(t *testing.T) {
	store := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	svc := app.Build(app.Deps{Store: store})
	assert.NotPanics(t, func() { svc.Require("test") })

	lacking := *svc
	lacking.Reviews = nil
	assert.PanicsWithValue(t, "test: the services lack Reviews; build them with app.Build", func() { lacking.Require("test") })
	assert.PanicsWithValue(t, "test: no services; build them with app.Build", func() { (*app.Services)(nil).Require("test") })
}
