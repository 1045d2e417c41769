package wiring_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/wiring"
)

type service struct{}

type services struct {
	First, Second *service
	Kinds         []*service
	Name          string
}

func TestRequireNamesTheServiceMissing(t *testing.T) {
	full := services{First: &service{}, Second: &service{}, Kinds: []*service{{}}}
	assert.NotPanics(t, func() { wiring.Require("test", full) })
	assert.NotPanics(t, func() { wiring.Require("test", &full) })
	lacking := full
	lacking.Second = nil
	assert.PanicsWithValue(t, "test: the services lack Second; build them with app.Build", func() { wiring.Require("test", lacking) })
	lacking = full
	lacking.Kinds = []*service{{}, nil}
	assert.PanicsWithValue(t, "test: the services lack Kinds[1]; build them with app.Build", func() { wiring.Require("test", lacking) })
	var none *service
	withNil := struct{ Kinds []any }{[]any{none}}
	assert.PanicsWithValue(t, "test: the services lack Kinds[0]; build them with app.Build", func() { wiring.Require("test", withNil) },
		"an interface holding a nil pointer")
	lacking = full
	lacking.Kinds = nil
	assert.PanicsWithValue(t, "test: the services lack Kinds; build them with app.Build", func() { wiring.Require("test", lacking) })
	assert.PanicsWithValue(t, "test: no services; build them with app.Build", func() { wiring.Require("test", (*services)(nil)) })
}
