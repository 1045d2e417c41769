package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/worker"
	"github.com/assent-hq/assent/workflows"
)

// stack is the fixture plus a namespace of the test binary's one
// in-process Temporal server (temporalenv) with a worker,
// and the people approvals resolve against:
//   - Ada: owner (the fixture's member), Bob: admin, Cy: member, Dee: inactive;
//   - the team Finance (Bob, Cy); the guest gus@partner.example;
//   - ops@example.com is both a member and a team's name.
type stack struct {
	*fixture
	tc                client.Client
	bob, cy           *models.Member
	bobToken, cyToken string
	team              *models.Team
}

func newStack(t *testing.T, db *gorm.DB) *stack { return newStackWith(t, db, netguard.Public) }

// newStackWith uses policy for receiver addresses in the API and worker.
func newStackWith(t *testing.T, db *gorm.DB, policy *netguard.Policy) *stack {
	return newStackWorker(t, db, policy, worker.Deps{})
}

// newStackWorker is newStackWith whose worker also has extra's settings
// (Slack's API address, a mailbox).
func newStackWorker(t *testing.T, db *gorm.DB, policy *netguard.Policy, extra worker.Deps) *stack {
	t.Helper()
	ctx := context.Background()
	tc := temporalenv.Client(t)
	f := newFixtureWith(t, db, tc, policy)
	temporalenv.Run(t, tc, worker.Deps{Store: f.store, BaseURL: "http://assent.test", NetPolicy: policy, SlackAPIURL: extra.SlackAPIURL,
		Mailer: extra.Mailer})

	s := &stack{fixture: f, tc: tc}
	st := f.store
	var err error
	s.bob, err = st.CreateMember(ctx, f.org.ID, "bob@example.com", "Bob", models.RoleAdmin)
	require.NoError(t, err)
	s.cy, err = st.CreateMember(ctx, f.org.ID, "cy@example.com", "", models.RoleMember)
	require.NoError(t, err)
	dee, err := st.CreateMember(ctx, f.org.ID, "dee@example.com", "Dee", "")
	require.NoError(t, err)
	inactive := false
	testenv.ChangeMember(t, st, f.org.ID, dee.ID, func(m *models.Member) { m.Active = inactive })
	_, s.bobToken, err = st.CreateMemberToken(ctx, f.org.ID, s.bob.ID)
	require.NoError(t, err)
	_, s.cyToken, err = st.CreateMemberToken(ctx, f.org.ID, s.cy.ID)
	require.NoError(t, err)
	s.team, err = testenv.CreateTeam(st, ctx, f.org.ID, "Finance", models.TeamKindTeam, []string{s.bob.ID, s.cy.ID})
	require.NoError(t, err)
	_, err = st.CreateMember(ctx, f.org.ID, "ops@example.com", "", "")
	require.NoError(t, err)
	_, err = testenv.CreateTeam(st, ctx, f.org.ID, "ops@example.com", models.TeamKindGroup, []string{s.bob.ID})
	require.NoError(t, err)
	_, _, err = st.CreateGuest(ctx, f.org.ID, "gus@partner.example", "")
	require.NoError(t, err)
	return s
}

// create posts an approval and returns its id, failing unless it is 201.
func (s *stack) create(t *testing.T, key, body string) map[string]any {
	t.Helper()
	r := s.do(t, "POST", "/api/v1/approvals", key, body, nil)
	require.Equal(t, 201, r.status, string(r.body))
	return r.decoded
}

// longPoll GETs path as the agent, waiting up to 30 s for it to settle;
// what it returns waits for the answer.
func (s *stack) longPoll(t *testing.T, path string) func() response {
	answer := make(chan response, 1)
	go func() {
		var r response
		// Sent even when s.do fails the test and ends this goroutine.
		defer func() { answer <- r }()
		r = s.do(t, "GET", path+"?wait=30s", s.agentKey, "", nil)
	}()
	return func() response { return <-answer }
}

// events are the outbox's events of id, oldest first, and their kinds.
func (s *stack) events(t *testing.T, id string) ([]models.Event, []string) {
	t.Helper()
	evs, err := s.store.ListEvents(context.Background(), s.org.ID, id)
	require.NoError(t, err)
	kinds := make([]string, len(evs))
	for i, e := range evs {
		kinds[i] = e.Kind
	}
	return evs, kinds
}

