package api_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/worker"
)

// inDays is a delegation's time, days from now, as the API takes it.
func inDays(days float64) string {
	return time.Now().Add(time.Duration(days * float64(24*time.Hour))).UTC().Format(time.RFC3339)
}

// delegate sets token's person's delegation to to, until two days from
// now, failing unless it is set.
func (s *stack) delegate(t *testing.T, token, to string) map[string]any {
	t.Helper()
	r := s.do(t, "PUT", "/api/v1/me/delegation", token, `{"to":"`+to+`","until":"`+inDays(2)+`"}`, nil)
	require.Equal(t, 200, r.status, string(r.body))
	return r.decoded["delegation"].(map[string]any)
}

// member adds an active member with a token.
func (s *stack) memberWithToken(t *testing.T, email, name string) (*models.Member, string) {
	t.Helper()
	ctx := context.Background()
	m, err := s.store.CreateMember(ctx, s.org.ID, email, name, models.RoleMember)
	require.NoError(t, err)
	_, token, err := s.store.CreateMemberToken(ctx, s.org.ID, m.ID)
	require.NoError(t, err)
	return m, token
}

// emailsOf is the emails of a request's people asked (resolvedApprovers,
// resolvedRespondents, resolvedReviewers), in order.
func emailsOf(people any) []string {
	var emails []string
	for _, p := range people.([]any) {
		emails = append(emails, p.(map[string]any)["email"].(string))
	}
	return emails
}

// viaOf is how a request reached the person with email, from its list of
// people asked (resolvedApprovers, resolvedRespondents, resolvedReviewers).
func viaOf(t *testing.T, people any, email string) []any {
	t.Helper()
	for _, p := range people.([]any) {
		p := p.(map[string]any)
		if p["email"] == email {
			via, _ := p["via"].([]any)
			return via
		}
	}
	t.Fatalf("%s is not asked; %v are", email, emailsOf(people))
	return nil
}

