package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
)

// sevenKinds asks one question of every kind.
const sevenKinds = `[
	{"id":"name","prompt":"Your name","kind":"text"},
	{"prompt":"What happened","kind":"long_text","required":false},
	{"id":"budget","prompt":"Budget","kind":"number"},
	{"id":"start","prompt":"Start date","kind":"date"},
	{"id":"vendor","prompt":"Vendor","kind":"choice","options":["Acme","Globex"]},
	{"id":"regions","prompt":"Regions","kind":"multi_choice","options":["EU","US","APAC"]},
	{"id":"ok","prompt":"Go ahead?","kind":"boolean"}]`

func TestCreateCollectionValidation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		later := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
		manyQ := "[" + strings.TrimSuffix(strings.Repeat(`{"prompt":"p","kind":"text"},`, 41), ",") + "]"
		cases := []struct {
			name, body   string
			status       int
			code, field  string
			messageNames string
		}{
			{"no title", `{"questions":[{"prompt":"p","kind":"text"}],"respondents":["Finance"]}`, 400, "invalid_request", "title", ""},
			{"no questions", `{"title":"t","questions":[],"respondents":["Finance"]}`, 400, "invalid_request", "questions", ""},
			{"too many questions", `{"title":"t","questions":` + manyQ + `,"respondents":["Finance"]}`, 400, "invalid_request", "questions", ""},
			{"bad kind", `{"title":"t","questions":[{"prompt":"p","kind":"essay"}],"respondents":["Finance"]}`, 400, "invalid_request", "questions[0].kind", "multi_choice"},
			{"options on text", `{"title":"t","questions":[{"prompt":"p","kind":"text","options":["a","b"]}],"respondents":["Finance"]}`, 400, "invalid_request", "questions[0].options", ""},
			{"choice without options", `{"title":"t","questions":[{"prompt":"p","kind":"choice"}],"respondents":["Finance"]}`, 400, "invalid_request", "questions[0].options", ""},
			{"duplicate ids", `{"title":"t","questions":[{"id":"a","prompt":"p","kind":"text"},{"id":"a","prompt":"p","kind":"text"}],"respondents":["Finance"]}`, 400, "invalid_request", "questions[1].id", ""},
			{"no respondents", `{"title":"t","questions":[{"prompt":"p","kind":"text"}],"respondents":[]}`, 400, "invalid_request", "respondents", ""},
			{"unknown respondent", `{"title":"t","questions":[{"prompt":"p","kind":"text"}],"respondents":["Finance","nobody@example.com","dee@example.com"]}`, 400, "unknown_respondent", "respondents", "nobody@example.com"},
			{"ambiguous respondent", `{"title":"t","questions":[{"prompt":"p","kind":"text"}],"respondents":["ops@example.com"]}`, 400, "ambiguous_respondent", "respondents[0]", ""},
			{"too many responses", `{"title":"t","questions":[{"prompt":"p","kind":"text"}],"respondents":["Finance"],"requiredResponses":3}`, 400, "invalid_request", "requiredResponses", "2 people"},
			{"due after expiry", `{"title":"t","questions":[{"prompt":"p","kind":"text"}],"respondents":["Finance"],"dueAt":"` + later + `","expiresAt":"` + soon + `"}`, 400, "invalid_request", "dueAt", ""},
			{"private callback", `{"title":"t","questions":[{"prompt":"p","kind":"text"}],"respondents":["Finance"],"callbackUrl":"https://127.0.0.1/cb"}`, 400, "invalid_callback_url", "callbackUrl", ""},
			{"unknown field", `{"title":"t","questions":[{"prompt":"p","kind":"text"}],"respondents":["Finance"],"colour":"red"}`, 400, "invalid_request", "colour", ""},
		}
		for _, c := range cases {
			r := s.do(t, "POST", "/api/v1/collections", s.agentKey, c.body, nil)
			require.Equal(t, c.status, r.status, "%s: %s", c.name, r.body)
			assert.Equal(t, c.code, errField(r, "code"), c.name)
			assert.Equal(t, c.field, errField(r, "field"), c.name)
			assert.Contains(t, errField(r, "message"), c.messageNames, c.name)
		}
		r := s.do(t, "POST", "/api/v1/collections", s.readOnlyKey, `{"title":"t","questions":[{"prompt":"p","kind":"text"}],"respondents":["Finance"]}`, nil)
		assert.Equal(t, 403, r.status, "collections:write is needed")
	})
}