func TestCreateApprovalValidation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		flow := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"done job"}`, nil)
		require.Equal(t, 201, flow.status, string(flow.body))
		done := flow.decoded["id"].(string)
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/flows/"+done+"/complete", s.agentKey, "", nil).status)

		many := func(n int, item string) string {
			return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
		}
		past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
		tooFar := time.Now().Add(31 * 24 * time.Hour).UTC().Format(time.RFC3339)
		cases := []struct {
			name, key, body string
			status          int
			code, field     string
		}{
			{"title missing", s.agentKey, `{}`, 400, "invalid_request", "title"},
			{"title blank", s.agentKey, `{"title":"   "}`, 400, "invalid_request", "title"},
			{"title too long", s.agentKey, `{"title":"` + strings.Repeat("é", 201) + `"}`, 400, "invalid_request", "title"},
			{"title wrong type", s.agentKey, `{"title":5}`, 400, "invalid_request", "title"},
			{"unknown field", s.agentKey, `{"title":"x","titel":"y"}`, 400, "invalid_request", "titel"},
			{"malformed JSON", s.agentKey, `{"title":`, 400, "invalid_request", ""},
			{"input with a key twice", s.agentKey, `{"title":"x","input":{"amount":100,"amount":5}}`, 400, "invalid_request", "input.amount"},
			{"input with a lone surrogate", s.agentKey, `{"title":"x","input":{"name":"\ud800"}}`, 400, "invalid_request", "input"},
			{"input beyond a double", s.agentKey, `{"title":"x","input":{"amount":1e400}}`, 400, "invalid_request", "input.amount"},
			{"risk", s.agentKey, `{"title":"x","risk":"extreme"}`, 400, "invalid_request", "risk"},
			{"too many factors", s.agentKey, `{"title":"x","factors":` + many(21, `{"label":"a","status":"ok"}`) + `}`, 400, "invalid_request", "factors"},
			{"factor status", s.agentKey, `{"title":"x","factors":[{"label":"a","status":"bad"}]}`, 400, "invalid_request", "factors[0].status"},
			{"too many links", s.agentKey, `{"title":"x","links":` + many(11, `{"label":"a","url":"https://a.example"}`) + `}`, 400, "invalid_request", "links"},
			{"link url", s.agentKey, `{"title":"x","links":[{"label":"a","url":"not a url"}]}`, 400, "invalid_request", "links[0].url"},
			{"too many approvers", s.agentKey, `{"title":"x","approvers":` + many(21, `"bob@example.com"`) + `}`, 400, "invalid_request", "approvers"},
			{"blank approver", s.agentKey, `{"title":"x","approvers":["bob@example.com",""]}`, 400, "invalid_request", "approvers[1]"},
			{"approver not a string", s.agentKey, `{"title":"x","approvers":["bob@example.com",5]}`, 400, "invalid_request", "approvers[1]"},
			{"factor label not a string", s.agentKey, `{"title":"x","factors":[{"label":"a","status":"ok"},{"label":7,"status":"ok"}]}`, 400, "invalid_request", "factors[1].label"},
			{"unknown approver", s.agentKey, `{"title":"x","approvers":["nobody@example.com","bob@example.com"]}`, 400, "unknown_approver", "approvers"},
			{"inactive approver", s.agentKey, `{"title":"x","approvers":["dee@example.com"]}`, 400, "unknown_approver", "approvers"},
			{"guest not allowed", s.agentKey, `{"title":"x","approvers":["gus@partner.example"]}`, 400, "unknown_approver", "approvers"},
			{"ambiguous approver", s.agentKey, `{"title":"x","approvers":["bob@example.com","ops@example.com"]}`, 400, "ambiguous_approver", "approvers[1]"},
			{"expiry in the past", s.agentKey, `{"title":"x","expiresAt":"` + past + `"}`, 400, "invalid_request", "expiresAt"},
			{"expiry beyond maximum", s.agentKey, `{"title":"x","expiresAt":"` + tooFar + `"}`, 400, "invalid_request", "expiresAt"},
			{"expiry malformed", s.agentKey, `{"title":"x","expiresAt":"tomorrow"}`, 400, "invalid_request", "expiresAt"},
			{"metadata not an object", s.agentKey, `{"title":"x","metadata":[1]}`, 400, "invalid_request", "metadata"},
			{"input not an object", s.agentKey, `{"title":"x","input":"rm -rf"}`, 400, "invalid_request", "input"},
			{"editable field not in input", s.agentKey, `{"title":"x","input":{"a":1},"editableFields":["b"]}`, 400, "invalid_request", "editableFields[0]"},
			{"editable field not flat", s.agentKey, `{"title":"x","input":{"a":1,"b":{"c":2}},"editableFields":["a","b"]}`, 400, "invalid_request", "editableFields[1]"},
			{"callback not https", s.agentKey, `{"title":"x","callbackUrl":"http://93.184.216.34/hook"}`, 400, "invalid_callback_url", "callbackUrl"},
			{"callback private", s.agentKey, `{"title":"x","callbackUrl":"https://10.0.0.7/hook"}`, 400, "invalid_callback_url", "callbackUrl"},
			{"callback metadata address", s.agentKey, `{"title":"x","callbackUrl":"https://169.254.169.254/"}`, 400, "invalid_callback_url", "callbackUrl"},
			{"callback loopback name", s.agentKey, `{"title":"x","callbackUrl":"https://localhost/hook"}`, 400, "invalid_callback_url", "callbackUrl"},
			{"unknown flow", s.agentKey, `{"title":"x","flowId":"flw_nope"}`, 400, "invalid_request", "flowId"},
			{"completed flow", s.agentKey, `{"title":"x","flowId":"` + done + `"}`, 409, "invalid_state", "flowId"},
			{"read-only key", s.readOnlyKey, `{"title":"x"}`, 403, "insufficient_scope", ""},
			{"no key", "", `{"title":"x"}`, 401, "unauthorized", ""},
		}
		for _, tc := range cases {
			r := s.do(t, "POST", "/api/v1/approvals", tc.key, tc.body, nil)
			assert.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.body)
			assert.Equal(t, tc.code, errField(r, "code"), tc.name)
			assert.Equal(t, tc.field, errField(r, "field"), "%s: %s", tc.name, r.body)
			if tc.code == "unknown_approver" {
				assert.NotContains(t, errField(r, "message"), "bob@example.com", "only the unknown entries are named")
			}
		}
		// Limits read as people write them.
		far := s.do(t, "POST", "/api/v1/approvals", s.agentKey, `{"title":"x","expiresAt":"`+tooFar+`"}`, nil)
		assert.Contains(t, errField(far, "message"), "at most 30 days ahead", string(far.body))
		r := s.do(t, "POST", "/api/v1/approvals", s.agentKey, `{"title":"x","approvers":["ops@example.com"]}`, nil)
		e := r.decoded["error"].(map[string]any)
		assert.Len(t, e["candidates"], 2, "an ambiguous name lists the person and the team")

		list := s.do(t, "GET", "/api/v1/approvals", s.agentKey, "", nil)
		assert.Empty(t, list.decoded["data"], "no refused request left anything behind")
	})
}

func TestCreateApprovalDefaultsAndResolution(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		before := time.Now()
		a := s.create(t, s.agentKey, `{"title":"Pay invoice","metadata":{"b":2,"a":[1,2]},"input":{"amount":9007199254740992.00},
			"externalId":"inv-7","callbackUrl":"https://93.184.216.34/hook"}`)
		assert.Equal(t, "pending", a["status"])
		assert.Equal(t, "medium", a["risk"])
		assert.Equal(t, "http://assent.test/approvals/"+a["id"].(string), a["url"])
		assert.Equal(t, "inv-7", a["externalId"])
		assert.Equal(t, "agent", a["requestedBy"])
		assert.Equal(t, []any{}, a["questions"])
		assert.Equal(t, []any{}, a["concerns"])
		assert.Nil(t, a["decidedBy"])
		assert.NotContains(t, a, "requiredApprovals", "shown only when a rule needs more than one approval")
		secret, _ := a["callbackSecret"].(string)
		assert.True(t, strings.HasPrefix(secret, "asnt_cbs_"), "the create response carries the callback secret")
		exp, err := time.Parse(time.RFC3339, a["expiresAt"].(string))
		require.NoError(t, err)
		assert.WithinDuration(t, before.Add(30*24*time.Hour), exp, time.Minute, "no expiry means the organisation's maximum")

		got := s.do(t, "GET", "/api/v1/approvals/"+a["id"].(string), s.agentKey, "", nil)
		require.Equal(t, 200, got.status)
		assert.NotContains(t, got.decoded, "callbackSecret", "the secret is shown once")
		// The create answers with the record it wrote, as a read shows it
		// (but for the secret, and the time the first step was written).
		for field, v := range got.decoded {
			if field != "updatedAt" {
				assert.Equal(t, v, a[field], "the create's %s is the read's", field)
			}
		}
		assert.Len(t, a, len(got.decoded)+1, "the create adds only the callback secret")
		assert.Contains(t, string(got.body), `"metadata":{"b":2,"a":[1,2]}`, "metadata returned unchanged")
		assert.Contains(t, string(got.body), `"input":{"amount":9007199254740992.00}`, "input returned unchanged: 2^53 is taken, spelt as sent")

		// Who will decide is in the answer, though the request named nobody.
		assert.Equal(t, []any{}, a["approvers"])
		byDefault := []any{map[string]any{"field": "approvers", "kind": "default", "name": "the owners and administrators"}}
		assert.ElementsMatch(t, []any{
			map[string]any{"id": s.member.ID, "name": "Ada", "email": "ada@example.com", "kind": "member", "via": byDefault},
			map[string]any{"id": s.bob.ID, "name": "Bob", "email": "bob@example.com", "kind": "member", "via": byDefault},
		}, a["resolvedApprovers"])
		assert.Equal(t, a["resolvedApprovers"], got.decoded["resolvedApprovers"])

		// Default approvers are the owners and administrators; a team is
		// expanded once, at creation.
		rec, err := approvals.Records(s.store).Get(context.Background(), s.org.ID, a["id"].(string))
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{s.member.ID, s.bob.ID}, []string(rec.ApproverIDs))

		team := s.create(t, s.agentKey, `{"title":"t","approvers":["Finance","bob@example.com"]}`)
		rec, err = approvals.Records(s.store).Get(context.Background(), s.org.ID, team["id"].(string))
		require.NoError(t, err)
		assert.Equal(t, []string{s.bob.ID, s.cy.ID}, []string(rec.ApproverIDs))
		finance := models.Via{Field: "approvers", Kind: models.TeamKindTeam, ID: s.team.ID, Name: "Finance"}
		assert.Equal(t, []models.Via{finance, {Field: "approvers", Kind: models.ApproverMember, ID: s.bob.ID, Name: "Bob"}}, rec.ResolvedApprovers[0].Via,
			"Bob was named twice: through Finance and by email")
		assert.Equal(t, []models.Via{finance}, rec.ResolvedApprovers[1].Via)
		require.NoError(t, s.store.DB().Model(s.team).Association("Members").Clear())
		rec, err = approvals.Records(s.store).Get(context.Background(), s.org.ID, team["id"].(string))
		require.NoError(t, err)
		assert.Equal(t, []string{s.bob.ID, s.cy.ID}, []string(rec.ApproverIDs), "later membership changes do not move it")

		everyone := s.create(t, s.agentKey, `{"title":"e","approvers":["everyone"]}`)
		rec, err = approvals.Records(s.store).Get(context.Background(), s.org.ID, everyone["id"].(string))
		require.NoError(t, err)
		assert.Len(t, rec.ApproverIDs, 4, "every active member: Ada, Bob, Cy, ops")

		// Guests approve once the organisation allows it.
		r := s.do(t, "PATCH", "/api/v1/admin/organization", s.adminKey, `{"guestsMayApprove":true}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		guest := s.create(t, s.agentKey, `{"title":"g","approvers":["gus@partner.example"]}`)
		require.Len(t, guest["resolvedApprovers"], 1)
		gus := guest["resolvedApprovers"].([]any)[0].(map[string]any)
		assert.Equal(t, "guest", gus["kind"])
		assert.Equal(t, "gus@partner.example", gus["email"])

		// The workflow runs with the search attributes an operator filters by.
		waitFor(t, func() bool {
			d, err := s.tc.DescribeWorkflowExecution(context.Background(), approvals.WorkflowID(a["id"].(string)), "")
			if err != nil {
				return false
			}
			fields := d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
			return strings.Contains(string(fields["AssentStatus"].GetData()), "pending") &&
				strings.Contains(string(fields["AssentExternalId"].GetData()), "inv-7") &&
				strings.Contains(string(fields["AssentOrganization"].GetData()), s.org.ID)
		})

		list := s.do(t, "GET", "/api/v1/approvals?externalId=inv-7", s.agentKey, "", nil)
		require.Equal(t, 200, list.status)
		assert.Len(t, list.decoded["data"], 1)
		mine := list.decoded["data"].([]any)[0].(map[string]any)
		assert.Equal(t, a["requestedById"], mine["requestedById"])
		assert.True(t, strings.HasPrefix(mine["requestedById"].(string), "key_"), "the key that asked")
		// An externalId is the caller's own reference: another key of the
		// organisation finds only what it made with the same one.
		_, second, err := s.store.CreateKey(context.Background(), s.org.ID, "second agent", models.KeyAgent, scopes.All)
		require.NoError(t, err)
		assert.Empty(t, s.do(t, "GET", "/api/v1/approvals?externalId=inv-7", second, "", nil).decoded["data"],
			"another key's request with the same externalId is not listed")
		theirs := s.create(t, second, `{"title":"same reference","externalId":"inv-7"}`)
		byRef := s.do(t, "GET", "/api/v1/approvals?externalId=inv-7", second, "", nil).decoded["data"].([]any)
		require.Len(t, byRef, 1)
		assert.Equal(t, theirs["id"], byRef[0].(map[string]any)["id"])
		assert.Len(t, s.do(t, "GET", "/api/v1/approvals?externalId=inv-7", s.agentKey, "", nil).decoded["data"], 1)
		assert.Len(t, list.decoded["data"].([]any)[0].(map[string]any)["resolvedApprovers"], 2, "lists show them too")
		bad := s.do(t, "GET", "/api/v1/approvals?status=done", s.agentKey, "", nil)
		assert.Equal(t, "status", errField(bad, "field"))
		other := s.do(t, "GET", "/api/v1/approvals/"+a["id"].(string), s.otherAgent, "", nil)
		assert.Equal(t, 404, other.status, "another organisation's approval does not exist for the caller")
		assert.Empty(t, s.do(t, "GET", "/api/v1/approvals", s.otherAgent, "", nil).decoded["data"])
		cancel := s.do(t, "POST", "/api/v1/approvals/"+a["id"].(string)+"/cancel", s.otherAgent, "", nil)
		assert.Equal(t, 404, cancel.status, "nor can it be cancelled from there")
	})
}

