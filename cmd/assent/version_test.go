package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `assent version` prints one line, `--version` the same, `--json` an
// object; a test build knows no version (internal/buildinfo's tests
// build one with -ldflags -X).
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var line string
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errs bytes.Buffer
		require.NoError(t, run(ctx, args, &out, &errs), args)
		assert.Regexp(t, `^assent \(devel\) \(go1\.\d+[^)]*\)\n$`, out.String(), args)
		assert.Empty(t, errs.String())
		if line != "" {
			assert.Equal(t, line, out.String())
		}
		line = out.String()
	}

	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"version", "--json"}, &out, &bytes.Buffer{}))
	var got map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	assert.Equal(t, "(devel)", got["version"])
	assert.Regexp(t, `^go1\.`, got["goVersion"])

	assert.EqualError(t, run(ctx, []string{"version", "extra"}, &bytes.Buffer{}, &bytes.Buffer{}), `assent version takes only flags; got "extra"`)
	var help bytes.Buffer
	require.NoError(t, run(ctx, []string{"help"}, &help, &bytes.Buffer{}))
	assert.Contains(t, help.String(), "\n  version ")
}
