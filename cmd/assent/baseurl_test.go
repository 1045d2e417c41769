package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/testenv"
)

// serve and worker refuse to start without their public address, which
// decision tokens name as their issuer, rather than approve requests
// with no token; the error is the one line printed, naming the setting.
func TestServeAndWorkerRequireBaseURL(t *testing.T) {
	for _, c := range []struct{ base, says string }{
		{"", "ASSENT_BASE_URL (or --base-url) is required"},
		{"assent.example.com", `ASSENT_BASE_URL must be an absolute http(s) address with no query, such as https://assent.example.com; got "assent.example.com"`},
		{"https://assent.example.com/?x=1", "ASSENT_BASE_URL must be an absolute"},
	} {
		t.Setenv("ASSENT_BASE_URL", c.base)
		for _, cmd := range [][]string{{"worker"}, {"serve", "--http-addr", "127.0.0.1:0"}} {
			var stderr testenv.Buffer
			err := run(context.Background(), append(cmd, "--data-dir", t.TempDir()), &testenv.Buffer{}, &stderr)
			if assert.Error(t, err, "%s with %q", cmd[0], c.base) {
				assert.Contains(t, err.Error(), c.says, cmd[0])
			}
			assert.Empty(t, stderr.String(), "%s logs nothing before refusing", cmd[0])
		}
	}
}