// waitFor waits for something the workers do. The bound is generous: the
// full suite shares two cores with the crash and cluster tests, where a
// timer and two delivery workflows once took longer than 15 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 45*time.Second, 50*time.Millisecond)
}

// TestApprovalLifecycle walks one request through questions, refusals and
// an approval with a correction, checking every rule on the way.
func TestApprovalLifecycle(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		a := s.create(t, s.agentKey, `{"title":"Refund","approvers":["Finance"],
			"input":{"amount":100,"currency":"EUR","urgent":false},"editableFields":["amount","urgent"]}`)
		id := a["id"].(string)
		path := "/api/v1/approvals/" + id

		inbox := s.do(t, "GET", "/api/v1/inbox", s.cyToken, "", nil)
		require.Equal(t, 200, inbox.status, string(inbox.body))
		assert.Len(t, inbox.decoded["data"], 1, "Cy may decide it")
		assert.Empty(t, s.do(t, "GET", "/api/v1/inbox", s.memberToken, "", nil).decoded["data"], "Ada is not an approver")
		assert.Equal(t, 403, s.do(t, "GET", "/api/v1/inbox", s.agentKey, "", nil).status, "an inbox belongs to a person")

		// A long-poll started now returns when the request settles.
		poll := s.longPoll(t, path)

		steps := []struct {
			name, key, sub, body string
			status               int
			code, field          string
		}{
			{"not an approver", s.memberToken, "/decision", `{"decision":"approve"}`, 403, "not_an_approver", ""},
			{"agent keys do not decide", s.agentKey, "/decision", `{"decision":"approve"}`, 403, "forbidden", ""},
			{"decision value", s.bobToken, "/decision", `{"decision":"maybe"}`, 400, "invalid_request", "decision"},
			{"ask", s.bobToken, "/questions", `{"question":"Which customer?"}`, 201, "", ""},
			{"second open question", s.cyToken, "/questions", `{"question":"And?"}`, 409, "question_pending", ""},
			{"question blocks decisions", s.cyToken, "/decision", `{"decision":"approve"}`, 409, "question_pending", ""},
			{"only the requester answers", s.cyToken, "/answers", `{"questionId":"QID","answer":"me"}`, 403, "not_the_requester", ""},
			{"unknown question", s.agentKey, "/answers", `{"questionId":"qst_nope","answer":"x"}`, 404, "question_not_found", ""},
			{"answer", s.agentKey, "/answers", `{"questionId":"QID","answer":"ACME Ltd"}`, 200, "", ""},
			{"answered twice", s.agentKey, "/answers", `{"questionId":"QID","answer":"Other"}`, 409, "already_answered", ""},
			{"correction of a field not editable", s.bobToken, "/decision", `{"decision":"approve","corrections":{"currency":"USD"}}`, 400, "invalid_request", "corrections.currency"},
			{"correction changes type", s.bobToken, "/decision", `{"decision":"approve","corrections":{"amount":"80"}}`, 400, "invalid_request", "corrections.amount"},
			{"correction adds a field", s.bobToken, "/decision", `{"decision":"approve","corrections":{"extra":1}}`, 400, "invalid_request", "corrections.extra"},
			{"correction beyond a double", s.bobToken, "/decision", `{"decision":"approve","corrections":{"amount":1e400}}`, 400, "invalid_request", "corrections.amount"},
			{"approve with a correction", s.bobToken, "/decision", `{"decision":"approve","note":"ok at 80","corrections":{"amount":80}}`, 200, "", ""},
			{"decide a settled request", s.cyToken, "/decision", `{"decision":"reject"}`, 409, "invalid_state", ""},
			{"cancel a settled request", s.agentKey, "/cancel", ``, 409, "invalid_state", ""},
			{"ask on a settled request", s.cyToken, "/questions", `{"question":"late?"}`, 409, "invalid_state", ""},
		}
		questionID := ""
		for _, st := range steps {
			body := strings.ReplaceAll(st.body, "QID", questionID)
			r := s.do(t, "POST", path+st.sub, st.key, body, nil)
			require.Equal(t, st.status, r.status, "%s: %s", st.name, r.body)
			assert.Equal(t, st.code, errField(r, "code"), st.name)
			assert.Equal(t, st.field, errField(r, "field"), st.name)
			if st.name == "ask" {
				questionID = r.decoded["questionId"].(string)
				assert.Equal(t, "Bob", r.decoded["askedBy"])
				assert.Nil(t, r.decoded["answer"])
			}
		}

		polled := poll()
		assert.Equal(t, 200, polled.status)
		assert.Equal(t, "approved", polled.decoded["status"], "the long-poll returned the outcome")

		got := s.do(t, "GET", path, s.agentKey, "", nil).decoded
		assert.Equal(t, "approved", got["status"])
		assert.Equal(t, map[string]any{"amount": 80.0, "currency": "EUR", "urgent": false}, got["approvedInput"])
		assert.Equal(t, []any{map[string]any{"field": "amount", "from": 100.0, "to": 80.0}}, got["changes"])
		assert.Equal(t, "Bob", got["decidedBy"])
		assert.Equal(t, s.bob.ID, got["decidedById"])
		assert.Equal(t, "ok at 80", got["note"])
		assert.NotNil(t, got["decidedAt"])
		q := got["questions"].([]any)[0].(map[string]any)
		assert.Equal(t, "ACME Ltd", q["answer"], "the first answer stays readable")
		assert.Empty(t, s.do(t, "GET", "/api/v1/inbox", s.cyToken, "", nil).decoded["data"], "settled requests leave the inbox")

		// Every transition reached the outbox with the approval as data.
		events, kinds := s.events(t, id)
		assert.Equal(t, []string{"approval.requested", "approval.question", "approval.answered", "approval.approved"}, kinds)
		var data map[string]any
		require.NoError(t, json.Unmarshal(events[3].Data, &data))
		assert.Equal(t, got["approvedInput"], data["approvedInput"])
		assert.Equal(t, got["changes"], data["changes"])
	})
}