func TestDelegationSetGetEnd(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		const path = "/api/v1/me/delegation"
		none := s.do(t, "GET", path, s.cyToken, "", nil)
		require.Equal(t, 200, none.status, string(none.body))
		assert.Nil(t, none.decoded["delegation"])
		assert.Equal(t, []any{}, none.decoded["delegatedToMe"])

		until := inDays(2)
		for _, tc := range []struct {
			name, key, body string
			status          int
			code, field     string
		}{
			{"yourself", s.cyToken, `{"to":"cy@example.com","until":"` + until + `"}`, 400, "invalid_request", "to"},
			{"nobody", s.cyToken, `{"to":"nobody@example.com","until":"` + until + `"}`, 400, "invalid_request", "to"},
			{"an inactive member", s.cyToken, `{"to":"dee@example.com","until":"` + until + `"}`, 400, "invalid_request", "to"},
			{"a guest", s.cyToken, `{"to":"gus@partner.example","until":"` + until + `"}`, 400, "invalid_request", "to"},
			{"a team", s.cyToken, `{"to":"Finance","until":"` + until + `"}`, 400, "invalid_request", "to"},
			{"everyone", s.cyToken, `{"to":"everyone","until":"` + until + `"}`, 400, "invalid_request", "to"},
			{"no until", s.cyToken, `{"to":"bob@example.com"}`, 400, "invalid_request", "until"},
			{"until past", s.cyToken, `{"to":"bob@example.com","until":"` + inDays(-1) + `"}`, 400, "invalid_request", "until"},
			{"until before from", s.cyToken, `{"to":"bob@example.com","from":"` + inDays(3) + `","until":"` + until + `"}`, 400, "invalid_request", "until"},
			{"from malformed", s.cyToken, `{"to":"bob@example.com","from":"Monday","until":"` + until + `"}`, 400, "invalid_request", "from"},
			{"unknown field", s.cyToken, `{"to":"bob@example.com","until":"` + until + `","by":"me"}`, 400, "invalid_request", "by"},
			{"an agent key", s.agentKey, `{"to":"bob@example.com","until":"` + until + `"}`, 403, "forbidden", ""},
			{"an admin key", s.adminKey, `{"to":"bob@example.com","until":"` + until + `"}`, 403, "forbidden", ""},
		} {
			r := s.do(t, "PUT", path, tc.key, tc.body, nil)
			assert.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.body)
			assert.Equal(t, tc.code, errField(r, "code"), tc.name)
			assert.Equal(t, tc.field, errField(r, "field"), "%s: %s", tc.name, r.body)
		}

		r := s.do(t, "PUT", path, s.cyToken, `{"to":"bob@example.com","until":"`+until+`","note":"On holiday"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		d := r.decoded["delegation"].(map[string]any)
		assert.Equal(t, s.cy.ID, d["delegator"].(map[string]any)["id"])
		assert.Equal(t, "bob@example.com", d["delegate"].(map[string]any)["email"])
		assert.Equal(t, true, d["active"], "from is now when absent")
		assert.Equal(t, "On holiday", d["note"])
		assert.Equal(t, until, strings.Replace(d["until"].(string), ".000000Z", "Z", 1))

		bob := s.do(t, "GET", path, s.bobToken, "", nil)
		require.Len(t, bob.decoded["delegatedToMe"], 1, string(bob.body))
		assert.Equal(t, "cy@example.com", bob.decoded["delegatedToMe"].([]any)[0].(map[string]any)["delegator"].(map[string]any)["email"])
		assert.Nil(t, bob.decoded["delegation"])

		// A member id names the delegate as well; the new delegation
		// replaces the old, and begins later.
		r = s.do(t, "PUT", path, s.cyToken, `{"to":"`+s.member.ID+`","from":"`+inDays(1)+`","until":"`+until+`"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		d = r.decoded["delegation"].(map[string]any)
		assert.Equal(t, "ada@example.com", d["delegate"].(map[string]any)["email"])
		assert.Equal(t, false, d["active"])
		assert.Empty(t, s.do(t, "GET", path, s.bobToken, "", nil).decoded["delegatedToMe"])

		assert.Equal(t, 204, s.do(t, "DELETE", path, s.cyToken, "", nil).status)
		assert.Nil(t, s.do(t, "GET", path, s.cyToken, "", nil).decoded["delegation"])
		assert.Equal(t, 204, s.do(t, "DELETE", path, s.cyToken, "", nil).status, "ending none is no error")
		assert.Equal(t, 403, s.do(t, "GET", path, s.agentKey, "", nil).status, "a delegation is a person's")

		// Each delegation set and the one ended are in the audit chain, by
		// the delegator; refusals and ending none wrote nothing.
		var steps []models.AuditEntry
		require.NoError(t, db.Where("organization_id = ? AND subject_type = ?", s.org.ID, "delegation").Order("position").Find(&steps).Error)
		require.Len(t, steps, 3)
		for i, want := range []string{"delegation_set", "delegation_set", "delegation_ended"} {
			assert.Equal(t, want, steps[i].Action)
			assert.Equal(t, s.cy.ID, steps[i].SubjectID)
			assert.Equal(t, i+1, steps[i].Seq)
		}
		assert.Contains(t, steps[0].Detail, "Bob stands in from")
		require.NoError(t, s.store.VerifyAuditChain(context.Background(), s.org.ID))
	})
}

