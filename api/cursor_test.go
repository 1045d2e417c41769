package api_test

import (
	"context"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestEveryListRefusesACursorItDidNotIssue: every operation the contract
// pages with a cursor refuses one this service did not issue (not
// base64url, or not an id) with 400 naming cursor, rather than reading it
// as the first page. The operations come from the contract, so a new
// list is held to it too.
func TestEveryListRefusesACursorItDidNotIssue(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		hook, err := s.store.CreateWebhookEndpoint(context.Background(), s.org.ID,
			models.NewWebhookEndpoint{URL: "https://hooks.example.com/x", Format: models.FormatJSON, Enabled: true, Secret: "whsec_test"})
		require.NoError(t, err)
		s.onPlan(t, models.PlanTeam) // organisation-wide analytics
		// A cursor of the right shape for a list that is none of these.
		elsewhere := base64.RawURLEncoding.EncodeToString([]byte(ids.New(ids.Organization)))
		paged := 0
		for path, item := range openAPIContract(t).doc.Paths.Map() {
			op := item.Get
			if op == nil || op.Parameters.GetByInAndName("query", "cursor") == nil {
				continue
			}
			paged++
			// The credential the operation takes: an admin key, else a
			// member token where only a person may call it, else an
			// agent key.
			key, schemes := s.agentKey, map[string]bool{}
			for _, req := range *op.Security {
				for name := range req {
					schemes[name] = true
				}
			}
			switch {
			case schemes["adminKey"] && !schemes["memberToken"] && !schemes["agentKey"]:
				key = s.adminKey
			case !schemes["agentKey"]:
				key = s.cyToken
			}
			path = strings.ReplaceAll(path, "{id}", hook.ID)
			if path == "/api/v1/inbox" {
				path += "?kind=approval&"
			} else {
				path += "?"
			}
			for _, cursor := range []string{"%%%", "not base64!", "aGVsbG8" /* "hello" */, "YXByXzE" /* "apr_1" */, elsewhere} {
				r := s.do(t, "GET", path+"cursor="+url.QueryEscape(cursor), key, "", nil)
				if assert.Equal(t, 400, r.status, "%s with cursor %q: %s", path, cursor, r.body) {
					assert.Equal(t, "cursor", errField(r, "field"), path)
					assert.Equal(t, "invalid_request", errField(r, "code"), path)
				}
			}
		}
		assert.GreaterOrEqual(t, paged, 17, "the lists the contract pages")
	})
}