func TestApprovalRejectCancelExpireAndMemberRequests(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)

		rej := s.create(t, s.agentKey, `{"title":"r","approvers":["cy@example.com"]}`)
		r := s.do(t, "POST", "/api/v1/approvals/"+rej["id"].(string)+"/decision", s.cyToken, `{"decision":"reject","note":"not now"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "rejected", r.decoded["status"])
		assert.Equal(t, "not now", r.decoded["note"])
		assert.Equal(t, "cy@example.com", r.decoded["decidedBy"], "no name: the email")

		can := s.create(t, s.agentKey, `{"title":"c"}`)
		// Only the requester, an owner or an administrator withdraws it.
		_, otherAgent, err := s.store.CreateKey(context.Background(), s.org.ID, "other agent", models.KeyAgent, []string{"approvals:write"})
		require.NoError(t, err)
		for _, stranger := range []string{otherAgent, s.cyToken} {
			r = s.do(t, "POST", "/api/v1/approvals/"+can["id"].(string)+"/cancel", stranger, "", nil)
			assert.Equal(t, 403, r.status, string(r.body))
			assert.Equal(t, "forbidden", errField(r, "code"))
		}
		r = s.do(t, "POST", "/api/v1/approvals/"+can["id"].(string)+"/cancel", s.agentKey, "", nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "cancelled", r.decoded["status"])
		r = s.do(t, "POST", "/api/v1/approvals/"+can["id"].(string)+"/decision", s.bobToken, `{"decision":"approve"}`, nil)
		assert.Equal(t, 409, r.status)
		assert.Equal(t, "invalid_state", errField(r, "code"))
		assert.Contains(t, errField(r, "message"), "cancelled")

		// The requester, a person, cannot approve their own request, but
		// answers its questions.
		own := s.create(t, s.bobToken, `{"title":"mine","approvers":["Finance"]}`)
		assert.Equal(t, "Bob", own["requestedBy"])
		ownPath := "/api/v1/approvals/" + own["id"].(string)
		r = s.do(t, "POST", ownPath+"/decision", s.bobToken, `{"decision":"approve"}`, nil)
		assert.Equal(t, 403, r.status)
		assert.Equal(t, "not_an_approver", errField(r, "code"))
		q := s.do(t, "POST", ownPath+"/questions", s.cyToken, `{"question":"why?"}`, nil)
		require.Equal(t, 201, q.status, string(q.body))
		r = s.do(t, "POST", ownPath+"/answers", s.agentKey, fmt.Sprintf(`{"questionId":%q,"answer":"x"}`, q.decoded["questionId"]), nil)
		assert.Equal(t, "not_the_requester", errField(r, "code"), "the agent is not the requester here")
		r = s.do(t, "POST", ownPath+"/answers", s.bobToken, fmt.Sprintf(`{"questionId":%q,"answer":"because"}`, q.decoded["questionId"]), nil)
		assert.Equal(t, 200, r.status, string(r.body))

		// Expiry at expiresAt, seen through a long-poll.
		exp := s.create(t, s.agentKey, fmt.Sprintf(`{"title":"soon","expiresAt":%q}`, time.Now().Add(2*time.Second).UTC().Format(time.RFC3339Nano)))
		r = s.do(t, "GET", "/api/v1/approvals/"+exp["id"].(string)+"?wait=20", s.agentKey, "", nil)
		assert.Equal(t, "expired", r.decoded["status"])

		// A long-poll on a request that stays pending returns at its time.
		start := time.Now()
		r = s.do(t, "GET", "/api/v1/approvals/"+own["id"].(string)+"?wait=1s", s.agentKey, "", nil)
		assert.Equal(t, "pending", r.decoded["status"])
		assert.GreaterOrEqual(t, time.Since(start), time.Second)
		long := s.do(t, "GET", "/api/v1/approvals/"+own["id"].(string)+"?wait=61s", s.agentKey, "", nil)
		assert.Equal(t, "wait", errField(long, "field"))
		assert.Contains(t, errField(long, "message"), "from 0 to 1 minute")

		// A retried decision with the same Idempotency-Key runs once.
		dup := s.create(t, s.agentKey, `{"title":"d","approvers":["cy@example.com"]}`)
		hdr := map[string]string{"Idempotency-Key": "decide-1"}
		first := s.do(t, "POST", "/api/v1/approvals/"+dup["id"].(string)+"/decision", s.cyToken, `{"decision":"approve"}`, hdr)
		again := s.do(t, "POST", "/api/v1/approvals/"+dup["id"].(string)+"/decision", s.cyToken, `{"decision":"approve"}`, hdr)
		require.Equal(t, 200, first.status, string(first.body))
		assert.Equal(t, first.body, again.body)
		assert.Equal(t, "true", again.header.Get("Idempotency-Replayed"))
	})
}

// failingStart is a Temporal client whose workflow starts fail, as when
// the cluster is unreachable at the moment of creation.
type failingStart struct{ client.Client }

func (failingStart) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	return nil, fmt.Errorf("connection refused")
}

// startAnsweredLate is a Temporal client whose workflow starts go
// through but answer an error, as when the answer is lost to a timeout.
type startAnsweredLate struct{ client.Client }

func (c startAnsweredLate) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if _, err := c.Client.ExecuteWorkflow(ctx, o, wf, args...); err != nil {
		return nil, err
	}
	return nil, context.DeadlineExceeded
}

// startLandsLate is a Temporal client whose workflow starts answer an
// error at once and are kept, for the test to let them land afterwards.
type startLandsLate struct {
	client.Client
	kept *keptStart
}

type keptStart struct {
	id   string
	land func() error
}

func (c startLandsLate) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	c.kept.id = o.ID
	c.kept.land = func() error { _, err := c.Client.ExecuteWorkflow(context.Background(), o, wf, args...); return err }
	return nil, context.DeadlineExceeded
}

// TestAStartWhoseAnswerWasLost: a workflow start that went through but
// answered a timeout still creates the request (the workflow is looked
// for before the record is taken back); one that lands after the record
// was taken back ends its workflow at once instead of retrying forever.
func TestAStartWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		late := newFixtureWith(t, db, startAnsweredLate{s.tc})
		r := late.do(t, "POST", "/api/v1/approvals", late.agentKey, `{"title":"Refund","approvers":["ada@example.com"]}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		id := r.decoded["id"].(string)
		waitFor(t, func() bool {
			got, err := approvals.Records(s.store).Get(ctx, late.org.ID, id)
			return err == nil && got.Seq >= 1
		})

		kept := &keptStart{}
		lost := newFixtureWith(t, db, startLandsLate{s.tc, kept})
		r = lost.do(t, "POST", "/api/v1/approvals", lost.agentKey, `{"title":"Refund","approvers":["ada@example.com"]}`, nil)
		require.Equal(t, 503, r.status, string(r.body))
		assert.Empty(t, lost.do(t, "GET", "/api/v1/approvals", lost.agentKey, "", nil).decoded["data"], "taken back")
		require.NotNil(t, kept.land)
		require.NoError(t, kept.land())
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err := s.tc.GetWorkflow(wait, kept.id, "").Get(wait, nil)
		var app *temporal.ApplicationError
		require.ErrorAs(t, err, &app, "the workflow ended")
		assert.Equal(t, workflows.ErrRequestMissing, app.Type())
	})
}

