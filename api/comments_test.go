package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
)

const q3Page = `<h1>Q3</h1><p>Revenue rose 4% in EMEA, mostly in <b>Q3</b>. Costs fell.</p>
<p>Headcount grew. Headcount grew again.</p><script>var hidden = "Revenue rose 4% in EMEA";</script>`

func (s *stack) comment(t *testing.T, key, report, body string) map[string]any {
	t.Helper()
	r := s.do(t, "POST", "/api/v1/reports/"+report+"/comments", key, body, nil)
	require.Equal(t, 201, r.status, string(r.body))
	return r.decoded
}

func TestCommentValidationAndQuotes(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		s.publish(t, `{"title":"Q3","slug":"q3","content":`+jsonString(html(q3Page))+`,"audience":["Finance"]}`)
		gif := base64.StdEncoding.EncodeToString([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
		big := base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 5<<20)...))
		cases := []struct {
			name, key, body string
			status          int
			code, field     string
		}{
			{"no body", s.cyToken, `{"quote":"Costs fell."}`, 400, "invalid_request", "body"},
			{"blank body", s.cyToken, `{"body":"  "}`, 400, "invalid_request", "body"},
			{"unknown field", s.cyToken, `{"body":"x","colour":"red"}`, 400, "invalid_request", "colour"},
			{"absent quote", s.cyToken, `{"body":"x","quote":"Revenue fell"}`, 404, "quote_not_found", "quote"},
			{"quote only in a script", s.cyToken, `{"body":"x","quote":"var hidden"}`, 404, "quote_not_found", "quote"},
			{"ambiguous quote", s.cyToken, `{"body":"x","quote":"Headcount grew"}`, 400, "quote_ambiguous", "quote"},
			{"blank quote", s.cyToken, `{"body":"x","quote":"   "}`, 400, "invalid_request", "quote"},
			{"reply with a quote", s.cyToken, `{"body":"x","threadId":"thr_x","quote":"Costs fell."}`, 400, "invalid_request", "quote"},
			{"unknown thread", s.cyToken, `{"body":"x","threadId":"thr_x"}`, 404, "not_found", ""},
			{"unknown review", s.cyToken, `{"body":"x","reviewId":"rev_x"}`, 404, "not_found", "reviewId"},
			{"not base64", s.cyToken, `{"body":"x","images":[{"data":"%%%"}]}`, 400, "invalid_request", "images[0].data"},
			{"a GIF", s.cyToken, `{"body":"x","images":[{"data":"` + gif + `"}]}`, 400, "invalid_request", "images[0].data"},
			{"too big", s.cyToken, `{"body":"x","images":[{"data":"` + big + `"}]}`, 413, "payload_too_large", "images[0].data"},
			{"five images", s.cyToken, `{"body":"x","images":[` + strings.Repeat(`{"data":"`+tinyPNG+`"},`, 4) + `{"data":"` + tinyPNG + `"}]}`, 400, "invalid_request", "images"},
			{"not shared with Ada", s.memberToken, `{"body":"x"}`, 403, "forbidden", ""},
			{"another organisation", s.otherAgent, `{"body":"x"}`, 404, "not_found", ""},
		}
		for _, c := range cases {
			r := s.do(t, "POST", "/api/v1/reports/q3/comments", c.key, c.body, nil)
			require.Equal(t, c.status, r.status, "%s: %s", c.name, r.body)
			assert.Equal(t, c.code, errField(r, "code"), c.name)
			assert.Equal(t, c.field, errField(r, "field"), c.name)
		}

		th := s.comment(t, s.cyToken, "q3", `{"body":"Before or after currency effects?","quote":"rose 4%\n   in EMEA","images":[{"data":"`+tinyPNG+`"}]}`)
		assert.Regexp(t, `^thr_`, th["id"])
		assert.Equal(t, "rose 4% in EMEA", th["quote"], "whitespace collapsed")
		assert.Equal(t, "Revenue rose 4% in EMEA, mostly in Q3.", th["context"])
		assert.Equal(t, "index.html", th["path"])
		assert.Equal(t, map[string]any{"state": "anchored", "version": float64(1)}, th["anchor"])
		first := th["comments"].([]any)[0].(map[string]any)
		assert.Equal(t, "member", first["author"].(map[string]any)["kind"])
		img := first["images"].([]any)[0].(map[string]any)
		assert.Equal(t, "image/png", img["contentType"])

		got := s.do(t, "GET", strings.TrimPrefix(img["url"].(string), "http://assent.test"), s.bobToken, "", nil)
		require.Equal(t, 200, got.status)
		assert.Equal(t, "image/png", got.header.Get("Content-Type"))
		assert.Equal(t, "nosniff", got.header.Get("X-Content-Type-Options"))
		assert.Equal(t, 403, s.do(t, "GET", strings.TrimPrefix(img["url"].(string), "http://assent.test"), s.memberToken, "", nil).status,
			"an image is served only to who may read the report")

		general := s.comment(t, s.agentKey, "q3", `{"body":"Overall fine."}`)
		assert.Nil(t, general["quote"])
		assert.Equal(t, map[string]any{"state": "none", "version": nil}, general["anchor"])
		assert.Equal(t, "agent", general["comments"].([]any)[0].(map[string]any)["author"].(map[string]any)["kind"])

		reply := s.comment(t, s.bobToken, "q3", `{"body":"After.","threadId":"`+th["id"].(string)+`"}`)
		assert.Len(t, reply["comments"], 2)

		events, err := s.store.ListEvents(context.Background(), s.org.ID, reply["reportId"].(string))
		require.NoError(t, err)
		var created []map[string]any
		for _, e := range events {
			if e.Kind == "comment.created" {
				var d map[string]any
				require.NoError(t, json.Unmarshal(e.Data, &d))
				created = append(created, d)
			}
		}
		require.Len(t, created, 3, "one comment.created per comment")
		assert.Equal(t, "After.", created[2]["comment"].(map[string]any)["body"])
		assert.Equal(t, th["id"], created[2]["thread"].(map[string]any)["id"])
		assert.Equal(t, "q3", created[2]["report"].(map[string]any)["slug"])
	})
}

