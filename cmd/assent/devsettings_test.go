package main

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
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