func TestFailedStartLeavesNothingAndReconcilerStartsOrphans(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		broken := newFixtureWith(t, db, failingStart{s.tc})
		r := broken.do(t, "POST", "/api/v1/approvals", broken.agentKey, `{"title":"x"}`, nil)
		assert.Equal(t, 503, r.status, string(r.body))
		assert.Equal(t, "service_unavailable", errField(r, "code"))
		assert.Empty(t, broken.do(t, "GET", "/api/v1/approvals", broken.agentKey, "", nil).decoded["data"], "nothing was created")

		// A process that died between the insert and the start leaves a
		// record with no workflow; the reconciler starts it.
		ctx := context.Background()
		rec := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: s.org.ID, Title: "orphan",
			ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_x", RequestedBy: "agent"}, Risk: "low", ApproverIDs: models.StringList{s.cy.ID},
			RequiredApprovals: 1}
		_, err := requests.Insert(ctx, s.store, approvals.Records(s.store), rec, nil)
		require.NoError(t, err)
		n, err := requests.Reconcile(ctx, time.Now().Add(requests.ReconcileGrace), 10, approvals.New(approvals.Deps{Store: s.store, Temporal: s.tc}))
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		waitFor(t, func() bool {
			got, err := approvals.Records(s.store).Get(ctx, s.org.ID, rec.ID)
			return err == nil && got.Seq == 1
		})
		r = s.do(t, "POST", "/api/v1/approvals/"+rec.ID+"/decision", s.cyToken, `{"decision":"approve"}`, nil)
		assert.Equal(t, 200, r.status, string(r.body))
		n, err = requests.Reconcile(ctx, time.Now().Add(requests.ReconcileGrace), 10, approvals.New(approvals.Deps{Store: s.store, Temporal: s.tc}))
		require.NoError(t, err)
		assert.Zero(t, n, "an owned record is left alone")

		// Decided before the reconciler comes, an orphan's workflow is
		// started by the decision.
		early := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: s.org.ID, Title: "early orphan",
			ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_x", RequestedBy: "agent"}, Risk: "low", ApproverIDs: models.StringList{s.cy.ID},
			RequiredApprovals: 1}
		_, err = requests.Insert(ctx, s.store, approvals.Records(s.store), early, nil)
		require.NoError(t, err)
		r = s.do(t, "POST", "/api/v1/approvals/"+early.ID+"/decision", s.cyToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "approved", r.decoded["status"])
	})
}