// TestDelegationChainsAndCycles: a request to someone away asks the end
// of their chain, three steps on at most; a delegation that would lead
// back to its delegator at overlapping times is refused, naming the
// cycle, and one at times that never overlap is not.
func TestDelegationChainsAndCycles(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		erin, erinToken := s.memberWithToken(t, "erin@example.com", "Erin")
		_, fayToken := s.memberWithToken(t, "fay@example.com", "Fay")
		_, gilToken := s.memberWithToken(t, "gil@example.com", "Gil")
		s.delegate(t, s.cyToken, "bob@example.com")
		s.delegate(t, s.bobToken, "erin@example.com")
		s.delegate(t, erinToken, "fay@example.com")
		s.delegate(t, fayToken, "gil@example.com")

		a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["cy@example.com"]}`)
		require.Len(t, a["resolvedApprovers"], 1)
		assert.Equal(t, []any{map[string]any{"field": "approvers", "kind": "delegation", "id": s.cy.ID, "name": "cy@example.com"}},
			viaOf(t, a["resolvedApprovers"], "fay@example.com"), "three steps on (Cy, Bob, Erin, Fay); Fay's own is not followed")
		a = s.create(t, s.agentKey, `{"title":"Pay","approvers":["`+erin.ID+`"]}`)
		viaOf(t, a["resolvedApprovers"], "gil@example.com")

		r := s.do(t, "PUT", "/api/v1/me/delegation", gilToken, `{"to":"cy@example.com","until":"`+inDays(1)+`"}`, nil)
		assert.Equal(t, 409, r.status, string(r.body))
		assert.Equal(t, "delegation_cycle", errField(r, "code"))
		assert.Equal(t, "to", errField(r, "field"))
		assert.Contains(t, errField(r, "message"), "Gil → cy@example.com → Bob → Erin → Fay → Gil")
		r = s.do(t, "PUT", "/api/v1/me/delegation", s.bobToken, `{"to":"cy@example.com","until":"`+inDays(1)+`"}`, nil)
		assert.Equal(t, 409, r.status, string(r.body))
		assert.Contains(t, errField(r, "message"), "Bob → cy@example.com → Bob")

		// After every other delegation has ended, no cycle.
		later := s.do(t, "PUT", "/api/v1/me/delegation", gilToken, `{"to":"cy@example.com","from":"`+inDays(3)+`","until":"`+inDays(4)+`"}`, nil)
		assert.Equal(t, 200, later.status, string(later.body))
	})
}

// TestNewRequestsAskTheDelegate: while Cy is away, approvals,
// escalations, requests for information and reviews that name Cy ask Bob
// instead, who acts in his own name on Cy's behalf; Cy no longer can.
func TestNewRequestsAskTheDelegate(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		s.delegate(t, s.cyToken, "bob@example.com")
		forCy := func(field string) []any {
			return []any{map[string]any{"field": field, "kind": "delegation", "id": s.cy.ID, "name": "cy@example.com"}}
		}

		a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["cy@example.com"]}`)
		id := a["id"].(string)
		require.Len(t, a["resolvedApprovers"], 1)
		assert.Equal(t, forCy("approvers"), viaOf(t, a["resolvedApprovers"], "bob@example.com"))
		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve"}`, nil).status)
		d := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.bobToken, `{"decision":"approve","note":"ok"}`, nil)
		require.Equal(t, 200, d.status, string(d.body))
		assert.Equal(t, "Bob", d.decoded["decidedBy"])
		assert.Equal(t, s.bob.ID, d.decoded["decidedById"])
		assert.Equal(t, "cy@example.com", d.decoded["decidedOnBehalfOf"])
		assert.Equal(t, s.cy.ID, d.decoded["decidedOnBehalfOfId"])
		evs, err := s.store.ListEvents(context.Background(), s.org.ID, id)
		require.NoError(t, err)
		i := slices.IndexFunc(evs, func(e models.Event) bool { return e.Kind == "approval.approved" })
		require.GreaterOrEqual(t, i, 0)
		assert.Contains(t, string(evs[i].Data), `"decidedOnBehalfOfId":"`+s.cy.ID+`"`, "the event carries both")
		assert.Contains(t, string(evs[i].Data), `"decidedById":"`+s.bob.ID+`"`)

		// An escalation's people are resolved at creation too.
		e := s.create(t, s.agentKey, `{"title":"Pay","approvers":["ada@example.com"],"escalation":{"after":"1s","to":["cy@example.com"]}}`)
		var got response
		waitFor(t, func() bool {
			got = s.do(t, "GET", "/api/v1/approvals/"+e["id"].(string), s.agentKey, "", nil)
			return len(got.decoded["resolvedApprovers"].([]any)) == 2
		})
		assert.Equal(t, forCy("escalation.to"), viaOf(t, got.decoded["resolvedApprovers"], "bob@example.com"))
		d = s.do(t, "POST", "/api/v1/approvals/"+e["id"].(string)+"/decision", s.bobToken, `{"decision":"reject"}`, nil)
		require.Equal(t, 200, d.status, string(d.body))
		assert.Equal(t, s.cy.ID, d.decoded["decidedOnBehalfOfId"])

		c := s.do(t, "POST", "/api/v1/collections", s.agentKey, `{"title":"Facts","questions":[{"prompt":"Budget?","kind":"number"}],"respondents":["cy@example.com"]}`, nil)
		require.Equal(t, 201, c.status, string(c.body))
		assert.Equal(t, forCy("respondents"), viaOf(t, c.decoded["resolvedRespondents"], "bob@example.com"))
		reply := s.do(t, "POST", "/api/v1/collections/"+c.decoded["id"].(string)+"/replies", s.bobToken, `{"answers":{"q1":3},"submit":true}`, nil)
		require.Equal(t, 200, reply.status, string(reply.body))
		replied := reply.decoded["replies"].([]any)[0].(map[string]any)
		assert.Equal(t, map[string]any{"id": s.cy.ID, "name": "cy@example.com"}, replied["onBehalfOf"])

		s.publish(t, `{"title":"Q3","slug":"q3","content":`+jsonString(html("<p>Up.</p>"))+`,"audience":["everyone"]}`)
		rv := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Check","reportId":"q3","reviewers":["cy@example.com"]}`, nil)
		require.Equal(t, 201, rv.status, string(rv.body))
		assert.Equal(t, forCy("reviewers"), viaOf(t, rv.decoded["resolvedReviewers"], "bob@example.com"))
		v := s.do(t, "POST", "/api/v1/reviews/"+rv.decoded["id"].(string)+"/verdict", s.bobToken, `{"verdict":"approved"}`, nil)
		require.Equal(t, 200, v.status, string(v.body))
		assert.Equal(t, map[string]any{"id": s.cy.ID, "name": "cy@example.com"}, v.decoded["verdicts"].([]any)[0].(map[string]any)["onBehalfOf"])

		// Once it ends, Cy is asked again.
		require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/me/delegation", s.cyToken, "", nil).status)
		a = s.create(t, s.agentKey, `{"title":"Pay","approvers":["cy@example.com"]}`)
		viaOf(t, a["resolvedApprovers"], "cy@example.com")
	})
}

