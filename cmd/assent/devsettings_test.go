package main

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The dev-only delivery settings never reach a production process.
func TestServeAndWorkerRefuseDevSettings(t *testing.T) {
	for _, env := range []struct{ name, value string }{
		{"ASSENT_DEV_ALLOW_LOOPBACK", "1"},
		{"ASSENT_DEV_RETRY_UNIT", "1s"},
	} {
		t.Run(env.name, func(t *testing.T) {
			t.Setenv(env.name, env.value)
			for _, cmd := range []string{"serve", "worker"} {
				err := run(context.Background(), []string{cmd}, io.Discard, io.Discard)
				if assert.Error(t, err, cmd) {
					assert.Contains(t, err.Error(), "assent dev", cmd)
				}
			}
		})
	}
	t.Setenv("ASSENT_DEV_RETRY_UNIT", "soon")
	assert.ErrorContains(t, run(context.Background(), []string{"dev"}, io.Discard, io.Discard), "ASSENT_DEV_RETRY_UNIT")
}

// The embedded Temporal UI only reads in `assent temporal` unless the
// operator turns writes on; `assent dev` keeps them unless turned off.
func TestEmbeddedUIWriteActions(t *testing.T) {
	for _, c := range []struct {
		env        string
		dev, alone bool
	}{{"", true, false}, {"true", true, true}, {"false", false, false}} {
		t.Setenv("ASSENT_TEMPORAL_UI_WRITE_ACTIONS", c.env)
		cfg, log, err := parse("temporal", nil, io.Discard)
		require.NoError(t, err)
		assert.Equal(t, c.dev, embeddedTemporal(cfg, log, true).UIWriteActions, "dev, %q", c.env)
		assert.Equal(t, c.alone, embeddedTemporal(cfg, log, false).UIWriteActions, "temporal, %q", c.env)
	}
	t.Setenv("ASSENT_TEMPORAL_UI_WRITE_ACTIONS", "sometimes")
	_, _, err := parse("temporal", nil, io.Discard)
	assert.ErrorContains(t, err, "ASSENT_TEMPORAL_UI_WRITE_ACTIONS")
}