func TestCommentThreadsResolveRetractAndList(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		s.publish(t, `{"title":"Q3","slug":"q3","content":`+jsonString(html(q3Page))+`,"audience":["Finance"]}`)
		s.publish(t, `{"title":"Secret","slug":"secret","content":`+jsonString(html("<p>x</p>"))+`,"audience":["bob@example.com"]}`)
		th := s.comment(t, s.cyToken, "q3", `{"body":"Check this.","quote":"Costs fell."}`)
		id := th["id"].(string)
		s.comment(t, s.bobToken, "secret", `{"body":"Only Bob reads this."}`)

		cyOpen := s.do(t, "GET", "/api/v1/comments", s.cyToken, "", nil)
		require.Equal(t, 200, cyOpen.status, string(cyOpen.body))
		assert.Len(t, cyOpen.decoded["data"], 1, "Cy sees the threads of reports shared with her")
		assert.Len(t, s.do(t, "GET", "/api/v1/comments", s.agentKey, "", nil).decoded["data"], 2, "an agent key sees every open thread")
		assert.Empty(t, s.do(t, "GET", "/api/v1/comments", s.otherAgent, "", nil).decoded["data"])

		bobReply := s.comment(t, s.bobToken, "q3", `{"body":"Agreed.","threadId":"`+id+`"}`)
		cyComment := th["comments"].([]any)[0].(map[string]any)["id"].(string)
		bobComment := bobReply["comments"].([]any)[1].(map[string]any)["id"].(string)
		r := s.do(t, "DELETE", "/api/v1/reports/q3/comments/"+cyComment, s.cyToken, "", nil)
		assert.Equal(t, 409, r.status, "not the last comment: %s", r.body)
		r = s.do(t, "DELETE", "/api/v1/reports/q3/comments/"+bobComment, s.cyToken, "", nil)
		assert.Equal(t, 403, r.status, "not hers: %s", r.body)
		r = s.do(t, "DELETE", "/api/v1/reports/q3/comments/"+bobComment, s.bobToken, "", nil)
		require.Equal(t, 204, r.status, string(r.body))

		r = s.do(t, "POST", "/api/v1/comments/"+id+"/resolve", s.bobToken, `{"note":"Fixed in v2."}`, nil)
		require.Equal(t, 200, r.status, "an administrator resolves: %s", r.body)
		assert.Equal(t, "resolved", r.decoded["status"])
		assert.Equal(t, "Fixed in v2.", r.decoded["resolution"].(map[string]any)["note"])
		r = s.do(t, "POST", "/api/v1/comments/"+id+"/resolve", s.cyToken, `{}`, nil)
		assert.Equal(t, 409, r.status, "already resolved: %s", r.body)
		r = s.do(t, "POST", "/api/v1/reports/q3/comments", s.cyToken, `{"body":"More.","threadId":"`+id+`"}`, nil)
		assert.Equal(t, 409, r.status, "a resolved thread takes no reply: %s", r.body)
		r = s.do(t, "DELETE", "/api/v1/reports/q3/comments/"+cyComment, s.cyToken, "", nil)
		assert.Equal(t, 409, r.status, "a resolved thread keeps its comments: %s", r.body)
		assert.Len(t, s.do(t, "GET", "/api/v1/comments", s.cyToken, "", nil).decoded["data"], 0, "resolved threads are not open")

		other := s.comment(t, s.bobToken, "q3", `{"body":"Mine."}`)
		r = s.do(t, "POST", "/api/v1/comments/"+other["id"].(string)+"/resolve", s.cyToken, `{}`, nil)
		assert.Equal(t, 403, r.status, "a plain member resolves only her own threads: %s", r.body)
		r = s.do(t, "POST", "/api/v1/comments/"+other["id"].(string)+"/resolve", s.otherAgent, `{}`, nil)
		assert.Equal(t, 404, r.status)
		mine := other["comments"].([]any)[0].(map[string]any)["id"].(string)
		require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/reports/q3/comments/"+mine, s.bobToken, "", nil).status)
		list := s.do(t, "GET", "/api/v1/reports/q3/comments", s.cyToken, "", nil)
		require.Equal(t, 200, list.status)
		assert.Len(t, list.decoded["data"], 1, "a thread left with no comment goes with it")
	})
}