// TestWaitingRequestsGainTheDelegate: requests already waiting on Cy when
// her delegation starts ask Bob too, through their workflows; Bob is
// emailed, decides on Cy's behalf, and the flow's evidence export says so
// in the record and on the timeline.
func TestWaitingRequestsGainTheDelegate(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		mailbox := mail.NewMailbox(0)
		s := newStackWorker(t, db, netguard.Public, worker.Deps{Mailer: mailbox})
		emailed := func(to, subject string) bool {
			for _, m := range mailbox.Messages() {
				if slices.Contains(m.To, to) && strings.Contains(m.Subject, subject) {
					return true
				}
			}
			return false
		}
		f := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"Quarter close"}`, nil)
		require.Equal(t, 201, f.status, string(f.body))
		flowID := f.decoded["id"].(string)
		a := s.create(t, s.agentKey, `{"title":"Pay the vendor","approvers":["cy@example.com"],"flowId":"`+flowID+`"}`)
		id := a["id"].(string)
		c := s.do(t, "POST", "/api/v1/collections", s.agentKey, `{"title":"Vendor facts","questions":[{"prompt":"Budget?","kind":"number"}],"respondents":["cy@example.com"]}`, nil)
		require.Equal(t, 201, c.status, string(c.body))
		waitFor(t, func() bool {
			return emailed("cy@example.com", "Pay the vendor") && emailed("cy@example.com", "Vendor facts")
		})
		assert.False(t, emailed("bob@example.com", "Pay the vendor"))

		s.delegate(t, s.cyToken, "bob@example.com")
		got := s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil)
		viaOf(t, got.decoded["resolvedApprovers"], "cy@example.com")
		assert.Equal(t, []any{map[string]any{"field": "approvers", "kind": "delegation", "id": s.cy.ID, "name": "cy@example.com"}},
			viaOf(t, got.decoded["resolvedApprovers"], "bob@example.com"), "the workflow added Bob, standing in for Cy")
		waitFor(t, func() bool {
			return emailed("bob@example.com", "Pay the vendor") && emailed("bob@example.com", "Vendor facts")
		})
		for _, m := range mailbox.Messages() {
			if slices.Contains(m.To, "bob@example.com") && strings.Contains(m.Subject, "Pay the vendor") {
				assert.Contains(t, m.Text, "You are asked on behalf of cy@example.com, who is away")
			}
		}
		// The collection's read names Bob among those asked, by name, as a
		// delegate of Cy.
		var col response
		waitFor(t, func() bool {
			col = s.do(t, "GET", "/api/v1/collections/"+c.decoded["id"].(string), s.agentKey, "", nil)
			return len(col.decoded["resolvedRespondents"].([]any)) == 2
		})
		assert.Equal(t, []any{map[string]any{"field": "respondents", "kind": "delegation", "id": s.cy.ID, "name": "cy@example.com"}},
			viaOf(t, col.decoded["resolvedRespondents"], "bob@example.com"), "the workflow added Bob, standing in for Cy")
		for _, p := range col.decoded["resolvedRespondents"].([]any) {
			if p.(map[string]any)["email"] == "bob@example.com" {
				assert.Equal(t, "Bob", p.(map[string]any)["name"])
			}
		}

		d := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.bobToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, d.status, string(d.body))
		assert.Equal(t, "cy@example.com", d.decoded["decidedOnBehalfOf"])
		reply := s.do(t, "POST", "/api/v1/collections/"+c.decoded["id"].(string)+"/replies", s.bobToken, `{"answers":{"q1":3},"submit":true}`, nil)
		require.Equal(t, 200, reply.status, string(reply.body))
		assert.Equal(t, "complete", reply.decoded["status"])
		assert.NotNil(t, reply.decoded["replies"].([]any)[0].(map[string]any)["onBehalfOf"])

		ev := s.do(t, "GET", "/api/v1/flows/"+flowID+"/evidence", s.agentKey, "", nil)
		require.Equal(t, 200, ev.status, string(ev.body))
		record := ev.decoded["requests"].([]any)[0].(map[string]any)["record"].(map[string]any)
		assert.Equal(t, "Bob", record["decidedBy"])
		assert.Equal(t, "cy@example.com", record["decidedOnBehalfOf"])
		assert.Equal(t, s.cy.ID, record["decidedOnBehalfOfId"])
		var timeline []string
		for _, e := range ev.decoded["timeline"].([]any) {
			e := e.(map[string]any)
			if e["requestType"] == "approval" {
				timeline = append(timeline, e["action"].(string)+" by "+e["actorId"].(string)+": "+e["detail"].(string))
			}
		}
		assert.Contains(t, timeline, "delegated by "+s.cy.ID+": cy@example.com is away, so Bob was asked on behalf of cy@example.com")
		assert.Contains(t, timeline, "approved by "+s.bob.ID+": on behalf of cy@example.com")
	})
}

// TestRequesterCannotDecideThroughADelegation: a requester never decides
// their own request, neither as someone's delegate nor through their own
// delegate; and a request is never handed to its requester, so someone
// can still decide it.
func TestRequesterCannotDecideThroughADelegation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		// Cy asks Bob; Bob, away, hands his requests to Cy: not Cy's own,
		// which stay with Bob, both the one waiting and one made now.
		waiting := s.create(t, s.cyToken, `{"title":"My expenses","approvers":["bob@example.com"]}`)
		s.delegate(t, s.bobToken, "cy@example.com")
		mine := s.create(t, s.cyToken, `{"title":"My travel","approvers":["bob@example.com"]}`)
		require.Len(t, mine["resolvedApprovers"], 1)
		assert.Equal(t, []any{map[string]any{"field": "approvers", "kind": "member", "id": s.bob.ID, "name": "Bob"}},
			viaOf(t, mine["resolvedApprovers"], "bob@example.com"), "Bob is still asked in his own name")
		got := s.do(t, "GET", "/api/v1/approvals/"+waiting["id"].(string), s.agentKey, "", nil)
		require.Len(t, got.decoded["resolvedApprovers"], 1, "the waiting request was not handed to its requester")
		viaOf(t, got.decoded["resolvedApprovers"], "bob@example.com")
		for _, id := range []string{waiting["id"].(string), mine["id"].(string)} {
			r := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve"}`, nil)
			assert.Equal(t, 403, r.status, string(r.body))
			assert.Equal(t, "not_an_approver", errField(r, "code"))
			assert.Contains(t, errField(r, "message"), "you created this request")
			r = s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.bobToken, `{"decision":"approve"}`, nil)
			require.Equal(t, 200, r.status, "someone can still decide: %s", r.body)
			assert.Nil(t, r.decoded["decidedOnBehalfOf"])
		}

		// A chain through the requester stops before them: Bob away to
		// Erin, Erin away to Cy; Cy's request asks Erin on Bob's behalf,
		// who decides it, and anyone else's asks Cy.
		_, erinToken := s.memberWithToken(t, "erin@example.com", "Erin")
		s.delegate(t, s.bobToken, "erin@example.com")
		s.delegate(t, erinToken, "cy@example.com")
		chained := s.create(t, s.cyToken, `{"title":"My hotel","approvers":["bob@example.com"]}`)
		require.Len(t, chained["resolvedApprovers"], 1)
		assert.Equal(t, []any{map[string]any{"field": "approvers", "kind": "delegation", "id": s.bob.ID, "name": "Bob"}},
			viaOf(t, chained["resolvedApprovers"], "erin@example.com"))
		r := s.do(t, "POST", "/api/v1/approvals/"+chained["id"].(string)+"/decision", erinToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, s.bob.ID, r.decoded["decidedOnBehalfOfId"])
		theirs := s.create(t, s.agentKey, `{"title":"Pay","approvers":["bob@example.com"]}`)
		viaOf(t, theirs["resolvedApprovers"], "cy@example.com")
		require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/me/delegation", erinToken, "", nil).status)
		require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/me/delegation", s.bobToken, "", nil).status)

		// Ada asks herself and Bob, then hands hers to Cy: the request
		// never waited on Ada, so it is not handed to Cy, who may not
		// decide it; Bob still may.
		own := s.create(t, s.memberToken, `{"title":"Team offsite","approvers":["ada@example.com","bob@example.com"]}`)
		s.delegate(t, s.memberToken, "cy@example.com")
		got = s.do(t, "GET", "/api/v1/approvals/"+own["id"].(string), s.agentKey, "", nil)
		for _, p := range got.decoded["resolvedApprovers"].([]any) {
			assert.NotEqual(t, "cy@example.com", p.(map[string]any)["email"], "the requester's delegate is not asked")
		}
		r = s.do(t, "POST", "/api/v1/approvals/"+own["id"].(string)+"/decision", s.cyToken, `{"decision":"approve"}`, nil)
		assert.Equal(t, 403, r.status, string(r.body))
		assert.Contains(t, errField(r, "message"), "you are not among this request's approvers")
		r = s.do(t, "POST", "/api/v1/approvals/"+own["id"].(string)+"/decision", s.bobToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Nil(t, r.decoded["decidedOnBehalfOf"])
	})
}

