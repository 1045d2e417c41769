package api_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
)

// TestDatasets: a dataset is stored byte for byte and read back as sent;
// names, size, count and JSON are checked; another organisation's report
// is not found; rollback leaves data alone.
func TestDatasets(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		rep := f.publish(t, `{"title":"Dash","slug":"team/dash","content":`+jsonString(html("d"))+`}`)
		base := "/api/v1/reports/team/dash/data/"
		sent := "{ \"kpis\": [ {\"value\": 12345678901234567890, \"label\": \"x\"} ],\n  \"z\":1 }"
		put := f.do(t, "PUT", base+"metrics", f.agentKey, sent, nil)
		require.Equal(t, 201, put.status, string(put.body))
		assert.EqualValues(t, len(sent), put.decoded["bytes"])
		again := f.do(t, "PUT", base+"metrics", f.agentKey, sent, nil)
		assert.Equal(t, 200, again.status, "replaced")
		got := f.do(t, "GET", base+"metrics", f.agentKey, "", nil)
		require.Equal(t, 200, got.status)
		assert.Equal(t, sent, string(got.body), "byte for byte")
		assert.Equal(t, "no-store", got.header.Get("Cache-Control"))
		assert.Equal(t, "application/json", got.header.Get("Content-Type"))
		list := f.do(t, "GET", "/api/v1/reports/"+rep["id"].(string)+"/data", f.agentKey, "", nil)
		require.Equal(t, 200, list.status)
		require.Len(t, list.decoded["data"], 1)

		cases := []struct {
			name, path, body string
			status           int
			code             string
		}{
			{"bad name", base + "Metrics", `{}`, 400, "invalid_request"},
			{"long name", base + strings.Repeat("a", 65), `{}`, 400, "invalid_request"},
			{"not JSON", base + "x", `{"a":`, 400, "invalid_request"},
			{"too large", base + "big", `"` + strings.Repeat("a", 5<<20) + `"`, 413, "payload_too_large"},
			{"no report", "/api/v1/reports/nope/data/x", `{}`, 404, "not_found"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := f.do(t, "PUT", c.path, f.agentKey, c.body, nil)
				require.Equal(t, c.status, r.status, string(r.body))
				assert.Equal(t, c.code, errField(r, "code"))
			})
		}
		assert.Equal(t, 404, f.do(t, "GET", base+"metrics", f.otherAgent, "", nil).status)
		assert.Equal(t, 404, f.do(t, "PUT", base+"metrics", f.otherAgent, `{}`, nil).status)
		assert.Equal(t, 403, f.do(t, "PUT", base+"metrics", f.readOnlyKey, `{}`, nil).status)

		for i := 1; i < 25; i++ {
			require.Equal(t, 201, f.do(t, "PUT", base+fmt.Sprintf("d%02d", i), f.agentKey, `[]`, nil).status)
		}
		full := f.do(t, "PUT", base+"one-more", f.agentKey, `[]`, nil)
		assert.Equal(t, 409, full.status)
		assert.Equal(t, "limit_reached", errField(full, "code"))
		assert.Equal(t, 200, f.do(t, "PUT", base+"d01", f.agentKey, `[1]`, nil).status, "replacing one at the limit")

		v2 := f.do(t, "POST", "/api/v1/reports/team/dash/versions", f.agentKey, `{"content":"<h1>v2</h1>"}`, nil)
		require.Equal(t, 201, v2.status)
		require.Equal(t, 200, f.do(t, "POST", "/api/v1/reports/team/dash/rollback", f.agentKey, `{"version":1}`, nil).status)
		assert.Equal(t, "[1]", string(f.do(t, "GET", base+"d01", f.agentKey, "", nil).body), "a rollback restores markup, not data")

		require.Equal(t, 204, f.do(t, "DELETE", base+"d01", f.agentKey, "", nil).status)
		assert.Equal(t, 404, f.do(t, "GET", base+"d01", f.agentKey, "", nil).status)
		assert.Equal(t, 404, f.do(t, "DELETE", base+"d01", f.agentKey, "", nil).status)

		// One place left, four new datasets at once: one takes it.
		statuses := make([]int, 4)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() { statuses[i] = f.do(t, "PUT", base+fmt.Sprintf("new%d", i), f.agentKey, `[]`, nil).status })
		}
		wg.Wait()
		assert.ElementsMatch(t, []int{201, 409, 409, 409}, statuses, "the report's lock lets one new dataset take the last place")
	})
}