func TestCollectionLifecycle(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		due := time.Now().Add(72 * time.Hour).UTC().Format(time.RFC3339)
		r := s.do(t, "POST", "/api/v1/collections", s.agentKey, `{"title":"Vendor check","questions":`+sevenKinds+`,
			"respondents":["Finance","ada@example.com"],"requiredResponses":2,"dueAt":"`+due+`","externalId":"job-7",
			"metadata":{"run":7}}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		c := r.decoded
		id := c["id"].(string)
		path := "/api/v1/collections/" + id
		assert.Regexp(t, `^col_`, id)
		assert.Equal(t, "open", c["status"])
		assert.Equal(t, "http://assent.test/collections/"+id, c["url"])
		assert.Nil(t, c["callbackSecret"], "no callback, no secret")
		assert.EqualValues(t, 2, c["requiredResponses"])
		assert.EqualValues(t, 0, c["responsesSoFar"])
		assert.Len(t, c["resolvedRespondents"], 3, "Finance (Bob, Cy) and Ada")
		qs := c["questions"].([]any)
		assert.Equal(t, "q2", qs[1].(map[string]any)["id"], "a question without an id is numbered by its position")
		assert.Equal(t, false, qs[1].(map[string]any)["required"])
		assert.Equal(t, true, qs[0].(map[string]any)["required"])
		got := s.do(t, "GET", path, s.agentKey, "", nil)
		require.Equal(t, 200, got.status)
		assert.Equal(t, 404, s.do(t, "GET", path, s.otherAgent, "", nil).status, "another organisation's collection")

		inbox := s.do(t, "GET", "/api/v1/inbox?kind=collection", s.cyToken, "", nil)
		require.Equal(t, 200, inbox.status, string(inbox.body))
		require.Len(t, inbox.decoded["data"], 1, "Cy was asked")
		assert.Equal(t, id, inbox.decoded["data"].([]any)[0].(map[string]any)["id"])
		assert.Equal(t, 403, s.do(t, "GET", "/api/v1/inbox?kind=collection", s.agentKey, "", nil).status, "an inbox belongs to a person")
		bad := s.do(t, "GET", "/api/v1/inbox?kind=gate", s.cyToken, "", nil)
		assert.Equal(t, 400, bad.status)
		assert.Equal(t, "kind", errField(bad, "field"))

		poll := s.longPoll(t, path)

		full := `{"name":"Bob","budget":12345678901234567890,"start":"2026-12-01","vendor":"Acme","regions":["EU","APAC"],"ok":true}`
		steps := []struct {
			name, key, body string
			status          int
			code, field     string
		}{
			{"agents do not reply", s.agentKey, `{"answers":` + full + `,"submit":true}`, 403, "forbidden", ""},
			{"wrong kind", s.bobToken, `{"answers":{"name":"Bob","budget":"lots","start":"2026-12-01","vendor":"Acme","regions":[],"ok":true},"submit":true}`, 400, "invalid_answer", "answers.budget"},
			{"not an option", s.bobToken, `{"answers":{"name":"Bob","budget":1,"start":"2026-12-01","vendor":"Initech","regions":["EU"],"ok":true},"submit":true}`, 400, "invalid_answer", "answers.vendor"},
			{"missing required", s.bobToken, `{"answers":{"name":"Bob"},"submit":true}`, 400, "invalid_answer", "answers.budget"},
			{"a draft may be partial", s.bobToken, `{"answers":{"name":"Bob"},"submit":false}`, 200, "", ""},
			{"a draft is still typed", s.bobToken, `{"answers":{"budget":"lots"},"submit":false}`, 400, "invalid_answer", "answers.budget"},
			{"submit", s.bobToken, `{"answers":` + full + `,"submit":true}`, 200, "", ""},
			{"submit twice", s.bobToken, `{"answers":` + full + `,"submit":true}`, 409, "already_submitted", ""},
			{"draft after submitting", s.bobToken, `{"answers":{"name":"B"},"submit":false}`, 409, "already_submitted", ""},
			{"second reply completes it", s.memberToken, `{"answers":{"name":"Ada","budget":2.5,"start":"2027-01-31","vendor":"Globex","regions":["US"],"ok":false},"submit":true}`, 200, "", ""},
			{"reply after settling", s.cyToken, `{"answers":` + full + `,"submit":true}`, 409, "invalid_state", ""},
			{"cancel a settled request", s.agentKey, ``, 409, "invalid_state", ""},
		}
		for _, st := range steps {
			sub := "/replies"
			if strings.HasPrefix(st.name, "cancel") {
				sub = "/cancel"
			}
			r := s.do(t, "POST", path+sub, st.key, st.body, nil)
			require.Equal(t, st.status, r.status, "%s: %s", st.name, r.body)
			assert.Equal(t, st.code, errField(r, "code"), st.name)
			assert.Equal(t, st.field, errField(r, "field"), st.name)
		}

		polled := poll()
		require.Equal(t, 200, polled.status)
		assert.Equal(t, "complete", polled.decoded["status"], "the long-poll returned the outcome")
		// The raw body keeps the number's exact text.
		assert.Contains(t, string(polled.body), `"budget":12345678901234567890`)
		replies := polled.decoded["replies"].([]any)
		require.Len(t, replies, 2)
		first := replies[0].(map[string]any)
		assert.Equal(t, map[string]any{"id": s.bob.ID, "name": "Bob", "email": "bob@example.com"}, first["respondent"])
		answers := first["answers"].(map[string]any)
		assert.Equal(t, "2026-12-01", answers["start"])
		assert.Equal(t, []any{"EU", "APAC"}, answers["regions"])
		assert.Equal(t, true, answers["ok"])
		assert.NotContains(t, answers, "q2", "an unanswered optional question is absent")
		assert.EqualValues(t, 2, polled.decoded["responsesSoFar"])
		assert.NotNil(t, polled.decoded["settledAt"])

		assert.Empty(t, s.do(t, "GET", "/api/v1/inbox?kind=collection", s.bobToken, "", nil).decoded["data"], "who replied has nothing waiting")
		list := s.do(t, "GET", "/api/v1/collections?status=complete&externalId=job-7", s.agentKey, "", nil)
		require.Equal(t, 200, list.status, string(list.body))
		assert.Len(t, list.decoded["data"], 1)
		bad = s.do(t, "GET", "/api/v1/collections?status=done", s.agentKey, "", nil)
		assert.Equal(t, 400, bad.status)
		assert.Equal(t, "status", errField(bad, "field"))

		events, kinds := s.events(t, id)
		assert.Equal(t, []string{"collection.requested", "collection.completed"}, kinds, "replies are audited, not sent")
		var data map[string]any
		require.NoError(t, json.Unmarshal(events[1].Data, &data))
		assert.Equal(t, "complete", data["status"])
		assert.Len(t, data["replies"], 2)
	})
}

func TestCollectionCancelAndNotAsked(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		r := s.do(t, "POST", "/api/v1/collections", s.agentKey, `{"title":"t","questions":[{"prompt":"p","kind":"boolean"}],"respondents":["Finance"]}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		path := fmt.Sprintf("/api/v1/collections/%s", r.decoded["id"])
		notAsked := s.do(t, "POST", path+"/replies", s.memberToken, `{"answers":{"q1":true},"submit":true}`, nil)
		assert.Equal(t, 403, notAsked.status, string(notAsked.body))
		assert.Equal(t, "not_a_respondent", errField(notAsked, "code"))
		assert.Equal(t, 404, s.do(t, "POST", path+"/cancel", s.otherAgent, "", nil).status)
		cancelled := s.do(t, "POST", path+"/cancel", s.agentKey, "", nil)
		require.Equal(t, 200, cancelled.status, string(cancelled.body))
		assert.Equal(t, "cancelled", cancelled.decoded["status"])
		assert.NotNil(t, cancelled.decoded["settledAt"])
	})
}