// TestEscalationAsksTheDelegateOfSomeoneAwaySince: Cy goes away after a
// request escalating to her was made; when the escalation fires, Bob,
// who stands in for her, is asked instead and decides on her behalf.
func TestEscalationAsksTheDelegateOfSomeoneAwaySince(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["ada@example.com"],"escalation":{"after":"2s","to":["cy@example.com"]}}`)
		id := a["id"].(string)
		require.Len(t, a["resolvedApprovers"], 1)
		s.delegate(t, s.cyToken, "bob@example.com")

		got := s.escalated(t, id)
		emails := emailsOf(got.decoded["resolvedApprovers"])
		assert.Equal(t, []string{"ada@example.com", "bob@example.com"}, emails, "Bob instead of Cy, who is away")
		assert.Equal(t, []any{map[string]any{"field": "escalation.to", "kind": "delegation", "id": s.cy.ID, "name": "cy@example.com"}},
			viaOf(t, got.decoded["resolvedApprovers"], "bob@example.com"))
		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve"}`, nil).status)
		d := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.bobToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, d.status, string(d.body))
		assert.Equal(t, s.cy.ID, d.decoded["decidedOnBehalfOfId"])
		assert.Equal(t, s.bob.ID, d.decoded["decidedById"])
	})
}