// countingStarts counts the workflow starts a client is asked for.
type countingStarts struct {
	client.Client
	starts atomic.Int32
}

func (c *countingStarts) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	c.starts.Add(1)
	return c.Client.ExecuteWorkflow(ctx, o, wf, args...)
}

// TestReconcilerLeavesABacklogToTheWorkers: a record whose workflow
// exists but has not run its first step (the workers are behind) stops
// the reconciler's pass without a start, so a backlog of thousands does
// not cost Temporal a refused start each, every pass; once the backlog
// moves on, an orphan behind it is started.
func TestReconcilerLeavesABacklogToTheWorkers(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		record := func(title string) *approvals.Approval {
			rec := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: s.org.ID, Title: title,
				ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: "key_x", RequestedBy: "agent"}, Risk: "low", ApproverIDs: models.StringList{s.cy.ID},
				RequiredApprovals: 1}
			_, err := requests.Insert(ctx, s.store, approvals.Records(s.store), rec, nil)
			require.NoError(t, err)
			return rec
		}
		// The queued one's workflow waits on a task queue no worker polls.
		queued := record("queued")
		_, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: approvals.WorkflowID(queued.ID), TaskQueue: "nobody-polls"}, approvals.WorkflowType, nil)
		require.NoError(t, err)
		orphan := record("orphan")

		counting := &countingStarts{Client: s.tc}
		svc := approvals.New(approvals.Deps{Store: s.store, Temporal: counting})
		n, err := requests.Reconcile(ctx, time.Now().Add(requests.ReconcileGrace), 10, svc)
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Zero(t, counting.starts.Load(), "no start is tried behind a record the workers have yet to take up")

		require.NoError(t, s.tc.TerminateWorkflow(ctx, approvals.WorkflowID(queued.ID), "", "test"))
		require.NoError(t, db.Delete(&approvals.Approval{}, "id = ?", queued.ID).Error)
		n, err = requests.Reconcile(ctx, time.Now().Add(requests.ReconcileGrace), 10, svc)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		waitFor(t, func() bool {
			got, err := approvals.Records(s.store).Get(ctx, s.org.ID, orphan.ID)
			return err == nil && got.Seq == 1
		})
	})
}

