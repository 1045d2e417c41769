package api_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
)

// reviewable publishes report "q3" shared with Finance (Bob, Cy) and the
// guest Gus, and returns it.
func (s *stack) reviewable(t *testing.T) map[string]any {
	t.Helper()
	return s.publish(t, `{"title":"Q3","slug":"q3","content":`+jsonString(html("<p>Revenue rose 4% in EMEA.</p>"))+`,
		"audience":["Finance","gus@partner.example"]}`)
}

func TestCreateReviewValidation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		s.reviewable(t)
		held := s.do(t, "POST", "/api/v1/reports/q3/versions", s.agentKey, `{"content":"<base href=\"https://elsewhere.example/\">"}`, nil)
		require.Equal(t, 201, held.status, string(held.body))
		heldID := version(held.decoded)["id"].(string)
		other := s.publish(t, `{"title":"Other","content":`+jsonString(html("x"))+`,"audience":["Finance"]}`)
		otherVersion := version(other)["id"].(string)
		s.publish(t, `{"title":"Old","slug":"old","content":`+jsonString(html("x"))+`,"audience":["Finance"]}`)
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/reports/old/archive", s.agentKey, `{}`, nil).status)
		hal, err := s.store.CreateMember(context.Background(), s.org.ID, "hal@example.com", "Hal", "")
		require.NoError(t, err)

		cases := []struct {
			name, body  string
			status      int
			code, field string
			message     string
		}{
			{"no title", `{"reportId":"q3","reviewers":["Finance"]}`, 400, "invalid_request", "title", ""},
			{"no report", `{"title":"t","reviewers":["Finance"]}`, 400, "invalid_request", "reportId", ""},
			{"unknown report", `{"title":"t","reportId":"nope","reviewers":["Finance"]}`, 404, "not_found", "reportId", "nope"},
			{"archived report", `{"title":"t","reportId":"old","reviewers":["Finance"]}`, 409, "invalid_state", "reportId", "archived"},
			{"no reviewers", `{"title":"t","reportId":"q3","reviewers":[]}`, 400, "invalid_request", "reviewers", ""},
			{"too many reviewers", `{"title":"t","reportId":"q3","reviewers":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q","r","s","t","u"]}`, 400, "invalid_request", "reviewers", ""},
			{"unknown reviewer", `{"title":"t","reportId":"q3","reviewers":["Finance","nobody@example.com"]}`, 400, "unknown_reviewer", "reviewers", "nobody@example.com"},
			{"ambiguous reviewer", `{"title":"t","reportId":"q3","reviewers":["ops@example.com"]}`, 400, "ambiguous_reviewer", "reviewers[0]", ""},
			{"reviewer cannot read", `{"title":"t","reportId":"q3","reviewers":["Finance","hal@example.com"]}`, 400, "reviewer_cannot_read", "reviewers", "hal@example.com"},
			{"too many approvals", `{"title":"t","reportId":"q3","reviewers":["Finance"],"requiredApprovals":3}`, 400, "invalid_request", "requiredApprovals", "2 reviewers"},
			{"zero approvals", `{"title":"t","reportId":"q3","reviewers":["Finance"],"requiredApprovals":0}`, 400, "invalid_request", "requiredApprovals", ""},
			{"held version", `{"title":"t","reportId":"q3","reviewers":["Finance"],"versionId":"` + heldID + `"}`, 409, "invalid_state", "versionId", "held"},
			{"another report's version", `{"title":"t","reportId":"q3","reviewers":["Finance"],"versionId":"` + otherVersion + `"}`, 404, "not_found", "versionId", ""},
			{"private callback", `{"title":"t","reportId":"q3","reviewers":["Finance"],"callbackUrl":"https://127.0.0.1/cb"}`, 400, "invalid_callback_url", "callbackUrl", ""},
			{"unknown field", `{"title":"t","reportId":"q3","reviewers":["Finance"],"colour":"red"}`, 400, "invalid_request", "colour", ""},
			{"wrong type", `{"title":"t","reportId":"q3","reviewers":"Finance"}`, 400, "invalid_request", "reviewers", ""},
		}
		for _, c := range cases {
			r := s.do(t, "POST", "/api/v1/reviews", s.agentKey, c.body, nil)
			require.Equal(t, c.status, r.status, "%s: %s", c.name, r.body)
			assert.Equal(t, c.code, errField(r, "code"), c.name)
			assert.Equal(t, c.field, errField(r, "field"), c.name)
			assert.Contains(t, errField(r, "message"), c.message, c.name)
		}
		// Those who cannot read the report are refused; the candidates
		// are who may be asked instead (the owner and the administrator,
		// who may review any report), never them.
		r := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"t","reportId":"q3","reviewers":["hal@example.com"]}`, nil)
		require.Equal(t, 400, r.status, string(r.body))
		candidates := r.decoded["error"].(map[string]any)["candidates"]
		assert.Equal(t, []any{"member Ada <ada@example.com> (" + s.member.ID + ")", "member Bob <bob@example.com> (" + s.bob.ID + ")"}, candidates)
		assert.NotContains(t, string(r.body), hal.ID)
		r = s.do(t, "POST", "/api/v1/reviews", s.readOnlyKey, `{"title":"t","reportId":"q3","reviewers":["Finance"]}`, nil)
		assert.Equal(t, 403, r.status, "reviews:write is needed")
		r = s.do(t, "POST", "/api/v1/reviews", s.memberToken, `{"title":"t","reportId":"q3","reviewers":["Finance"]}`, nil)
		assert.Equal(t, 403, r.status, "Ada cannot read q3, so she cannot put it under review: %s", r.body)
		r = s.do(t, "POST", "/api/v1/reviews", s.otherAgent, `{"title":"t","reportId":"q3","reviewers":["Finance"]}`, nil)
		assert.Equal(t, 404, r.status, "another organisation's report")
		r = s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"t","reportId":"q3","reviewers":["gus@partner.example"]}`, nil)
		assert.Equal(t, 201, r.status, "a guest the report is shared with may review it: %s", r.body)

		// An owner may be asked about a report not shared with her, and
		// reads it from then on: she may now put it under review too.
		owner := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"t","reportId":"q3","reviewers":["ada@example.com"]}`, nil)
		assert.Equal(t, 201, owner.status, "an owner may be asked about a report not shared with them: %s", owner.body)
		r = s.do(t, "POST", "/api/v1/reviews", s.memberToken, `{"title":"t","reportId":"q3","reviewers":["Finance"]}`, nil)
		assert.Equal(t, 201, r.status, "Ada reads q3 once asked to review it: %s", r.body)
	})
}

func TestReviewLifecycle(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		report := s.reviewable(t)
		v1 := version(report)["id"].(string)
		r := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Check Q3","reportId":"q3","instructions":"Totals first.",
			"reviewers":["Finance"],"requiredApprovals":2,"externalId":"q3-run","metadata":{"run":3}}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		rev := r.decoded
		id := rev["id"].(string)
		path := "/api/v1/reviews/" + id
		assert.Regexp(t, `^rev_`, id)
		assert.Equal(t, "open", rev["status"])
		assert.Equal(t, "http://assent.test/reviews/"+id, rev["url"])
		assert.Equal(t, report["id"], rev["reportId"])
		assert.Equal(t, v1, rev["versionId"], "the live version by default")
		assert.EqualValues(t, 1, rev["version"])
		assert.EqualValues(t, 2, rev["requiredApprovals"])
		assert.EqualValues(t, 0, rev["approvalsSoFar"])
		assert.EqualValues(t, 0, rev["threadCount"])
		assert.Len(t, rev["resolvedReviewers"], 2, "Finance is Bob and Cy")
		assert.Empty(t, rev["verdicts"])
		assert.Nil(t, rev["callbackSecret"])

		next := s.do(t, "POST", "/api/v1/reports/q3/versions", s.agentKey, `{"content":`+jsonString(html("<p>v2</p>"))+`}`, nil)
		require.Equal(t, 201, next.status, string(next.body))
		got := s.do(t, "GET", path, s.agentKey, "", nil)
		require.Equal(t, 200, got.status)
		assert.EqualValues(t, 1, got.decoded["version"], "publishing again does not move the pinned version")
		assert.Equal(t, 404, s.do(t, "GET", path, s.otherAgent, "", nil).status, "another organisation's review")

		inbox := s.do(t, "GET", "/api/v1/inbox?kind=review", s.cyToken, "", nil)
		require.Equal(t, 200, inbox.status, string(inbox.body))
		require.Len(t, inbox.decoded["data"], 1, "Cy was asked")
		assert.Empty(t, s.do(t, "GET", "/api/v1/inbox?kind=review", s.memberToken, "", nil).decoded["data"], "Ada was not")

		poll := s.longPoll(t, path)

		steps := []struct {
			name, key, body string
			status          int
			code, field     string
			state           string
		}{
			{"agents give no verdict", s.agentKey, `{"verdict":"approved"}`, 403, "forbidden", "", ""},
			{"not a reviewer", s.memberToken, `{"verdict":"approved"}`, 403, "not_a_reviewer", "", ""},
			{"no such verdict", s.cyToken, `{"verdict":"maybe"}`, 400, "invalid_request", "verdict", ""},
			{"no verdict", s.cyToken, `{"note":"hm"}`, 400, "invalid_request", "verdict", ""},
			{"Cy approves", s.cyToken, `{"verdict":"approved","note":"Reads well."}`, 200, "", "", "open"},
			{"Cy again", s.cyToken, `{"verdict":"changes_requested"}`, 409, "already_decided", "", ""},
			{"Bob requests changes", s.bobToken, `{"verdict":"changes_requested","note":"EMEA is off."}`, 200, "", "", "changes_requested"},
			{"settled", s.cyToken, `{"verdict":"approved"}`, 409, "invalid_state", "", ""},
		}
		for _, st := range steps {
			r := s.do(t, "POST", path+"/verdict", st.key, st.body, nil)
			require.Equal(t, st.status, r.status, "%s: %s", st.name, r.body)
			if st.code != "" {
				assert.Equal(t, st.code, errField(r, "code"), st.name)
				assert.Equal(t, st.field, errField(r, "field"), st.name)
				continue
			}
			assert.Equal(t, st.state, r.decoded["status"], st.name)
		}
		polled := poll()
		require.Equal(t, 200, polled.status, string(polled.body))
		assert.Equal(t, "changes_requested", polled.decoded["status"])
		assert.EqualValues(t, 1, polled.decoded["approvalsSoFar"])
		assert.NotNil(t, polled.decoded["settledAt"])
		verdicts := polled.decoded["verdicts"].([]any)
		require.Len(t, verdicts, 2)
		assert.Equal(t, "Reads well.", verdicts[0].(map[string]any)["note"])
		assert.Equal(t, "bob@example.com", verdicts[1].(map[string]any)["reviewer"].(map[string]any)["email"])

		assert.Equal(t, 409, s.do(t, "POST", path+"/cancel", s.agentKey, "", nil).status, "a settled review is not withdrawn")
		assert.Empty(t, s.do(t, "GET", "/api/v1/inbox?kind=review", s.cyToken, "", nil).decoded["data"])
		list := s.do(t, "GET", "/api/v1/reviews?status=changes_requested&externalId=q3-run&reportId="+report["id"].(string), s.agentKey, "", nil)
		require.Equal(t, 200, list.status, string(list.body))
		assert.Len(t, list.decoded["data"], 1)
		bad := s.do(t, "GET", "/api/v1/reviews?status=rejected", s.agentKey, "", nil)
		assert.Equal(t, 400, bad.status)
		assert.Equal(t, "status", errField(bad, "field"))

		events, kinds := s.events(t, id)
		assert.Equal(t, []string{"review.requested", "review.changes_requested"}, kinds, "verdicts are audited, not sent")
		var data map[string]any
		require.NoError(t, json.Unmarshal(events[1].Data, &data))
		assert.Equal(t, "changes_requested", data["status"])
		assert.Len(t, data["verdicts"], 2)
	})
}

func TestReviewApprovedCancelledAndPinned(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		report := s.reviewable(t)
		v1 := version(report)["id"].(string)
		next := s.do(t, "POST", "/api/v1/reports/q3/versions", s.agentKey, `{"content":`+jsonString(html("<p>v2</p>"))+`}`, nil)
		require.Equal(t, 201, next.status, string(next.body))

		r := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Old one","reportId":"q3","reviewers":["cy@example.com"],"versionId":"`+v1+`"}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		assert.EqualValues(t, 1, r.decoded["version"], "an earlier published version may be reviewed")
		id := r.decoded["id"].(string)
		ok := s.do(t, "POST", "/api/v1/reviews/"+id+"/verdict", s.cyToken, `{"verdict":"approved"}`, nil)
		require.Equal(t, 200, ok.status, string(ok.body))
		assert.Equal(t, "approved", ok.decoded["status"], "one approval of one settles it")

		r = s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Withdrawn","reportId":"q3","reviewers":["cy@example.com"]}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		assert.EqualValues(t, 2, r.decoded["version"], "the live version")
		id = r.decoded["id"].(string)
		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/reviews/"+id+"/cancel", s.cyToken, "", nil).status, "a reviewer does not withdraw it")
		c := s.do(t, "POST", "/api/v1/reviews/"+id+"/cancel", s.agentKey, "", nil)
		require.Equal(t, 200, c.status, string(c.body))
		assert.Equal(t, "cancelled", c.decoded["status"])
		late := s.do(t, "POST", "/api/v1/reviews/"+id+"/verdict", s.cyToken, `{"verdict":"approved"}`, nil)
		assert.Equal(t, 409, late.status, string(late.body))
		assert.Equal(t, "invalid_state", errField(late, "code"))
	})
}

// TestFlowCompletedEvent: completing a flow writes flow.completed with the
// flow as its read shows it, members and all; cancelling one writes none.
func TestFlowCompletedEvent(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		f := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"Quarter close"}`, nil)
		require.Equal(t, 201, f.status, string(f.body))
		id := f.decoded["id"].(string)
		s.create(t, s.agentKey, `{"title":"Pay","approvers":["cy@example.com"],"flowId":"`+id+`"}`)
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/flows/"+id+"/complete", s.agentKey, "", nil).status)
		events, err := s.store.ListEvents(ctx, s.org.ID, id)
		require.NoError(t, err)
		require.Len(t, events, 1)
		assert.Equal(t, "flow.completed", events[0].Kind)
		var data map[string]any
		require.NoError(t, json.Unmarshal(events[0].Data, &data))
		assert.Equal(t, id, data["id"])
		assert.Len(t, data["members"], 1)
		assert.Equal(t, "flow:completed", func() string {
			tl := data["timeline"].([]any)
			last := tl[len(tl)-1].(map[string]any)
			return last["subjectType"].(string) + ":" + last["action"].(string)
		}(), "the event's timeline holds the completion")

		c := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"Dropped"}`, nil)
		require.Equal(t, 201, c.status)
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/flows/"+c.decoded["id"].(string)+"/cancel", s.agentKey, "", nil).status)
		none, err := s.store.ListEvents(ctx, s.org.ID, c.decoded["id"].(string))
		require.NoError(t, err)
		assert.Empty(t, none, "a cancelled flow sends nothing")
	})
}

// TestRemovingAGuestTakesThemOffOpenReviews: a guest reviewer removed
// through the admin API is no longer a reviewer of an open review: their
// verdict is refused, the review's reviewers and the index behind the
// inbox no longer list them, and the timeline says so. Two approvals are
// needed and only Cy is left, so the owners and administrators join (Ada,
// the owner, to whom q3 is not shared, and Bob), and Bob's approval counts. A
// review the guest already approved keeps their verdict and them.
func TestRemovingAGuestTakesThemOffOpenReviews(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		s.reviewable(t)
		svc := s.services.Reviews
		gus, err := s.store.GuestByEmail(ctx, s.org.ID, "gus@partner.example")
		require.NoError(t, err)
		people, err := s.store.People(ctx, s.org.ID, []string{gus.ID})
		require.NoError(t, err)
		gusPerson := people[0]
		f := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"Quarter close"}`, nil)
		require.Equal(t, 201, f.status, string(f.body))
		flowID := f.decoded["id"].(string)
		r := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Check Q3","reportId":"q3","reviewers":["gus@partner.example","cy@example.com"],
			"requiredApprovals":2,"flowId":"`+flowID+`"}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		id := r.decoded["id"].(string)
		path := "/api/v1/reviews/" + id
		done := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Check Q3 again","reportId":"q3","reviewers":["gus@partner.example","cy@example.com"],
			"requiredApprovals":2}`, nil)
		require.Equal(t, 201, done.status, string(done.body))
		doneID := done.decoded["id"].(string)
		approved, err := svc.Verdict(ctx, gusPerson.Actor(), doneID, "", reviews.VerdictInput{Verdict: "approved"})
		require.NoError(t, err)
		assert.Equal(t, 1, approved.ApprovalsSoFar)
		waitFor(t, func() bool {
			rev, err := reviews.Records(s.store).Get(ctx, s.org.ID, id)
			return err == nil && rev.Seq > 0 // the workflow has taken it up
		})

		removed := s.do(t, "DELETE", "/api/v1/admin/guests/"+gus.ID, s.adminKey, "", nil)
		require.Equal(t, 204, removed.status, string(removed.body))

		_, err = svc.Verdict(ctx, gusPerson.Actor(), id, "", reviews.VerdictInput{Verdict: "approved"})
		assert.True(t, apperr.Is(err, apperr.NotFound), "the removed guest's verdict is refused: %v", err)
		rev, err := reviews.Records(s.store).Get(ctx, s.org.ID, id)
		require.NoError(t, err)
		assert.Equal(t, "open", rev.Status)
		assert.Equal(t, []string{s.cy.ID, s.member.ID, s.bob.ID}, []string(rev.ReviewerIDs), "Gus is off; the owner and the administrator joined")
		assert.EqualValues(t, 2, rev.RequiredApprovals, "the bar is not lowered")
		waiting, err := reviews.Records(s.store).Waiting(ctx, s.org.ID, gus.ID, requests.Attention, 10)
		require.NoError(t, err)
		assert.Empty(t, waiting, "the reviewer index no longer lists Gus")
		got := s.do(t, "GET", path, s.agentKey, "", nil)
		require.Equal(t, 200, got.status, string(got.body))
		assert.Len(t, got.decoded["resolvedReviewers"], 2, "who was asked stays as asked")

		timeline := s.do(t, "GET", "/api/v1/flows/"+flowID, s.agentKey, "", nil).decoded["timeline"].([]any)
		last := timeline[len(timeline)-1].(map[string]any)
		assert.Equal(t, reviews.ActionReviewerRemoved, last["action"])
		assert.Equal(t, "admin", last["actor"], "the admin key's name")
		assert.Equal(t, "removed gus@partner.example from the reviewers; "+reviews.DefaultReviewersAdded, last["detail"])

		inbox := s.do(t, "GET", "/api/v1/inbox?kind=review", s.bobToken, "", nil)
		require.Equal(t, 200, inbox.status, string(inbox.body))
		assert.Contains(t, string(inbox.body), id, "Bob is asked now")
		for _, token := range []string{s.cyToken, s.bobToken} {
			v := s.do(t, "POST", path+"/verdict", token, `{"verdict":"approved"}`, nil)
			require.Equal(t, 200, v.status, string(v.body))
		}
		assert.Equal(t, "approved", s.do(t, "GET", path, s.agentKey, "", nil).decoded["status"])

		kept, err := reviews.Records(s.store).Get(ctx, s.org.ID, doneID)
		require.NoError(t, err)
		assert.Equal(t, "open", kept.Status)
		assert.Equal(t, 1, kept.ApprovalsSoFar, "the verdict Gus returned while a guest stands")
		assert.Contains(t, []string(kept.ReviewerIDs), gus.ID)
	})
}
