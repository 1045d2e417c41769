package api_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
)

// TestInboxEveryKind: without kind the inbox lists every request waiting
// on the person, newest first; kind narrows it.
func TestInboxEveryKind(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		s.reviewable(t)
		rev := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Check Q3","reportId":"q3","reviewers":["Finance"]}`, nil)
		require.Equal(t, 201, rev.status, string(rev.body))
		time.Sleep(20 * time.Millisecond)
		col := s.do(t, "POST", "/api/v1/collections", s.agentKey, `{"title":"t","questions":[{"prompt":"p","kind":"text"}],"respondents":["Finance"]}`, nil)
		require.Equal(t, 201, col.status, string(col.body))
		time.Sleep(20 * time.Millisecond)
		apr := s.create(t, s.agentKey, `{"title":"Refund","approvers":["Finance"]}`)

		all := s.do(t, "GET", "/api/v1/inbox", s.cyToken, "", nil)
		require.Equal(t, 200, all.status, string(all.body))
		items := all.decoded["data"].([]any)
		require.Len(t, items, 3, "an approval, a request for information and a review wait on Cy")
		want := []struct{ kind, id string }{{"approval", apr["id"].(string)}, {"collection", col.decoded["id"].(string)}, {"review", rev.decoded["id"].(string)}}
		for i, w := range want {
			item := items[i].(map[string]any)
			assert.Equal(t, w.kind, item["kind"], "newest first")
			assert.Equal(t, w.id, item[w.kind].(map[string]any)["id"])
		}
		assert.Nil(t, all.decoded["nextCursor"])

		two := s.do(t, "GET", "/api/v1/inbox?limit=2", s.cyToken, "", nil)
		require.Equal(t, 200, two.status, string(two.body))
		require.Len(t, two.decoded["data"], 2, "at most limit")
		for i, w := range want[:2] {
			item := two.decoded["data"].([]any)[i].(map[string]any)
			assert.Equal(t, w.id, item[w.kind].(map[string]any)["id"], "the newest two of every kind, not of each")
		}
		one := s.do(t, "GET", "/api/v1/inbox?limit=1", s.cyToken, "", nil)
		require.Equal(t, 200, one.status, string(one.body))
		require.Len(t, one.decoded["data"], 1)
		assert.Equal(t, "approval", one.decoded["data"].([]any)[0].(map[string]any)["kind"])

		for _, w := range want {
			one := s.do(t, "GET", "/api/v1/inbox?kind="+w.kind, s.cyToken, "", nil)
			require.Equal(t, 200, one.status, string(one.body))
			require.Len(t, one.decoded["data"], 1, w.kind)
			assert.Equal(t, w.id, one.decoded["data"].([]any)[0].(map[string]any)["id"], "kind narrows it to its own list")
		}

		bad := s.do(t, "GET", "/api/v1/inbox?cursor=abc", s.cyToken, "", nil)
		assert.Equal(t, 400, bad.status)
		assert.Equal(t, "cursor", errField(bad, "field"))
		assert.Empty(t, s.do(t, "GET", "/api/v1/inbox", s.memberToken, "", nil).decoded["data"], "nothing waits on Ada")
		assert.Equal(t, 403, s.do(t, "GET", "/api/v1/inbox", s.agentKey, "", nil).status, "an inbox belongs to a person")
	})
}

// TestInboxOrders: order=attention lists the most severe risk first, then
// the earliest due, across kinds and within one; order=newest the newest
// first; only kind=approval newest first takes a cursor.
func TestInboxOrders(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		at := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339) }
		low := s.create(t, s.agentKey, `{"title":"low, soon","risk":"low","approvers":["Finance"],"expiresAt":"`+at(1*time.Hour)+`"}`)
		time.Sleep(20 * time.Millisecond)
		col := s.do(t, "POST", "/api/v1/collections", s.agentKey, `{"title":"due sooner","questions":[{"prompt":"p","kind":"text"}],"respondents":["Finance"],"expiresAt":"`+at(2*time.Hour)+`","dueAt":"`+at(30*time.Minute)+`"}`, nil)
		require.Equal(t, 201, col.status, string(col.body))
		time.Sleep(20 * time.Millisecond)
		critical := s.create(t, s.agentKey, `{"title":"critical, late","risk":"critical","approvers":["Finance"],"expiresAt":"`+at(24*time.Hour)+`"}`)
		time.Sleep(20 * time.Millisecond)
		high := s.create(t, s.agentKey, `{"title":"high","risk":"high","approvers":["Finance"],"expiresAt":"`+at(12*time.Hour)+`"}`)

		ids := func(path string) []string {
			t.Helper()
			r := s.do(t, "GET", path, s.cyToken, "", nil)
			require.Equal(t, 200, r.status, string(r.body))
			var out []string
			for _, it := range r.decoded["data"].([]any) {
				item := it.(map[string]any)
				if kind, ok := item["kind"].(string); ok {
					item = item[kind].(map[string]any)
				}
				out = append(out, item["id"].(string))
			}
			return out
		}
		colID := col.decoded["id"].(string)
		assert.Equal(t, []string{critical["id"].(string), high["id"].(string), colID, low["id"].(string)}, ids("/api/v1/inbox?order=attention"),
			"the most severe risk first; a request for information ranks as medium")
		assert.Equal(t, []string{critical["id"].(string), high["id"].(string)}, ids("/api/v1/inbox?order=attention&limit=2"), "the first two of every kind")
		assert.Equal(t, []string{high["id"].(string), critical["id"].(string), colID, low["id"].(string)}, ids("/api/v1/inbox?order=newest"))
		assert.Equal(t, ids("/api/v1/inbox?order=newest"), ids("/api/v1/inbox"), "newest first without order")
		assert.Equal(t, []string{critical["id"].(string), high["id"].(string), low["id"].(string)}, ids("/api/v1/inbox?kind=approval&order=attention"))
		assert.Equal(t, []string{high["id"].(string), critical["id"].(string), low["id"].(string)}, ids("/api/v1/inbox?kind=approval"))

		for path, field := range map[string]string{
			"/api/v1/inbox?order=urgent":                           "order",
			"/api/v1/inbox?kind=approval&order=attention&cursor=x": "cursor",
			"/api/v1/inbox?kind=collection&cursor=x":               "cursor",
			"/api/v1/inbox?kind=review&cursor=x":                   "cursor",
		} {
			bad := s.do(t, "GET", path, s.cyToken, "", nil)
			assert.Equal(t, 400, bad.status, path)
			assert.Equal(t, field, errField(bad, "field"), path)
		}
	})
}