func TestFlows(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		f := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"Quarter close","externalId":"q4"}`, nil)
		require.Equal(t, 201, f.status, string(f.body))
		id := f.decoded["id"].(string)
		assert.Equal(t, true, f.decoded["allSettled"])

		a := s.create(t, s.agentKey, fmt.Sprintf(`{"title":"Pay","approvers":["cy@example.com"],"flowId":%q}`, id))
		// Attaching needs approvals:write, not flows:write.
		_, narrow, err := s.store.CreateKey(context.Background(), s.org.ID, "narrow", models.KeyAgent, []string{"approvals:write", "approvals:read"})
		require.NoError(t, err)
		s.create(t, narrow, fmt.Sprintf(`{"title":"Also","approvers":["cy@example.com"],"flowId":%q}`, id))

		got := s.do(t, "GET", "/api/v1/flows/"+id, s.agentKey, "", nil)
		require.Equal(t, 200, got.status, string(got.body))
		assert.Len(t, got.decoded["members"], 2)
		assert.Equal(t, false, got.decoded["allSettled"])

		require.Equal(t, 200, s.do(t, "POST", "/api/v1/approvals/"+a["id"].(string)+"/decision", s.cyToken, `{"decision":"approve"}`, nil).status)
		waitFor(t, func() bool {
			tl := s.do(t, "GET", "/api/v1/flows/"+id, s.agentKey, "", nil).decoded["timeline"].([]any)
			return len(tl) == 4 // flow created, two approvals created, one approved
		})
		got = s.do(t, "GET", "/api/v1/flows/"+id, s.agentKey, "", nil)
		var actions []string
		for _, step := range got.decoded["timeline"].([]any) {
			st := step.(map[string]any)
			actions = append(actions, st["subjectType"].(string)+":"+st["action"].(string))
		}
		assert.Equal(t, []string{"flow:created", "approval:created", "approval:created", "approval:approved"}, actions)
		last := got.decoded["timeline"].([]any)[3].(map[string]any)
		assert.Equal(t, "cy@example.com", last["actor"])

		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/flows/"+id+"/complete", narrow, "", nil).status, "narrow lacks flows:write")
		_, other, err := s.store.CreateKey(context.Background(), s.org.ID, "other", models.KeyAgent, []string{"flows:write", "flows:read"})
		require.NoError(t, err)
		r := s.do(t, "POST", "/api/v1/flows/"+id+"/complete", other, "", nil)
		assert.Equal(t, 403, r.status, "only the starter completes")
		assert.Equal(t, "forbidden", errField(r, "code"))
		r = s.do(t, "POST", "/api/v1/flows/"+id+"/complete", s.agentKey, "", nil)
		require.Equal(t, 200, r.status, string(r.body))
		r = s.do(t, "POST", "/api/v1/flows/"+id+"/cancel", s.agentKey, "", nil)
		assert.Equal(t, 409, r.status)
		r = s.do(t, "POST", "/api/v1/approvals", s.agentKey, fmt.Sprintf(`{"title":"late","flowId":%q}`, id), nil)
		assert.Equal(t, 409, r.status, "a completed flow takes no more requests")

		c := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"abandoned"}`, nil)
		r = s.do(t, "POST", "/api/v1/flows/"+c.decoded["id"].(string)+"/cancel", other, "", nil)
		assert.Equal(t, 403, r.status, "another agent may not call someone's flow off")
		r = s.do(t, "POST", "/api/v1/flows/"+c.decoded["id"].(string)+"/cancel", s.bobToken, "", nil)
		require.Equal(t, 200, r.status, "an administrator may, for the starter: %s", r.body)
		got = s.do(t, "GET", "/api/v1/flows/"+c.decoded["id"].(string), s.agentKey, "", nil)
		step := got.decoded["timeline"].([]any)[1].(map[string]any)
		assert.Equal(t, models.AsAdministrator, step["detail"])
		assert.Equal(t, 404, s.do(t, "GET", "/api/v1/flows/"+id, s.otherAgent, "", nil).status)
		assert.Equal(t, "title", errField(s.do(t, "POST", "/api/v1/flows", s.agentKey, `{}`, nil), "field"))
		blank := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"   "}`, nil)
		assert.Equal(t, "title", errField(blank, "field"))
		assert.Equal(t, "title is required", errField(blank, "message"))
	})
}

// crashingStart dies like a process killed between writing a record and
// starting its workflow: nothing after the write runs.
type crashingStart struct{ client.Client }

func (crashingStart) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	panic("killed")
}

// TestRetryAfterCrashResumes: a create whose process died after writing the
// record, and a decision whose response was never stored, are each
// completed by a retry with the same Idempotency-Key: one approval, its
// workflow started, and the decision's first outcome, not a 409.
func TestRetryAfterCrashResumes(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		dying := s.built
		dying.Temporal = crashingStart{s.tc}
		crashed := httptest.NewServer(api.New(api.Deps{
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), BaseURL: "http://assent.test", Services: app.Build(dying).API()}))
		defer crashed.Close()
		body := `{"title":"Pay","approvers":["cy@example.com"]}`
		key := map[string]string{"Idempotency-Key": "create-1"}
		dead := (&fixture{srv: crashed}).do(t, "POST", "/api/v1/approvals", s.agentKey, body, key)
		require.Equal(t, 500, dead.status, string(dead.body))

		r := s.do(t, "POST", "/api/v1/approvals", s.agentKey, body, key)
		require.Equal(t, 201, r.status, string(r.body))
		id := r.decoded["id"].(string)
		list := s.do(t, "GET", "/api/v1/approvals", s.agentKey, "", nil)
		require.Len(t, list.decoded["data"], 1, "the retry made no second approval")
		waitFor(t, func() bool {
			got, err := approvals.Records(s.store).Get(context.Background(), s.org.ID, id)
			return err == nil && got.Seq == 1
		})
		replay := s.do(t, "POST", "/api/v1/approvals", s.agentKey, body, key)
		assert.Equal(t, "true", replay.header.Get("Idempotency-Replayed"))
		assert.Equal(t, r.body, replay.body)

		// The same key from another caller is that caller's own request.
		other := s.do(t, "POST", "/api/v1/approvals", s.readOnlyKey, body, key)
		assert.Equal(t, 403, other.status, string(other.body))
		mine := s.do(t, "POST", "/api/v1/approvals", s.memberToken, body, key)
		require.Equal(t, 201, mine.status, string(mine.body))
		assert.NotEqual(t, id, mine.decoded["id"])

		// A decision whose process died before storing its response: the
		// retry answers the decision's own outcome.
		decide := map[string]string{"Idempotency-Key": "decide-1"}
		d := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve"}`, decide)
		require.Equal(t, 200, d.status, string(d.body))
		require.NoError(t, db.Model(&models.IdempotencyKey{}).Where("idempotency_key = ?", "decide-1").
			Updates(map[string]any{"completed": false, "response_body": nil}).Error)
		again := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve"}`, decide)
		require.Equal(t, 200, again.status, string(again.body))
		assert.Empty(t, again.header.Get("Idempotency-Replayed"), "run again, not replayed")
		assert.Equal(t, "approved", again.decoded["status"])
		// A different decision with a new key is refused as before.
		late := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"reject"}`, nil)
		assert.Equal(t, 409, late.status, string(late.body))
	})
}