// TestEscalationAsksWhoeverIsBackWhenItFires: Cy was away when a request
// escalating to her was made, and is back before it fires: the
// escalation asks her, not Bob, who stood in for her then.
func TestEscalationAsksWhoeverIsBackWhenItFires(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		s.delegate(t, s.cyToken, "bob@example.com")
		a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["ada@example.com"],"escalation":{"after":"2s","to":["cy@example.com"]}}`)
		id := a["id"].(string)
		require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/me/delegation", s.cyToken, "", nil).status)

		got := s.escalated(t, id)
		emails := emailsOf(got.decoded["resolvedApprovers"])
		assert.Equal(t, []string{"ada@example.com", "cy@example.com"}, emails, "Cy, who is back")
		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.bobToken, `{"decision":"approve"}`, nil).status)
		d := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, d.status, string(d.body))
		assert.Nil(t, d.decoded["decidedOnBehalfOfId"])
	})
}

// TestDefaultsAskWhoStandsIn: when a guest's removal leaves a request
// nobody can settle, the owners and administrators who join are those of
// a request made now: Ada, the owner, is away, so Cy stands in for her,
// on an approval and on a review alike.
func TestDefaultsAskWhoStandsIn(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		require.Equal(t, 200, s.do(t, "PATCH", "/api/v1/admin/organization", s.adminKey, `{"guestsMayApprove":true}`, nil).status)
		s.reviewable(t)
		gus, err := s.store.GuestByEmail(ctx, s.org.ID, "gus@partner.example")
		require.NoError(t, err)
		a := s.create(t, s.agentKey, `{"title":"Share the report","risk":"low","approvers":["gus@partner.example"]}`)
		rv := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Check Q3","reportId":"q3","reviewers":["gus@partner.example"]}`, nil)
		require.Equal(t, 201, rv.status, string(rv.body))
		waitFor(t, func() bool {
			a, err := approvals.Records(s.store).Get(ctx, s.org.ID, a["id"].(string))
			r, rerr := reviews.Records(s.store).Get(ctx, s.org.ID, rv.decoded["id"].(string))
			return err == nil && rerr == nil && a.Seq > 0 && r.Seq > 0 // the workflows have taken them up
		})
		s.delegate(t, s.memberToken, "cy@example.com")

		removed := s.do(t, "DELETE", "/api/v1/admin/guests/"+gus.ID, s.adminKey, "", nil)
		require.Equal(t, 204, removed.status, string(removed.body))

		forAda := []any{map[string]any{"field": "approvers", "kind": "delegation", "id": s.member.ID, "name": "Ada"}}
		got := s.do(t, "GET", "/api/v1/approvals/"+a["id"].(string), s.agentKey, "", nil)
		emails := emailsOf(got.decoded["resolvedApprovers"])
		assert.Equal(t, []string{"cy@example.com", "bob@example.com"}, emails, "Cy instead of Ada, who is away")
		assert.Equal(t, forAda, viaOf(t, got.decoded["resolvedApprovers"], "cy@example.com"))
		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/approvals/"+a["id"].(string)+"/decision", s.memberToken, `{"decision":"approve"}`, nil).status)
		d := s.do(t, "POST", "/api/v1/approvals/"+a["id"].(string)+"/decision", s.cyToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, d.status, string(d.body))
		assert.Equal(t, s.member.ID, d.decoded["decidedOnBehalfOfId"])

		rev, err := reviews.Records(s.store).Get(ctx, s.org.ID, rv.decoded["id"].(string))
		require.NoError(t, err)
		assert.Equal(t, []string{s.cy.ID, s.bob.ID}, []string(rev.ReviewerIDs), "Cy, who reads the report, instead of Ada")
		v := s.do(t, "POST", "/api/v1/reviews/"+rev.ID+"/verdict", s.cyToken, `{"verdict":"approved"}`, nil)
		require.Equal(t, 200, v.status, string(v.body))
		assert.Equal(t, map[string]any{"id": s.member.ID, "name": "Ada"}, v.decoded["verdicts"].([]any)[0].(map[string]any)["onBehalfOf"])
	})
}

