package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/config"
)

// TestBanner: assent dev's banner names the agent key, the admin key and
// the API reference, each on its own line.
func TestBanner(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	printBanner(&out, &config.Config{DataDir: ".assent"}, "http://127.0.0.1:8080", "",
		&bootstrap{AgentKey: "asnt_agent_x", AdminKey: "asnt_admin_y"}, true)
	banner := out.String()
	assert.Regexp(t, `(?m)^  Agent key\s+asnt_agent_x$`, banner)
	assert.Regexp(t, `(?m)^  Admin key\s+asnt_admin_y$`, banner)
	assert.Regexp(t, `(?m)^  API reference\s+http://127\.0\.0\.1:8080/api/docs$`, banner)
	assert.Regexp(t, apiLine, banner)
}
