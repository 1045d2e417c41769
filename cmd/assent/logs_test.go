package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/logging"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/web"
)

// secretRoutes are the routes whose address carries a bearer secret, and
// what it is. Sign-in links and OpenID Connect's code carry theirs in the
// query, a report host's reader ticket too (/_assent/enter?ticket=).
var secretRoutes = map[string]string{
	"PUT /uploads/:ticket":            "an upload's ticket",
	"GET /approvals/:id/link/:token":  "an emailed decision link's token",
	"POST /approvals/:id/link/:token": "an emailed decision link's token",
	"GET /signin/link":                "a sign-in link's token (query)",
	"POST /signin/link":               "a sign-in link's token (form)",
}

// TestNoRouteLogsItsAddress walks every route of the handler serve and
// dev build (the API, the pages, /mcp, dev's mailbox) and a report
// host's sign-in, each parameter and the query's secrets filled with a
// value of its own, and finds none of them in the logs: an upload's
// ticket, a decision link's token, a sign-in link's token or a reader
// ticket read from the logs opens nothing.
func TestNoRouteLogsItsAddress(t *testing.T) {
	t.Parallel()
	logged := &testenv.Buffer{}
	handler, engine, wait := buildHandler(t, "dev", logging.New(logged, slog.LevelDebug))

	n := 0
	secret := func() string { n++; return fmt.Sprintf("s3cr3t%04dvalue", n) }
	send := func(method, host, target string) {
		req := httptest.NewRequest(method, target, nil)
		req.Host = host
		handler.ServeHTTP(httptest.NewRecorder(), req)
	}
	param := regexp.MustCompile(`[:*][A-Za-z0-9]+`)
	routes := map[string]bool{}
	for _, rt := range engine.Routes() {
		routes[rt.Method+" "+rt.Path] = true
		path := param.ReplaceAllStringFunc(rt.Path, func(string) string { return secret() })
		query := "?token=" + secret() + "&ticket=" + secret() + "&code=" + secret() + "&state=" + secret()
		send(rt.Method, "127.0.0.1:8080", path+query)
	}
	// A path no route serves, holding what could be a mistyped link.
	send("GET", "127.0.0.1:8080", "/approvals/apr_1/link/"+secret()+"/")
	// A report host's sign-in trades its reader ticket.
	send("GET", "q3.localhost:8080", "/_assent/enter?ticket="+secret()+"&next=%2F")
	wait()

	for route, what := range secretRoutes {
		assert.True(t, routes[route], "%s (%s) is no longer served: keep secretRoutes true", route, what)
	}
	require.Greater(t, len(routes), 150, "every route")
	out := logged.String()
	assert.Contains(t, out, `"route":"/uploads/:ticket"`, "requests are logged by route")
	for i := 1; i <= n; i++ {
		v := fmt.Sprintf("s3cr3t%04dvalue", i)
		if strings.Contains(out, v) {
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, v) {
					t.Errorf("a value sent in a request's address is logged: %s", line)
				}
			}
		}
	}
	assert.NotContains(t, out, `"status":500`, "no route fails on values it does not know")
}

// buildHandler is the handler command ("serve" or "dev") builds, over a
// fresh SQLite database and without Temporal, with the settings in the
// environment, and its engine; wait waits for what its pages do after
// answering.
func buildHandler(t *testing.T, command string, log *slog.Logger) (http.Handler, *gin.Engine, func()) {
	t.Helper()
	cfg, _, err := parse(command, []string{"--data-dir", t.TempDir()}, io.Discard)
	require.NoError(t, err)
	r, err := open(context.Background(), cfg, log, needs{keys: config.KeyOrNewInDataDir, migrate: true, publishing: true})
	require.NoError(t, err)
	t.Cleanup(r.Close)
	mailbox := mail.NewMailbox(0)
	r.mailer = mailbox
	const baseURL = "http://127.0.0.1:8080"
	svc := r.services(log, baseURL, nil, "")
	var engine *gin.Engine
	mount := func(e *gin.Engine) { engine = e }
	var dev *web.DevSettings
	if command == "dev" {
		mount = func(e *gin.Engine) { engine = e; mountMailbox(mailbox)(e) }
		dev = &web.DevSettings{Mailbox: devMailPath, People: demoEmails()}
	}
	handler, pages, err := r.handler(cfg, log, baseURL, svc, mount, dev)
	require.NoError(t, err)
	return handler, engine, pages.Wait
}