// TestReviewsGoOnlyToDelegatesWhoCanReadTheReport: a delegation lends no
// access to a report. Cy reads Q3; her delegate Erin does not, so Cy's
// reviews of it stay with Cy: the one waiting when she leaves, and one
// made while she is away (not refused for Erin's sake); her approval
// goes to Erin as usual. A delegate who may review (Bob, an
// administrator) is handed the review.
func TestReviewsGoOnlyToDelegatesWhoCanReadTheReport(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		s.reviewable(t)
		_, erinToken := s.memberWithToken(t, "erin@example.com", "Erin")
		rv := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Check Q3","reportId":"q3","reviewers":["cy@example.com"]}`, nil)
		require.Equal(t, 201, rv.status, string(rv.body))
		id := rv.decoded["id"].(string)
		a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["cy@example.com"]}`)
		waitFor(t, func() bool {
			r, err := reviews.Records(s.store).Get(ctx, s.org.ID, id)
			return err == nil && r.Seq > 0
		})

		s.delegate(t, s.cyToken, "erin@example.com")
		got := s.do(t, "GET", "/api/v1/approvals/"+a["id"].(string), s.agentKey, "", nil)
		viaOf(t, got.decoded["resolvedApprovers"], "erin@example.com")
		rev := s.do(t, "GET", "/api/v1/reviews/"+id, s.agentKey, "", nil)
		require.Len(t, rev.decoded["resolvedReviewers"], 1, "Erin cannot read the report: not asked")
		viaOf(t, rev.decoded["resolvedReviewers"], "cy@example.com")
		r := s.do(t, "POST", "/api/v1/reviews/"+id+"/verdict", erinToken, `{"verdict":"approved"}`, nil)
		assert.Equal(t, 403, r.status, string(r.body))

		made := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Check Q3 again","reportId":"q3","reviewers":["cy@example.com"]}`, nil)
		require.Equal(t, 201, made.status, "not refused for Erin's sake: %s", made.body)
		require.Len(t, made.decoded["resolvedReviewers"], 1)
		viaOf(t, made.decoded["resolvedReviewers"], "cy@example.com")

		// Bob, an administrator, may review any report he is asked to.
		s.delegate(t, s.cyToken, "bob@example.com")
		waitFor(t, func() bool {
			rev = s.do(t, "GET", "/api/v1/reviews/"+id, s.agentKey, "", nil)
			return len(rev.decoded["resolvedReviewers"].([]any)) == 2
		})
		assert.Equal(t, []any{map[string]any{"field": "reviewers", "kind": "delegation", "id": s.cy.ID, "name": "cy@example.com"}},
			viaOf(t, rev.decoded["resolvedReviewers"], "bob@example.com"))
		v := s.do(t, "POST", "/api/v1/reviews/"+id+"/verdict", s.bobToken, `{"verdict":"approved"}`, nil)
		require.Equal(t, 200, v.status, string(v.body))
	})
}