// TestRemovingAGuestTakesThemOffOpenCollections: a guest removed from the
// organisation no longer holds up a request for information: they leave
// its respondents, and it completes when the replies already reach what
// the people left can give.
func TestRemovingAGuestTakesThemOffOpenCollections(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		gus, err := s.store.GuestByEmail(ctx, s.org.ID, "gus@partner.example")
		require.NoError(t, err)
		r := s.do(t, "POST", "/api/v1/collections", s.agentKey, `{"title":"Partner facts","respondents":["cy@example.com","gus@partner.example"],
			"questions":[{"prompt":"Ready?","kind":"boolean"}]}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		path := "/api/v1/collections/" + r.decoded["id"].(string)
		assert.EqualValues(t, 2, r.decoded["requiredResponses"])
		reply := s.do(t, "POST", path+"/replies", s.cyToken, `{"answers":{"q1":true},"submit":true}`, nil)
		require.Equal(t, 200, reply.status, string(reply.body))
		assert.Equal(t, "open", reply.decoded["status"], "Gus has not replied")

		removed := s.do(t, "DELETE", "/api/v1/admin/guests/"+gus.ID, s.adminKey, "", nil)
		require.Equal(t, 204, removed.status, string(removed.body))
		got := s.do(t, "GET", path, s.agentKey, "", nil)
		assert.Equal(t, "complete", got.decoded["status"], "the one person left replied")
		assert.EqualValues(t, 1, got.decoded["requiredResponses"])
		assert.Len(t, got.decoded["resolvedRespondents"], 2, "who was asked stays as asked")
		events, err := s.store.ListEvents(ctx, s.org.ID, r.decoded["id"].(string))
		require.NoError(t, err)
		require.Len(t, events, 2)
		assert.Equal(t, "collection.completed", events[1].Kind)
	})
}