func TestCommentsFollowTheLiveVersionAndReviews(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		s.publish(t, `{"title":"Q3","slug":"q3","content":`+jsonString(html(q3Page))+`,"audience":["Finance"]}`)
		kept := s.comment(t, s.cyToken, "q3", `{"body":"Source?","quote":"Costs fell."}`)
		lost := s.comment(t, s.cyToken, "q3", `{"body":"Which quarter?","quote":"mostly in Q3"}`)
		rev := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Check","reportId":"q3","reviewers":["cy@example.com"]}`, nil)
		require.Equal(t, 201, rev.status, string(rev.body))
		reviewID := rev.decoded["id"].(string)
		onReview := s.comment(t, s.cyToken, "q3", `{"body":"Round this.","quote":"rose 4%","reviewId":"`+reviewID+`"}`)
		s.comment(t, s.bobToken, "q3", `{"body":"Not a reviewer's.","reviewId":"`+reviewID+`"}`)
		got := s.do(t, "GET", "/api/v1/reviews/"+reviewID, s.agentKey, "", nil)
		assert.EqualValues(t, 1, got.decoded["threadCount"], "threads reviewers opened on the review")

		v2 := `<h1>Q3</h1><p>Revenue rose 5% in EMEA. Costs fell.</p>`
		next := s.do(t, "POST", "/api/v1/reports/q3/versions", s.agentKey, `{"content":`+jsonString(html(v2))+`}`, nil)
		require.Equal(t, 201, next.status, string(next.body))
		r := s.do(t, "POST", "/api/v1/reports/q3/comments", s.cyToken, `{"body":"x","quote":"mostly in Q3"}`, nil)
		assert.Equal(t, 404, r.status, "a new thread quotes the live version")
		s.comment(t, s.cyToken, "q3", `{"body":"Still 4% here?","quote":"mostly in Q3","reviewId":"`+reviewID+`"}`)

		list := s.do(t, "GET", "/api/v1/reports/q3/comments", s.cyToken, "", nil)
		require.Equal(t, 200, list.status, string(list.body))
		anchors := map[string]any{}
		for _, th := range list.decoded["data"].([]any) {
			m := th.(map[string]any)
			anchors[m["id"].(string)] = m["anchor"]
		}
		assert.Equal(t, map[string]any{"state": "anchored", "version": float64(2)}, anchors[kept["id"].(string)], "found again in version 2")
		assert.Equal(t, map[string]any{"state": "outdated", "version": float64(1)}, anchors[lost["id"].(string)], "lost in version 2, kept with where it was")
		assert.Equal(t, map[string]any{"state": "anchored", "version": float64(1)}, anchors[onReview["id"].(string)], "a review's thread stays on its version")

		brief := s.do(t, "POST", "/api/v1/reports/q3/revision-briefs", s.agentKey, `{}`, nil)
		require.Equal(t, 200, brief.status, string(brief.body))
		text := brief.decoded["text"].(string)
		assert.EqualValues(t, 2, brief.decoded["basedOnVersion"])
		assert.Len(t, brief.decoded["threads"], 5)
		assert.Contains(t, text, `Revision brief for "Q3" (q3), based on version 2.`)
		assert.Contains(t, text, `Passage: "mostly in Q3"`)
		assert.Contains(t, text, `In context: "Revenue rose 4% in EMEA, mostly in Q3."`)
		assert.Contains(t, text, "outdated: the passage was last found in version 1 and is not in version 2")
		assert.Contains(t, text, "- cy@example.com (member), ")
		again := s.do(t, "POST", "/api/v1/reports/q3/revision-briefs", s.agentKey, `{}`, nil)
		assert.Equal(t, text, again.decoded["text"], "the same threads give the same text")

		ok := s.do(t, "POST", "/api/v1/reviews/"+reviewID+"/verdict", s.cyToken, `{"verdict":"changes_requested","note":"Fix the rounding."}`, nil)
		require.Equal(t, 200, ok.status, string(ok.body))
		one := s.do(t, "POST", "/api/v1/reports/q3/revision-briefs", s.agentKey, `{"threadIds":["`+onReview["id"].(string)+`"]}`, nil)
		require.Equal(t, 200, one.status, string(one.body))
		assert.Equal(t, []any{onReview["id"]}, one.decoded["threads"])
		assert.Contains(t, one.decoded["text"], "1 comment thread follows.")
		assert.Contains(t, one.decoded["text"], "changes requested by cy@example.com: Fix the rounding.")
		bad := s.do(t, "POST", "/api/v1/reports/q3/revision-briefs", s.agentKey, `{"threadIds":["thr_nope"]}`, nil)
		assert.Equal(t, 404, bad.status)
		assert.Equal(t, "threadIds[0]", errField(bad, "field"))
	})
}