// TestDelegationBeginningLaterStartsThroughTheReconciler: a delegation
// set to begin later hands the waiting requests over once the
// reconciler finds its time has come, once.
func TestDelegationBeginningLaterStartsThroughTheReconciler(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["cy@example.com"]}`)
		from := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
		r := s.do(t, "PUT", "/api/v1/me/delegation", s.cyToken, `{"to":"bob@example.com","from":"`+from+`","until":"`+inDays(1)+`"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		asked := func() int {
			got := s.do(t, "GET", "/api/v1/approvals/"+a["id"].(string), s.agentKey, "", nil)
			return len(got.decoded["resolvedApprovers"].([]any))
		}
		_, err := s.services.Delegations.StartUnowned(ctx, time.Now(), 10)
		require.NoError(t, err)
		assert.Equal(t, 1, asked(), "not begun yet")

		time.Sleep(1100 * time.Millisecond)
		for range 2 {
			_, err = s.services.Delegations.StartUnowned(ctx, time.Now(), 10)
			require.NoError(t, err)
		}
		assert.Equal(t, 2, asked(), "Bob joined, once")
		d := s.do(t, "POST", "/api/v1/approvals/"+a["id"].(string)+"/decision", s.bobToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, d.status, string(d.body))
		assert.Equal(t, s.cy.ID, d.decoded["decidedOnBehalfOfId"])
	})
}

// TestDelegationsSetAtOnceMakeNoCycle: two members naming each other at
// the same moment cannot both be away to the other: one delegation is
// set, the other refused as a cycle, and the trail holds one step per
// delegation set or ended, round after round.
func TestDelegationsSetAtOnceMakeNoCycle(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		_, erinToken := s.memberWithToken(t, "erin@example.com", "Erin")
		_, fayToken := s.memberWithToken(t, "fay@example.com", "Fay")
		const rounds = 4
		for range rounds {
			var erin, fay response
			var wg sync.WaitGroup
			wg.Go(func() {
				erin = s.do(t, "PUT", "/api/v1/me/delegation", erinToken, `{"to":"fay@example.com","until":"`+inDays(1)+`"}`, nil)
			})
			wg.Go(func() {
				fay = s.do(t, "PUT", "/api/v1/me/delegation", fayToken, `{"to":"erin@example.com","until":"`+inDays(1)+`"}`, nil)
			})
			wg.Wait()
			statuses := []int{erin.status, fay.status}
			assert.ElementsMatch(t, []int{200, 409}, statuses, "%s / %s", erin.body, fay.body)
			for _, r := range []response{erin, fay} {
				if r.status == 409 {
					assert.Equal(t, "delegation_cycle", errField(r, "code"))
				}
			}
			for _, token := range []string{erinToken, fayToken} {
				require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/me/delegation", token, "", nil).status)
			}
		}
		var set, ended int64
		require.NoError(t, db.Model(&models.AuditEntry{}).Where("organization_id = ? AND action = ?", s.org.ID, "delegation_set").Count(&set).Error)
		require.NoError(t, db.Model(&models.AuditEntry{}).Where("organization_id = ? AND action = ?", s.org.ID, "delegation_ended").Count(&ended).Error)
		assert.EqualValues(t, rounds, set)
		assert.EqualValues(t, rounds, ended, "ending none writes nothing")
	})
}
