package assent_test

// The tour calls every operation of the document through the SDK against
// a real assent dev at least once, and reads each answer against the
// document's schema for its status: a property a closed schema lacks, or
// a status the operation does not document, fails TestTourZEveryOperation.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	assent "github.com/assent-hq/assent/sdk/go"
	"github.com/assent-hq/assent/sdk/go/internal/gen"
)

type tourLog struct {
	mu      sync.Mutex
	called  map[string]bool
	unknown map[string]bool
	doc     map[string]any
	ops     map[string]map[string]any // operationId → its operation object
}

var tour = newTourLog()

func newTourLog() *tourLog {
	l := &tourLog{called: map[string]bool{}, unknown: map[string]bool{}, ops: map[string]map[string]any{}}
	raw, err := os.ReadFile("../openapi.json")
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(raw, &l.doc); err != nil {
		panic(err)
	}
	for _, item := range l.doc["paths"].(map[string]any) {
		for _, op := range item.(map[string]any) {
			if o, ok := op.(map[string]any); ok && o["operationId"] != nil {
				l.ops[o["operationId"].(string)] = o
			}
		}
	}
	return l
}

// observe records op and reads its answer against the document.
func (l *tourLog) observe(op string, status int, body []byte) {
	var found []string
	schema, documented := l.responseSchema(op, status)
	if !documented {
		found = append(found, fmt.Sprintf("%s: status %d is not documented", op, status))
	} else if schema != nil && len(body) > 0 {
		var v any
		if json.Unmarshal(body, &v) == nil {
			l.walk(schema, v, op+": "+strconv.Itoa(status), &found)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.called[op] = true
	for _, f := range found {
		l.unknown[f] = true
	}
}

func (l *tourLog) resolve(s any) map[string]any {
	m, _ := s.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = l.doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

// responseSchema is the JSON schema of op's answer with status (nil when
// not JSON), and whether the operation documents that status.
func (l *tourLog) responseSchema(op string, status int) (any, bool) {
	o, ok := l.ops[op]
	if !ok {
		return nil, false
	}
	responses, _ := o["responses"].(map[string]any)
	r, ok := responses[strconv.Itoa(status)]
	if !ok {
		r, ok = responses["default"]
	}
	if !ok {
		return nil, false
	}
	content, _ := l.resolve(r)["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	return media["schema"], true
}

// props is a schema's properties, allOf parts merged.
func (l *tourLog) props(s map[string]any) map[string]any {
	out := map[string]any{}
	parts, _ := s["allOf"].([]any)
	for _, p := range parts {
		for k, v := range l.props(l.resolve(p)) {
			out[k] = v
		}
	}
	own, _ := s["properties"].(map[string]any)
	for k, v := range own {
		out[k] = v
	}
	return out
}

func (l *tourLog) walk(schema any, v any, at string, found *[]string) {
	s := l.resolve(schema)
	if s == nil {
		return
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if opts, ok := s[k].([]any); ok {
			// The branch that fits best: none of them fitting is the finding.
			var best []string
			for i, o := range opts {
				var got []string
				l.walk(o, v, at, &got)
				if i == 0 || len(got) < len(best) {
					best = got
				}
			}
			*found = append(*found, best...)
			return
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props := l.props(s)
		closed := s["additionalProperties"] == false || s["unevaluatedProperties"] == false
		for k, val := range x {
			if ps, ok := props[k]; ok {
				l.walk(ps, val, at+"."+k, found)
			} else if ap, ok := s["additionalProperties"].(map[string]any); ok {
				l.walk(ap, val, at+"."+k, found)
			} else if closed {
				*found = append(*found, at+"."+k+" is not in the document")
			}
		}
	case []any:
		for i, item := range x {
			l.walk(s["items"], item, at+"["+strconv.Itoa(i)+"]", found)
		}
	}
}

// Clients whose answers the tour reads.
func tourClient(c *assent.Client) *assent.Client {
	assent.Observe(c, tour.observe)
	return c
}

func tAgent(t *testing.T) *assent.Client { return tourClient(agent(t)) }
func tPerson(t *testing.T, who string) *assent.Client {
	return tourClient(person(t, who))
}
func tAdmin(t *testing.T) *assent.Client {
	d := startDev(t)
	return tourClient(assent.New(d.BaseURL, d.AdminKey))
}

func all[T any](seq func(func(*T, error) bool)) []*T {
	var out []*T
	for v, err := range seq {
		if err != nil {
			panic(err)
		}
		out = append(out, v)
	}
	return out
}

func ids[T any](items []*T, id func(*T) string) []string {
	var out []string
	for _, x := range items {
		out = append(out, id(x))
	}
	return out
}

func expect(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

var png = func() []byte {
	b, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==")
	return b
}()

func TestTourRequests(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	c, decider, mia := tAgent(t), tPerson(t, "admin"), tPerson(t, "mia@example.com")
	a := must(c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Tour approval", Input: map[string]any{"n": 1}, EditableFields: []string{"n"}}))
	expect(t, slices.Contains(ids(all(decider.Inbox.Approvals(ctx, nil)), func(x *assent.Approval) string { return x.ID }), a.ID), "not in the inbox")
	q := must(decider.Approvals.Ask(ctx, a.ID, &assent.QuestionCreate{Question: "Why?"}))
	must(c.Approvals.Answer(ctx, a.ID, &assent.AnswerCreate{QuestionID: q.QuestionID, Answer: "Because"}))
	must(decider.Approvals.Decide(ctx, a.ID, &assent.DecisionCreate{Decision: "approve", Corrections: map[string]any{"n": 2}}))
	done := must(c.Approvals.Wait(ctx, a.ID))
	expect(t, fmt.Sprint(done.ApprovedInput) == "map[n:2]", "approved input %v", done.ApprovedInput)
	expect(t, must(c.Approvals.Get(ctx, a.ID)).ID == a.ID, "get")
	receipt := must(c.Receipts.Create(ctx, &assent.ReceiptCreate{DecisionToken: done.DecisionToken, Input: done.ApprovedInput,
		Outcome: "succeeded", Result: map[string]any{"sent": true}, StartedAt: time.Now(), FinishedAt: time.Now()}))
	expect(t, receipt.InputMatches && *receipt.ApprovalID == a.ID, "receipt %+v", receipt)
	expect(t, must(c.Approvals.Get(ctx, a.ID)).Execution.ReceiptID == receipt.ID, "execution")
	_, err := c.Receipts.Create(ctx, &assent.ReceiptCreate{DecisionToken: done.DecisionToken, Input: done.ApprovedInput,
		Outcome: "succeeded", StartedAt: time.Now(), FinishedAt: time.Now()})
	e := apiError(t, err, 409)
	expect(t, e.Code == assent.CodeReceiptExists && e.Receipt != nil && e.Receipt.ID == receipt.ID, "the error carries the token's receipt: %v %+v", e, e.Receipt)
	expect(t, slices.Contains(ids(all(c.Approvals.List(ctx, &assent.ListApprovalsParams{Executed: "true"})), func(x *assent.Approval) string { return x.ID }), a.ID), "executed")
	expect(t, slices.Contains(ids(all(c.Approvals.List(ctx, &assent.ListApprovalsParams{Status: "approved"})), func(x *assent.Approval) string { return x.ID }), a.ID), "list")
	cancelled := must(c.Approvals.Cancel(ctx, must(c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Tour cancel"})).ID))
	expect(t, cancelled.Status == "cancelled", "cancel %s", cancelled.Status)

	col := must(c.Collections.Create(ctx, &assent.CollectionCreate{Title: "Tour reply",
		Questions:   []assent.CollectionQuestionCreate{{ID: "ok", Prompt: "Ok?", Kind: "boolean"}},
		Respondents: []string{"mia@example.com"}}))
	expect(t, slices.Contains(ids(all(mia.Inbox.Collections(ctx, nil)), func(x *assent.Collection) string { return x.ID }), col.ID), "not in mia's inbox")
	must(mia.Collections.Reply(ctx, col.ID, &assent.ReplyCreate{Answers: map[string]any{"ok": true}, Submit: assent.Ptr(true)}))
	expect(t, must(c.Collections.Wait(ctx, col.ID)).Replies[0].Answers["ok"] == true, "reply")

	slug := tag("tour/v")
	must(c.Reports.CreateFrom(ctx, &assent.ReportCreate{Title: "Tour versions", Slug: &slug, Audience: []string{"mia@example.com"}}, assent.FromContent("<h1>one</h1>")))
	ticket := must(c.Reports.CreateUpload(ctx))
	must(c.Reports.PutUpload(ctx, ticket, []byte("<h1>two</h1>"), assent.WithContentType("text/html")))
	v2 := must(c.Reports.Publish(ctx, slug, &assent.VersionCreate{UploadID: &ticket.UploadID}))
	expect(t, *v2.LiveVersion == 2, "live %d", *v2.LiveVersion)
	v3 := must(c.Reports.PublishFrom(ctx, slug, assent.FromContent("<h1>three</h1>"), &assent.VersionCreate{ExpectedVersion: assent.Ptr[int64](2)}))
	expect(t, *v3.LiveVersion == 3, "live %d", *v3.LiveVersion)
	expect(t, *must(c.Reports.Rollback(ctx, slug, &assent.RollbackRequest{Version: 1})).LiveVersion == 1, "rollback")
	expect(t, len(must(c.Reports.Versions(ctx, slug)).Data) == 3, "versions")
	must(c.Reports.PutDataset(ctx, slug, "d", map[string]any{"x": 1}))
	var d struct{ X int }
	must(0, c.Reports.GetDatasetInto(ctx, slug, "d", &d))
	expect(t, d.X == 1, "dataset %+v", d)
	review := must(c.Reviews.Create(ctx, &assent.ReviewCreate{Title: "Tour verdict", ReportID: slug, Reviewers: []string{"mia@example.com"}}))
	must(mia.Reviews.Verdict(ctx, review.ID, &assent.VerdictCreate{Verdict: "changes_requested", Note: "Fix the title"}))
	expect(t, must(c.Reviews.Wait(ctx, review.ID)).Status == "changes_requested", "verdict")
	expect(t, must(c.Reports.Archive(ctx, slug, &assent.ArchiveRequest{Archived: assent.Ptr(true)})).Archived, "archive")

	flow := must(c.Flows.Create(ctx, &assent.FlowCreate{Title: "Tour flow"}))
	must(c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Tour in a flow", FlowID: &flow.ID}))
	expect(t, must(c.Flows.Get(ctx, flow.ID)).ID == flow.ID, "flow")
	expect(t, len(must(c.Flows.Evidence(ctx, flow.ID)).Timeline) > 0, "timeline")
	must(c.Flows.Complete(ctx, flow.ID))
}

func TestTourServiceAndCaller(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	c := tAgent(t)
	expect(t, fmt.Sprint(must(c.Service.Health(ctx)).Status) == "ok", "health")
	expect(t, must(c.Service.Readiness(ctx)).Status == "ready", "ready")
	expect(t, must(c.Service.OpenAPI(ctx))["openapi"] == "3.1.0", "openapi")
	expect(t, strings.HasPrefix(must(c.Service.DecisionKeys(ctx)).Keys[0].Kid, "dtk_"), "decision keys")
	expect(t, len(must(c.Service.EvidenceKeys(ctx)).Keys) > 0, "evidence keys")
	expect(t, strings.HasSuffix(must(c.Service.ResourceMetadata(ctx)).Resource, "/mcp"), "resource metadata")
	expect(t, strings.HasSuffix(must(c.Service.MCPResourceMetadata(ctx)).Resource, "/mcp"), "mcp resource metadata")
	mia := tPerson(t, "mia@example.com")
	expect(t, must(mia.Me.Get(ctx)).Kind == "member", "me")
	own := must(mia.Me.CreateToken(ctx, &assent.MemberTokenCreate{Scopes: []string{"approvals:read"}}))
	expect(t, strings.HasPrefix(own.Token, "asnt_member_"), "token")
	expect(t, slices.Contains(ids(all(mia.Me.ListTokens(ctx, nil)), func(k *assent.Key) string { return k.ID }), own.ID), "own tokens listed")
	expect(t, must(mia.Me.RevokeToken(ctx, own.ID)).RevokedAt != nil, "own token revoked")

	// A delegation beginning tomorrow, so no other tour request asks Max
	// for Maya; then ended.
	maya, max := tPerson(t, "maya@example.com"), tPerson(t, "max@example.com")
	from := time.Now().Add(24 * time.Hour)
	set := must(maya.Me.SetDelegation(ctx, &assent.DelegationSet{To: "max@example.com", From: &from, Until: from.Add(24 * time.Hour), Note: "Tour"}))
	expect(t, set.Delegation != nil && set.Delegation.Delegate.Email == "max@example.com" && !set.Delegation.Active, "delegation %+v", set.Delegation)
	expect(t, len(must(max.Me.GetDelegation(ctx)).DelegatedToMe) == 1, "delegated to max")
	must(0, maya.Me.EndDelegation(ctx))
	expect(t, must(maya.Me.GetDelegation(ctx)).Delegation == nil, "ended")
}

func TestTourReportsCommentsSharing(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	c, mia, adm := tAgent(t), tPerson(t, "mia@example.com"), tAdmin(t)
	slug := tag("tour/r")
	page := "<!doctype html><title>Tour</title><h1>Tour</h1><p>The quarter closed above plan.</p>"
	report := must(c.Reports.CreateFrom(ctx, &assent.ReportCreate{Title: "Tour", Slug: &slug, Living: assent.Ptr(true)},
		assent.FromFiles(map[string][]byte{"index.html": []byte(page)})))
	expect(t, report.Slug == slug, "slug")
	expect(t, must(c.Reports.Get(ctx, report.ID)).Slug == slug, "get")
	expect(t, slices.Contains(ids(all(c.Reports.List(ctx, nil)), func(r *assent.Report) string { return r.ID }), report.ID), "list")
	expect(t, must(c.Reports.Update(ctx, slug, &assent.ReportPatch{Classification: "confidential"})).Classification == "confidential", "update")
	expect(t, len(must(c.Reports.Share(ctx, slug, &assent.AudienceRequest{Audience: []string{"mia@example.com", "Operations"}})).Audience) > 0, "share")
	expect(t, len(must(c.Audiences.Resolve(ctx, &assent.AudienceRequest{Audience: []string{"mia@example.com"}})).Audience) > 0, "resolve")
	must(c.Reports.Unshare(ctx, slug, &assent.AudienceRequest{Audience: []string{"Operations"}}))
	expect(t, len(must(c.Reports.Send(ctx, slug, &assent.SendRequest{To: []string{"mia@example.com"}, Note: "for you"})).Recipients) > 0, "send")
	must(c.Reports.Analytics(ctx, slug))
	expect(t, slices.Contains(ids(all(c.Reports.OrganizationAnalytics(ctx, nil)), func(r *assent.ReportReach) string { return r.ReportID }), report.ID), "reach")
	must(c.Reports.PutDataset(ctx, slug, "kpis", []int{1, 2, 3}))
	expect(t, must(c.Reports.Datasets(ctx, slug)).Data[0].Name == "kpis", "datasets")
	raw := must(c.Reports.GetDataset(ctx, slug, "kpis"))
	expect(t, fmt.Sprint(raw) == "[1 2 3]", "dataset %v", raw)
	must(0, c.Reports.DeleteDataset(ctx, slug, "kpis"))
	template := must(c.Reports.Templates(ctx)).Data[0]
	expect(t, must(c.Reports.Copy(ctx, template.ID, &assent.CopyRequest{Slug: assent.Ptr(tag("tour/t"))})).ID != "", "copy template")
	expect(t, must(c.Reports.Copy(ctx, slug, &assent.CopyRequest{Title: assent.Ptr("Tour copy")})).ID != "", "copy")
	expect(t, len(must(c.Reports.EvidenceCSV(ctx, slug))) > 0, "csv")
	expect(t, must(c.Reports.Evidence(ctx, slug)).Digest.Signature != "", "evidence")

	thread := must(mia.Comments.Post(ctx, slug, &assent.CommentCreate{Body: "Above plan by how much?", Quote: assent.Ptr("closed above plan"),
		Images: []assent.CommentCreateImagesItem{{Data: base64.StdEncoding.EncodeToString(png)}}}))
	expect(t, len(must(c.Comments.List(ctx, slug)).Data) == 1, "threads")
	image := thread.Comments[0].Images[0]
	expect(t, string(must(c.Comments.Image(ctx, slug, image.SHA256))) == string(png), "image")
	reply := must(mia.Comments.Post(ctx, slug, &assent.CommentCreate{Body: "Never mind", ThreadID: &thread.ID}))
	must(0, mia.Comments.Retract(ctx, slug, reply.Comments[len(reply.Comments)-1].ID))
	expect(t, slices.Contains(ids(all(c.Comments.Open(ctx, nil)), func(x *assent.Thread) string { return x.ID }), thread.ID), "open")
	expect(t, strings.Contains(must(c.Comments.RevisionBrief(ctx, slug, nil)).Text, "closed above plan"), "brief")
	expect(t, must(mia.Comments.Resolve(ctx, thread.ID, &assent.ThreadResolve{Note: "answered"})).Status == "resolved", "resolve")

	schedule := must(c.Schedules.Create(ctx, &assent.ScheduleCreate{ReportID: slug, Every: "24h", Note: "daily"}))
	expect(t, must(c.Schedules.Get(ctx, schedule.ID)).ID == schedule.ID, "schedule")
	expect(t, slices.Contains(ids(all(c.Schedules.List(ctx, &assent.ListSchedulesParams{ReportID: report.ID})), func(x *assent.Schedule) string { return x.ID }), schedule.ID), "schedules")
	expect(t, must(c.Schedules.Pause(ctx, schedule.ID)).Paused, "pause")
	expect(t, !must(c.Schedules.Resume(ctx, schedule.ID)).Paused, "resume")
	must(0, c.Schedules.Delete(ctx, schedule.ID))

	phish := func(name string) string {
		return `<form action="https://collect.example.net/` + name + `"><input type="password" name="p"></form>`
	}
	held := must(c.Reports.PublishFrom(ctx, slug, assent.FromContent(phish("login")), nil))
	expect(t, held.Version.Status == "held", "held %s", held.Version.Status)
	heldIDs := []string{}
	for _, r := range must(adm.Admin.HeldVersions.List(ctx)).Data {
		heldIDs = append(heldIDs, r.Version.ID)
	}
	expect(t, slices.Contains(heldIDs, held.Version.ID), "held list")
	must(adm.Admin.HeldVersions.Decline(ctx, held.Version.ID))
	again := must(c.Reports.PublishFrom(ctx, slug, assent.FromContent(phish("x")), nil))
	must(adm.Admin.HeldVersions.Release(ctx, again.Version.ID))

	review := must(c.Reviews.Create(ctx, &assent.ReviewCreate{Title: "Tour review", ReportID: slug, Reviewers: []string{"mia@example.com"}}))
	expect(t, slices.Contains(ids(all(mia.Inbox.Reviews(ctx, nil)), func(x *assent.Review) string { return x.ID }), review.ID), "review inbox")
	// The untyped inbox, as the document describes it.
	page1 := must(mia.Inbox.List(ctx, &assent.InboxParams{Kind: "review"}))
	expect(t, strings.Contains(fmt.Sprint(page1), review.ID), "untyped inbox")
	expect(t, slices.Contains(ids(all(c.Reviews.List(ctx, &assent.ListReviewsParams{ReportID: report.ID})), func(x *assent.Review) string { return x.ID }), review.ID), "reviews")
	expect(t, must(c.Reviews.Get(ctx, review.ID)).ID == review.ID, "review")
	expect(t, must(c.Reviews.Cancel(ctx, review.ID)).Status == "cancelled", "cancel review")
}

func TestTourCollectionsFlowsGate(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	c := tAgent(t)
	flow := must(c.Flows.Create(ctx, &assent.FlowCreate{Title: "Tour flow", ExternalID: assent.Ptr("tour")}))
	col := must(c.Collections.Create(ctx, &assent.CollectionCreate{Title: "Tour question", FlowID: &flow.ID,
		Questions:   []assent.CollectionQuestionCreate{{ID: "ok", Prompt: "Ok?", Kind: "boolean"}},
		Respondents: []string{"mia@example.com"}}))
	expect(t, must(c.Collections.Get(ctx, col.ID)).ID == col.ID, "get")
	expect(t, slices.Contains(ids(all(c.Collections.List(ctx, &assent.ListCollectionsParams{FlowID: flow.ID})), func(x *assent.Collection) string { return x.ID }), col.ID), "list")
	expect(t, must(c.Collections.Cancel(ctx, col.ID)).Status == "cancelled", "cancel")
	must(c.Flows.Cancel(ctx, flow.ID))
	_, err := c.Gate.Check(ctx, &assent.GateCheckRequest{Action: "not.registered", Input: map[string]any{}})
	apiError(t, err, 404)

	// A standing mandate: no rule of the action's decides, so its checks
	// ask the owners and administrators, and the demo administrator may
	// allow them ahead.
	action := must(tAdmin(t).Admin.Actions.Create(ctx, &assent.ActionInput{Name: tag("tour.m"),
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"amount": map[string]any{"type": "number"}}}}))
	granter := tPerson(t, "admin")
	mandate := must(granter.Mandates.Grant(ctx, &assent.MandateGrant{Action: action.Name, ExpiresAt: time.Now().Add(24 * time.Hour), Note: "Tour",
		Budget: assent.MandateGrantBudget{Count: assent.Ptr[int64](2), Sum: &assent.MandateGrantBudgetSum{Field: "amount", Max: 100}, Window: "day"}}))
	expect(t, mandate.Status == "active", "granted %s", mandate.Status)
	input := map[string]any{"amount": 30}
	allowed := must(c.Gate.Check(ctx, &assent.GateCheckRequest{Action: action.Name, Input: input}))
	expect(t, allowed.Decision == "allowed" && allowed.MandateID == mandate.ID, "check %+v", allowed)
	expect(t, must(c.VerifyDecisionToken(ctx, allowed.DecisionToken, input, action.Name)).Mandate == mandate.ID, "the token names the mandate")
	_, err = c.Receipts.Create(ctx, &assent.ReceiptCreate{DecisionToken: allowed.DecisionToken, Input: map[string]any{"amount": 31},
		Outcome: "succeeded", StartedAt: time.Now(), FinishedAt: time.Now()})
	e := apiError(t, err, 409)
	expect(t, e.Code == assent.CodeInputMismatch && e.Receipt != nil && !e.Receipt.InputMatches, "recorded, and carried by the error: %v", e)
	expect(t, slices.Contains(ids(all(granter.Mandates.List(ctx, &assent.ListMandatesParams{Live: "true"})), func(x *assent.Mandate) string { return x.ID }), mandate.ID), "mandates")
	read := must(granter.Mandates.Get(ctx, mandate.ID))
	expect(t, read.Uses == 1 && read.Remaining.Sum != nil && *read.Remaining.Sum == 70, "uses %d, remaining %+v", read.Uses, read.Remaining)
	expect(t, must(granter.Mandates.Revoke(ctx, mandate.ID)).Status == "revoked", "revoke")
	asked := must(c.Gate.Check(ctx, &assent.GateCheckRequest{Action: action.Name, Input: input}))
	expect(t, asked.Decision == "approval_required", "revoked: the next check asks a person, got %s", asked.Decision)
	must(c.Approvals.Cancel(ctx, asked.Approval.ID))
}

func TestTourAdmin(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	a := tAdmin(t).Admin
	org := must(a.Organization.Get(ctx))
	expect(t, must(a.Organization.Update(ctx, &assent.OrganizationPatch{Name: org.Name})).Name == org.Name, "org")
	email := tag("tour") + "@example.com"
	member := must(a.Members.Create(ctx, &assent.MemberCreate{Email: email, Name: "Tour", Role: "member"}))
	expect(t, slices.Contains(ids(all(a.Members.List(ctx, nil)), func(x *assent.Member) string { return x.ID }), member.ID), "members")
	expect(t, must(a.Members.Update(ctx, member.ID, &assent.MemberPatch{Name: "Tour Two"})).Name == "Tour Two", "member")
	expect(t, must(a.Members.CreateToken(ctx, member.ID, nil)).Token != "", "member token")
	team := must(a.Teams.Create(ctx, &assent.TeamCreate{Name: tag("tour"), Kind: "team", Members: []string{email}}))
	expect(t, slices.Contains(ids(all(a.Teams.List(ctx, nil)), func(x *assent.Team) string { return x.ID }), team.ID), "teams")
	must(a.Teams.Update(ctx, team.ID, &assent.TeamPatch{Members: []string{}}))
	must(0, a.Teams.Delete(ctx, team.ID))
	guest := must(a.Guests.Create(ctx, &assent.GuestCreate{Email: tag("guest") + "@example.net", Name: "G"}))
	expect(t, slices.Contains(ids(all(a.Guests.List(ctx, nil)), func(x *assent.Guest) string { return x.ID }), guest.ID), "guests")
	expect(t, must(a.Guests.Update(ctx, guest.ID, &assent.GuestPatch{Name: "G2"})).Name == "G2", "guest")
	must(0, a.Guests.Remove(ctx, guest.ID))
	key := must(a.Keys.Create(ctx, &assent.KeyCreate{Name: "tour", Kind: "agent", Scopes: []string{"approvals:read"}}))
	expect(t, strings.HasPrefix(key.Key, "asnt_agent_"), "key")
	expect(t, slices.Contains(ids(all(a.Keys.List(ctx, nil)), func(x *assent.Key) string { return x.ID }), key.ID), "keys")
	expect(t, must(a.Keys.Revoke(ctx, key.ID)).RevokedAt != nil, "revoke")
	rule := must(a.Rules.Create(ctx, &assent.RuleCreate{Name: tag("Two for critical"), Kind: "approval",
		Condition: `request.risk == "critical"`, RequiredApprovals: 2}))
	expect(t, slices.Contains(ids(all(a.Rules.List(ctx, nil)), func(x *assent.Rule) string { return x.ID }), rule.ID), "rules")
	expect(t, !must(a.Rules.Update(ctx, rule.ID, &assent.RulePatch{Enabled: false})).Enabled, "rule")
	must(0, a.Rules.Delete(ctx, rule.ID))
	schema := map[string]any{"type": "object"}
	action := must(a.Actions.Create(ctx, &assent.ActionInput{Name: tag("tour"), InputSchema: schema}))
	expect(t, slices.Contains(ids(all(a.Actions.List(ctx, nil)), func(x *assent.Action) string { return x.ID }), action.ID), "actions")
	expect(t, must(a.Actions.Get(ctx, action.ID)).ID == action.ID, "action")
	expect(t, must(a.Actions.Update(ctx, action.ID, &assent.ActionInput{Name: action.Name, InputSchema: schema, Description: "changed"})).Description == "changed", "update action")
	must(0, a.Actions.Delete(ctx, action.ID))
	must(a.Slack.Put(ctx, &assent.SlackSettings{SigningSecret: "8f742231b10e8888abcd99yyyzzz85a5", BotToken: "xoxb-1234-5678-abcdefghijkl", Channel: "C0123ABCD"}))
	expect(t, must(a.Slack.Get(ctx)).Channel == "C0123ABCD", "slack")
	must(a.Slack.Manifest(ctx))
	must(0, a.Slack.Delete(ctx))

	var mu sync.Mutex
	var received []http.Header
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(b)
		mu.Lock()
		received, bodies = append(received, r.Header.Clone()), append(bodies, b)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	screen := must(a.ModelScreen.Put(ctx, &assent.ModelScreenSettings{URL: srv.URL + "/v1/chat/completions", Model: "tour-model", APIKey: "sk-tour"}))
	expect(t, screen.Enabled && screen.APIKeySet, "model screen")
	expect(t, *must(a.ModelScreen.Get(ctx)).Model == "tour-model", "model screen model")
	must(0, a.ModelScreen.Delete(ctx))
	expect(t, !must(a.ModelScreen.Get(ctx)).Enabled, "model screen off")
	hook := must(a.Webhooks.Create(ctx, &assent.WebhookSettings{URL: srv.URL + "/hook", Events: []string{"approval.approved"}}))
	expect(t, hook.Secret != "", "secret")
	expect(t, must(a.Webhooks.Get(ctx, hook.ID)).ID == hook.ID, "webhook")
	expect(t, slices.Contains(ids(all(a.Webhooks.List(ctx, nil)), func(x *assent.WebhookEndpoint) string { return x.ID }), hook.ID), "webhooks")
	expect(t, must(a.Webhooks.Test(ctx, hook.ID)).Delivered, "test")
	mu.Lock()
	ev, err := assent.VerifyWebhook(bodies[len(bodies)-1], received[len(received)-1], hook.Secret, 0)
	mu.Unlock()
	expect(t, err == nil && ev.Test, "test delivery %v", err)
	created := must(tAgent(t).Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Hooked"}))
	must(tPerson(t, "admin").Approvals.Decide(ctx, created.ID, &assent.DecisionCreate{Decision: "approve"}))
	var delivered []*assent.Delivery
	for deadline := time.Now().Add(time.Minute); len(delivered) == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, d := range all(a.Webhooks.Deliveries(ctx, hook.ID, nil)) {
			if d.Status == "delivered" {
				delivered = append(delivered, d)
			}
		}
	}
	expect(t, len(delivered) > 0, "no delivery")
	expect(t, must(a.Deliveries.Get(ctx, delivered[0].ID)).ID == delivered[0].ID, "delivery")
	must(a.Deliveries.Resend(ctx, delivered[0].ID))
	expect(t, must(a.Webhooks.Recover(ctx, hook.ID, &assent.RecoverRequest{Since: time.Now().Add(-time.Hour)})).Recovered == 0, "recover")
	expect(t, must(a.Webhooks.RotateSecret(ctx, hook.ID)).Secret != hook.Secret, "rotate")
	expect(t, !must(a.Webhooks.Update(ctx, hook.ID, &assent.WebhookSettings{Enabled: assent.Ptr(false)})).Enabled, "disable")
	must(0, a.Webhooks.Delete(ctx, hook.ID))
}

// The reading catches what it must: a property a closed schema lacks,
// nested and through allOf, and an undocumented status.
func TestTourReadsAnswersAgainstTheDocument(t *testing.T) {
	l := newTourLog()
	l.observe("getApproval", 200, []byte(`{"id":"apr_1","status":"pending","resolvedApprovers":[{"id":"m","urgency":1}],"snoozed":true,"input":{"free":1}}`))
	l.observe("createKey", 201, []byte(`{"id":"key_1","key":"k","hint":"x"}`))
	l.observe("getApproval", 418, nil)
	l.observe("getMe", 200, []byte(`{"kind":"agent"}`))
	var got []string
	for u := range l.unknown {
		got = append(got, u)
	}
	sort.Strings(got)
	want := []string{
		"createKey: 201.hint is not in the document",
		"getApproval: 200.resolvedApprovers[0].urgency is not in the document",
		"getApproval: 200.snoozed is not in the document",
		"getApproval: status 418 is not documented",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTourZEveryOperation runs last (tests run in source order).
func TestTourZEveryOperation(t *testing.T) {
	startDev(t)
	tour.mu.Lock()
	defer tour.mu.Unlock()
	var missing []string
	for op := range tour.ops {
		if !tour.called[op] && !gen.Unexposed[op] { // Slack's and Prometheus's to call
			missing = append(missing, op)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("operations no tour test called through the SDK: %s", strings.Join(missing, ", "))
	}
	var unknown []string
	for u := range tour.unknown {
		unknown = append(unknown, u)
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("answers the document does not describe:\n%s", strings.Join(unknown, "\n"))
	}
}
