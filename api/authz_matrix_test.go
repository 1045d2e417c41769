package api_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/web"
)

// The authorisation matrix: every route the API serves, one line each
// (a route whose answer depends on the body, like a PATCH of the
// organisation's plan, may have a second), with the status every kind of
// caller gets from it. TestAuthzMatrixCoversEveryRoute fails when a served
// route has no row, so a new endpoint lands with its row; TestAuthzMatrix
// sends every request of the matrix.
//
// A row is {method, path, scope, id, body, want}. Its want names every principal once (a group names several; a
// principal named on its own overrides its group), in any order:
//
//	anon           no credentials
//	agent          an agent key with exactly the row's scope (every scope when the row needs none)
//	noscope        an agent key with every scope but the row's (no scope when the row needs none)
//	owner          a member token of an owner (Ada)
//	administrator  a member token of an administrator (Bob)
//	member         a member token of a plain member (Cy)
//	adminkey       an admin key
//	guest          a guest's page session cookie, sent to the API
//	otheragent     another organisation's agent key, with every scope
//	otheradmin     another organisation's admin key
//	othermember    a member token of another organisation's owner
//	members        = owner administrator member
//	others         = otheragent otheradmin othermember
//
// "owner=200/409" reads: 200 on a fresh resource; 409 when the route's first
// allowed principal (the first column expecting 2xx) has already acted on the
// same resource, as in the Idempotency-Key checks. Without "/" both are the
// same.
//
// The path is the route as gin registers it; its parameter is filled with a
// fresh resource of the first organisation (the row's id), made for every
// single call, so state-changing calls never see each other's effects and
// another organisation's principals act on real foreign ids. The body is
// valid, so authorisation and not validation decides; in it {unique} is a
// fresh name, {newMember} a fresh member's email, {question} the open question of an askedApproval,
// {receiver} a local webhook receiver, {livingReport} a fresh living
// report, {sharedReport} a fresh report every member can read and
// {decisionToken} the token of a fresh allowed gate check of input {}.
var authzMatrix = []authzRow{
	{"GET", "/api/v1/me", "", noID, ``, "anon=401 agent=200 noscope=200 members=200 adminkey=200 guest=401 others=200"},
	{"POST", "/api/v1/me/tokens", "", noID, ``, "anon=401 agent=403 noscope=403 members=201 adminkey=403 guest=401 others=201 otheragent=403 otheradmin=403"},
	// A person's own tokens: a member token lists and revokes those that
	// act as its person; anyone else's token, and any key, is not found.
	{"GET", "/api/v1/me/tokens", "", noID, ``, "anon=401 agent=403 noscope=403 members=200 adminkey=403 guest=401 others=403 othermember=200"},
	{"DELETE", "/api/v1/me/tokens/:id", "", cyOwnToken, ``, "anon=401 agent=403 noscope=403 owner=404 administrator=404 member=200 adminkey=403 guest=401 others=403 othermember=404"},
	{"DELETE", "/api/v1/me/tokens/:id", "", anAgentKey, ``, "anon=401 agent=403 noscope=403 members=404 adminkey=403 guest=401 others=403 othermember=404"},
	{"GET", "/api/v1/openapi.json", "", noID, ``, "anon=200 agent=200 noscope=200 members=200 adminkey=200 guest=200 others=200"}, // the contract is public
	// The instance's public documents: signing keys, and how /mcp authenticates.
	{"GET", "/.well-known/assent/evidence-keys", "", noID, ``, "anon=200 agent=200 noscope=200 members=200 adminkey=200 guest=200 others=200"},
	{"GET", "/.well-known/jwks.json", "", noID, ``, "anon=200 agent=200 noscope=200 members=200 adminkey=200 guest=200 others=200"},
	{"GET", "/.well-known/oauth-protected-resource", "", noID, ``, "anon=200 agent=200 noscope=200 members=200 adminkey=200 guest=200 others=200"},
	{"GET", "/.well-known/oauth-protected-resource/mcp", "", noID, ``, "anon=200 agent=200 noscope=200 members=200 adminkey=200 guest=200 others=200"},

	{"POST", "/api/v1/approvals", aw, noID, `{"title":"Pay"}`, "anon=401 agent=201 noscope=403 members=201 adminkey=403 guest=401 others=201 otheradmin=403"},
	{"GET", "/api/v1/approvals", ar, noID, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=200 otheradmin=403"},
	{"GET", "/api/v1/approvals/:id", ar, pendingApproval, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/approvals/:id/answers", aw, askedApproval, `{"questionId":"{question}","answer":"ACME"}`, "anon=401 agent=200 noscope=403 members=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/approvals/:id/cancel", aw, pendingApproval, ``, "anon=401 agent=200 noscope=403 owner=200/409 administrator=200/409 member=403/409 adminkey=403 guest=401 others=404 otheradmin=403"}, // adminkey: see adminKeyCancel
	{"POST", "/api/v1/approvals/:id/decision", "", pendingApproval, `{"decision":"approve"}`, "anon=401 agent=403 noscope=403 owner=403/409 administrator=403/409 member=200 adminkey=403 guest=401 others=404 otheragent=403 otheradmin=403"},
	{"POST", "/api/v1/approvals/:id/questions", "", pendingApproval, `{"question":"Which customer?"}`, "anon=401 agent=403 noscope=403 members=403 member=201 adminkey=403 guest=401 others=404 otheragent=403 otheradmin=403"},

	{"POST", "/api/v1/collections", cw, noID, `{"title":"Facts","questions":[{"prompt":"Budget?","kind":"number"}],"respondents":["everyone"]}`, "anon=401 agent=201 noscope=403 members=201 adminkey=403 guest=401 others=201 otheradmin=403"},
	{"GET", "/api/v1/collections", cr, noID, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=200 otheradmin=403"},
	{"GET", "/api/v1/collections/:id", cr, openCollection, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/collections/:id/cancel", cw, openCollection, ``, "anon=401 agent=200 noscope=403 owner=200/409 administrator=200/409 member=403/409 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"GET", "/api/v1/flows/:id/evidence", "", openFlow, ``, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"GET", "/api/v1/reports/:idOrSlug/evidence", "", liveReport, ``, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/reviews", vw, noID, `{"title":"Check","reportId":"{sharedReport}","reviewers":["cy@example.com"]}`, "anon=401 agent=201 noscope=403 members=201 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"GET", "/api/v1/reviews", vr, noID, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=200 otheradmin=403"},
	{"GET", "/api/v1/reviews/:id", vr, openReview, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/reviews/:id/cancel", vw, openReview, ``, "anon=401 agent=200 noscope=403 owner=200/409 administrator=200/409 member=403/409 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/reviews/:id/verdict", "", openReview, `{"verdict":"approved"}`, "anon=401 agent=403 noscope=403 owner=403/409 administrator=403/409 member=200 adminkey=403 guest=401 others=404 otheragent=403 otheradmin=403"},
	{"POST", "/api/v1/reports/:idOrSlug/comments", mw, sharedReportID, `{"body":"Looks right."}`, "anon=401 agent=201 noscope=403 members=201 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"GET", "/api/v1/reports/:idOrSlug/comments", rr, commentedReport, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"GET", "/api/v1/reports/:idOrSlug/comments/images/:sha256", rr, reportWithImage, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"DELETE", "/api/v1/reports/:idOrSlug/comments/:commentId", mw, commentedReport, ``, "anon=401 agent=204 noscope=403 members=403 adminkey=403 guest=401 others=404 otheradmin=403"}, // only its author retracts
	{"GET", "/api/v1/comments", rr, noID, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=200 otheradmin=403"},
	{"POST", "/api/v1/comments/:threadId/resolve", mw, openThread, `{"note":"Done."}`, "anon=401 agent=200/409 noscope=403 owner=200/409 administrator=200/409 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/reports/:idOrSlug/revision-briefs", rr, commentedReport, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/collections/:id/replies", "", openCollection, `{"answers":{"q1":42},"submit":true}`, "anon=401 agent=403 noscope=403 owner=403/409 administrator=403/409 member=200 adminkey=403 guest=401 others=404 otheragent=403 otheradmin=403"},
	// The action is registered in the first organisation only.
	{"POST", "/api/v1/gate", gc, noID, `{"action":"` + matrixAction + `","input":{}}`, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=404 otheradmin=403"},
	// The token is the gate:check key's, and matrixAction names the
	// receipts:write key (agent) among its executors: members holding the
	// token are neither, so 403. Another organisation's callers hold a
	// token of the first: refused naming decisionToken. The receipt rule's
	// own cases are TestAuthzMatrix's "receipt rule".
	{"POST", "/api/v1/receipts", rc, noID, `{"decisionToken":"{decisionToken}","input":{},"outcome":"succeeded","startedAt":"2026-01-02T15:04:05Z","finishedAt":"2026-01-02T15:04:06Z"}`,
		"anon=401 agent=201 noscope=403 members=403 adminkey=403 guest=401 others=400 otheradmin=403"},
	{"GET", "/api/v1/inbox", "", noID, ``, "anon=401 agent=403 noscope=403 members=200 adminkey=403 guest=401 others=403 othermember=200"},

	{"POST", "/api/v1/uploads", rw, noID, ``, "anon=401 agent=201 noscope=403 members=201 adminkey=403 guest=401 others=201 otheradmin=403"},
	{"POST", "/api/v1/reports", rw, noID, `{"title":"Q3","content":"<h1>Q3</h1>"}`, "anon=401 agent=201 noscope=403 members=201 adminkey=403 guest=401 others=201 otheradmin=403"},
	{"GET", "/api/v1/reports", rr, noID, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=200 otheradmin=403"},
	{"GET", "/api/v1/reports/:idOrSlug", rr, liveReport, ``, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"GET", "/api/v1/reports/:idOrSlug/versions", rr, liveReport, ``, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	// A member reads the analytics of the reports they manage or read;
	// both organisations are on the team plan (newAuthzEnv).
	{"GET", "/api/v1/reports/:idOrSlug/analytics", rr, liveReport, ``, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"GET", "/api/v1/analytics", rr, noID, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=200 otheradmin=403"},
	{"POST", "/api/v1/reports/:idOrSlug/versions", rw, liveReport, `{"content":"<h1>v2</h1>"}`, "anon=401 agent=201 noscope=403 owner=201 administrator=201 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/reports/:idOrSlug/rollback", rw, liveReport, `{"version":1}`, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/reports/:idOrSlug/archive", rw, liveReport, ``, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	// Copying is reading: liveReport is shared with nobody, and owners and
	// administrators manage it without reading it.
	{"POST", "/api/v1/reports/:idOrSlug/copy", rw, liveReport, ``, "anon=401 agent=201 noscope=403 members=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/schedules", sw, noID, `{"reportId":"{livingReport}","every":"24h"}`, "anon=401 agent=201 noscope=403 owner=201 administrator=201 member=403 adminkey=403 guest=401 others=400 otheradmin=403"},
	{"GET", "/api/v1/schedules", sw, noID, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=200 otheradmin=403"},
	{"GET", "/api/v1/schedules/:id", sw, aSchedule, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/schedules/:id/pause", sw, aSchedule, ``, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/schedules/:id/resume", sw, aSchedule, ``, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"DELETE", "/api/v1/schedules/:id", sw, aSchedule, ``, "anon=401 agent=204 noscope=403 owner=204 administrator=204 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"PATCH", "/api/v1/reports/:idOrSlug", rw, liveReport, `{"classification":"confidential"}`, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"PATCH", "/api/v1/reports/:idOrSlug", rw, liveReport, `{"showViewers":true}`, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/reports/:idOrSlug/share", rs, liveReport, `{"audience":["everyone"]}`, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"DELETE", "/api/v1/reports/:idOrSlug/share", rs, liveReport, `{"audience":["everyone"]}`, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/reports/:idOrSlug/send", rs, liveReport, `{"to":["new.reader@partner.example"],"note":"For Monday"}`, "anon=401 agent=202 noscope=403 owner=202 administrator=202 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/audiences/resolve", ad, noID, `{"audience":["everyone"]}`, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=200 otheradmin=403"},
	{"PUT", "/api/v1/reports/:idOrSlug/data/:name", rw, reportWithData, `{"kpis":[1]}`, "anon=401 agent=200 noscope=403 owner=200 administrator=200 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"GET", "/api/v1/reports/:idOrSlug/data", rr, reportWithData, ``, "anon=401 agent=200 noscope=403 members=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"GET", "/api/v1/reports/:idOrSlug/data/:name", rr, reportWithData, ``, "anon=401 agent=200 noscope=403 members=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"DELETE", "/api/v1/reports/:idOrSlug/data/:name", rw, reportWithData, ``, "anon=401 agent=204 noscope=403 owner=204 administrator=204 member=403 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"GET", "/api/v1/templates", rr, noID, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=200 otheradmin=403"},

	{"POST", "/api/v1/flows", fw, noID, `{"title":"Quarter close"}`, "anon=401 agent=201 noscope=403 members=201 adminkey=403 guest=401 others=201 otheradmin=403"},
	{"GET", "/api/v1/flows/:id", fr, openFlow, ``, "anon=401 agent=200 noscope=403 members=200 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/flows/:id/complete", fw, openFlow, ``, "anon=401 agent=200 noscope=403 members=403/409 adminkey=403 guest=401 others=404 otheradmin=403"},
	{"POST", "/api/v1/flows/:id/cancel", fw, openFlow, ``, "anon=401 agent=200 noscope=403 owner=200/409 administrator=200/409 member=403/409 adminkey=403 guest=401 others=404 otheradmin=403"}, // adminkey: see adminKeyCancel

	{"GET", "/api/v1/admin/organization", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"PATCH", "/api/v1/admin/organization", "", noID, `{"guestsMayApprove":true}`, adminOnly + "adminkey=200 otheradmin=200"},
	{"PATCH", "/api/v1/admin/organization", "", noID, `{"plan":"enterprise"}`, adminOnly + "adminkey=403 otheradmin=403"}, // the plan is the operator's
	{"POST", "/api/v1/admin/members", "", noID, `{"email":"{unique}@example.com"}`, adminOnly + "adminkey=201 otheradmin=201"},
	{"GET", "/api/v1/admin/members", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"PATCH", "/api/v1/admin/members/:id", "", plainMember, `{"name":"Renamed"}`, adminOnly + "adminkey=200 otheradmin=404"},
	{"POST", "/api/v1/admin/members/:id/tokens", "", plainMember, ``, adminOnly + "adminkey=201 otheradmin=404"},
	{"POST", "/api/v1/admin/teams", "", noID, `{"name":"{unique}","kind":"team"}`, adminOnly + "adminkey=201 otheradmin=201"},
	{"GET", "/api/v1/admin/teams", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"PATCH", "/api/v1/admin/teams/:id", "", aTeam, `{"name":"{unique}"}`, adminOnly + "adminkey=200 otheradmin=404"},
	{"DELETE", "/api/v1/admin/teams/:id", "", aTeam, ``, adminOnly + "adminkey=204 otheradmin=404"},
	{"POST", "/api/v1/admin/guests", "", noID, `{"email":"{unique}@partner.example"}`, adminOnly + "adminkey=201 otheradmin=201"},
	{"GET", "/api/v1/admin/guests", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"PATCH", "/api/v1/admin/guests/:id", "", aGuest, `{"name":"{unique}"}`, adminOnly + "adminkey=200 otheradmin=404"},
	{"DELETE", "/api/v1/admin/guests/:id", "", aGuest, ``, adminOnly + "adminkey=204 otheradmin=404"},
	{"POST", "/api/v1/admin/keys", "", noID, `{"name":"{unique}","kind":"agent","scopes":["flows:read"]}`, adminOnly + "adminkey=201 otheradmin=201"},
	{"GET", "/api/v1/admin/keys", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"DELETE", "/api/v1/admin/keys/:id", "", anAgentKey, ``, adminOnly + "adminkey=200 otheradmin=404"},
	{"POST", "/api/v1/admin/rules", "", noID, `{"name":"{unique}","kind":"approval","requiredApprovals":2,"enabled":false}`, adminOnly + "adminkey=201 otheradmin=201"},
	{"GET", "/api/v1/admin/rules", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"PATCH", "/api/v1/admin/rules/:id", "", disabledRule, `{"enabled":false}`, adminOnly + "adminkey=200 otheradmin=404"},
	{"DELETE", "/api/v1/admin/rules/:id", "", disabledRule, ``, adminOnly + "adminkey=204 otheradmin=404"},
	{"POST", "/api/v1/admin/actions", "", noID, `{"name":"{unique}","inputSchema":{"type":"object"}}`, adminOnly + "adminkey=201 otheradmin=201"},
	{"GET", "/api/v1/admin/actions", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"GET", "/api/v1/admin/actions/:id", "", anAction, ``, adminOnly + "adminkey=200 otheradmin=404"},
	{"PUT", "/api/v1/admin/actions/:id", "", anAction, `{"name":"{unique}","inputSchema":{"type":"object"}}`, adminOnly + "adminkey=200 otheradmin=404"},
	{"DELETE", "/api/v1/admin/actions/:id", "", anAction, ``, adminOnly + "adminkey=204 otheradmin=404"},
	{"POST", "/api/v1/admin/webhooks", "", noID, `{"url":"{receiver}"}`, adminOnly + "adminkey=201 otheradmin=201"},
	{"GET", "/api/v1/admin/webhooks", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"GET", "/api/v1/admin/webhooks/:id", "", webhookEndpoint, ``, adminOnly + "adminkey=200 otheradmin=404"},
	{"PATCH", "/api/v1/admin/webhooks/:id", "", webhookEndpoint, `{"enabled":true}`, adminOnly + "adminkey=200 otheradmin=404"},
	{"DELETE", "/api/v1/admin/webhooks/:id", "", webhookEndpoint, ``, adminOnly + "adminkey=204 otheradmin=404"},
	{"POST", "/api/v1/admin/webhooks/:id/rotate-secret", "", webhookEndpoint, ``, adminOnly + "adminkey=200 otheradmin=404"},
	{"POST", "/api/v1/admin/webhooks/:id/test", "", webhookEndpoint, ``, adminOnly + "adminkey=200 otheradmin=404"},
	{"GET", "/api/v1/admin/webhooks/:id/deliveries", "", webhookEndpoint, ``, adminOnly + "adminkey=200 otheradmin=404"},
	{"POST", "/api/v1/admin/webhooks/:id/recover", "", webhookEndpoint, `{"since":"2020-01-01T00:00:00Z"}`, adminOnly + "adminkey=202 otheradmin=404"},
	{"GET", "/api/v1/admin/deliveries/:id", "", failedDelivery, ``, adminOnly + "adminkey=200 otheradmin=404"},
	{"POST", "/api/v1/admin/deliveries/:id/resend", "", failedDelivery, ``, adminOnly + "adminkey=202 otheradmin=404"},
	{"GET", "/api/v1/admin/integrations/slack", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"PUT", "/api/v1/admin/integrations/slack", "", noID, `{"channel":"C0123ABCD"}`, adminOnly + "adminkey=200 otheradmin=200"},
	{"DELETE", "/api/v1/admin/integrations/slack", "", noID, ``, adminOnly + "adminkey=204 otheradmin=204"},
	{"GET", "/api/v1/admin/integrations/slack/manifest", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"GET", "/api/v1/admin/model-screen", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"PUT", "/api/v1/admin/model-screen", "", noID, `{"url":"http://127.0.0.1:9/v1/chat/completions","model":"m"}`, adminOnly + "adminkey=200 otheradmin=200"},
	{"DELETE", "/api/v1/admin/model-screen", "", noID, ``, adminOnly + "adminkey=204 otheradmin=204"},
	{"GET", "/api/v1/admin/held-versions", "", noID, ``, adminOnly + "adminkey=200 otheradmin=200"},
	{"POST", "/api/v1/admin/held-versions/:id/release", "", heldVersion, ``, adminOnly + "adminkey=200/409 otheradmin=404"},
	{"POST", "/api/v1/admin/held-versions/:id/decline", "", heldVersion, ``, adminOnly + "adminkey=200/409 otheradmin=404"},

	// A member's own delegation while away; it begins in the future so that
	// no other row's request asks a delegate.
	{"GET", "/api/v1/me/delegation", "", noID, ``, "anon=401 agent=403 noscope=403 members=200 adminkey=403 guest=401 others=403 othermember=200"},
	{"PUT", "/api/v1/me/delegation", "", noID, `{"to":"{newMember}","from":"2098-01-01T00:00:00Z","until":"2099-01-01T00:00:00Z"}`, "anon=401 agent=403 noscope=403 members=200 adminkey=403 guest=401 others=403 othermember=400"},
	{"DELETE", "/api/v1/me/delegation", "", noID, ``, "anon=401 agent=403 noscope=403 members=204 adminkey=403 guest=401 others=403 othermember=204"},

	// Standing mandates: people grant them (owners and administrators by
	// default), members read and revoke their own, administrators and
	// admin keys the organisation's. They start in the future, so no other
	// row's check is allowed by one.
	{"POST", "/api/v1/mandates", aw, noID, matrixMandate, "anon=401 agent=403 noscope=403 owner=201 administrator=201 member=403 adminkey=403 guest=401 others=403 othermember=404"},
	{"GET", "/api/v1/mandates", ar, noID, ``, "anon=401 agent=403 noscope=403 members=200 adminkey=200 guest=401 others=200 otheragent=403"},
	{"GET", "/api/v1/mandates/:id", ar, grantedMandate, ``, "anon=401 agent=403 noscope=403 owner=200 administrator=200 member=404 adminkey=200 guest=401 others=404 otheragent=403"},
	{"POST", "/api/v1/mandates/:id/revoke", aw, grantedMandate, ``, "anon=401 agent=403 noscope=403 owner=200/409 administrator=200/409 member=404 adminkey=200/409 guest=401 others=404 otheragent=403"},
}

// checkReceiptRule: a token's receipt is taken from who it was issued to
// (the key or the member who asked the gate) or a key its action names
// among its executors; another key or member of the organisation holding
// the token gets 403, another organisation's key 400 (not its token).
func (e *authzEnv) checkReceiptRule(t *testing.T) {
	requester, requesterKey, err := e.store.CreateKey(e.ctx, e.org.ID, "requester", models.KeyAgent, []string{gc, rc})
	require.NoError(t, err)
	e.ours = append(e.ours, requester.ID)
	for _, tc := range []struct {
		name, asks, reports string
		want                int
	}{
		{"the requester's key", requesterKey, requesterKey, 201},
		{"another agent key of the organisation", requesterKey, e.agentKey, 403},
		{"a key the action names among its executors", requesterKey, e.exact[rc], 201},
		{"the requester's member token", e.cyToken, e.cyToken, 201},
		{"another member's token", e.cyToken, e.memberToken, 403},
		{"another organisation's key", requesterKey, e.otherAgent, 400},
	} {
		gate := e.do(t, "POST", "/api/v1/gate", tc.asks, `{"action":"`+matrixAction+`","input":{}}`, nil)
		require.Equal(t, 200, gate.status, "%s: %s", tc.name, gate.body)
		body := `{"decisionToken":"` + gate.decoded["decisionToken"].(string) + `","input":{},"outcome":"succeeded","startedAt":"2026-01-02T15:04:05Z","finishedAt":"2026-01-02T15:04:06Z"}`
		r := e.do(t, "POST", "/api/v1/receipts", tc.reports, body, nil)
		assert.Equal(t, tc.want, r.status, "%s: %s", tc.name, r.body)
		if tc.want == 403 {
			assert.Equal(t, "forbidden", errField(r, "code"), tc.name)
			// Refused, it took nothing: the requester's receipt is taken.
			assert.Equal(t, 201, e.do(t, "POST", "/api/v1/receipts", tc.asks, body, nil).status, tc.name)
		}
	}
}

// matrixAsk is an action whose every check asks the owners and
// administrators, at low risk: what a mandate stands in for.
const matrixAsk = "matrix.ask"

// matrixMandate grants a mandate for matrixAsk that starts in the future.
const matrixMandate = `{"action":"` + matrixAsk + `","startsAt":"2098-06-01T00:00:00Z","expiresAt":"2099-01-01T00:00:00Z","budget":{"count":1,"window":"day"}}`

// adminKeyCancel: docs/decisions.md says admin keys may cancel a request or
// a flow on the requester's or starter's behalf, and the workflow and
// the flows service would let them (an admin key's Actor is an
// Administrator), but both routes require approvals:write or flows:write,
// which an admin key never carries, so they answer 403 insufficient_scope.
// The rows record what the routes do; which of the two is meant is open.

// Short names for the matrix's scope column.
const (
	ar = scopes.ApprovalsRead
	aw = scopes.ApprovalsWrite
	fr = scopes.FlowsRead
	fw = scopes.FlowsWrite
	cr = scopes.CollectionsRead
	cw = scopes.CollectionsWrite
	rr = scopes.ReportsRead
	rw = scopes.ReportsWrite
	sw = scopes.SchedulesWrite
	rs = scopes.ReportsShare
	ad = scopes.AudiencesRead
	vr = scopes.ReviewsRead
	vw = scopes.ReviewsWrite
	mw = scopes.CommentsWrite
	gc = scopes.GateCheck
	rc = scopes.ReceiptsWrite
)

// matrixAction is an action every gate check of the first organisation
// is allowed.
const matrixAction = "matrix.run"

// datasetParam is a dataset's name in a route; the matrix names the one
// every reportWithData has.
const (
	datasetParam  = ":name"
	matrixDataset = "metrics"
)

// secondParams are the path parameters a row's resource fills beside its
// id.
var secondParams = []string{datasetParam, ":sha256", ":commentId"}

// tinyPNG is a 1×1 PNG, base64, for comment images.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// adminOnly is what every admin route answers to all but admin keys.
const adminOnly = "anon=401 agent=403 noscope=403 members=403 guest=401 otheragent=403 othermember=403 "

// authzRow is one route and what every principal gets from it.
type authzRow struct {
	method, path string
	// scope is what the route requires of agent keys; "" for none.
	scope string
	// id is what the path's parameter names.
	id   matrixResource
	body string
	want string
}

func (r authzRow) name() string { return r.method + " " + r.path }

// matrixResource is the kind of resource a row's path parameter names.
type matrixResource int

const (
	noID matrixResource = iota
	// pendingApproval was requested by the approvals:write agent key, with
	// Cy (a plain member) its only approver.
	pendingApproval
	// askedApproval is a pendingApproval with Cy's question open.
	askedApproval
	// openFlow was started by the flows:write agent key.
	openFlow
	// openCollection was requested by the collections:write agent key,
	// with Cy its only respondent and one number question, q1.
	openCollection
	// openReview was requested by the reviews:write agent key of a report
	// shared with everyone, with Cy its only reviewer.
	openReview
	// sharedReportID is a report shared with everyone.
	sharedReportID
	// commentedReport is a sharedReportID with a thread the comments:write
	// agent key opened (its comment the row's :commentId); reportWithImage
	// the same with an image (:sha256); openThread names that thread.
	commentedReport
	reportWithImage
	openThread
	// plainMember is a member of the role member.
	plainMember
	// aGuest is a guest of the organisation.
	aGuest
	// aTeam is a team of the organisation.
	aTeam
	// anAgentKey is an agent key.
	anAgentKey
	// disabledRule is a rule that is not enabled.
	disabledRule
	// webhookEndpoint is an enabled endpoint posting to a local receiver.
	webhookEndpoint
	// failedDelivery is a failed delivery to a webhookEndpoint.
	failedDelivery
	// liveReport was published by the reports:write agent key, its
	// version 1 live.
	liveReport
	// heldVersion is version 1 of a report the reports:write agent key
	// published, held by the publish scan.
	heldVersion
	// aSchedule is a daily schedule of a living report.
	aSchedule
	// reportWithData is a liveReport with the dataset matrixDataset.
	reportWithData
	// anAction is a registered action.
	anAction
	// grantedMandate is a mandate the owner (Ada) granted (matrixMandate).
	grantedMandate
	// cyOwnToken is a member token Cy (a plain member) minted for herself.
	cyOwnToken
)

// matrixPrincipals are the matrix's columns; the idempotency checks take
// the first allowed one in this order as the first caller.
var matrixPrincipals = []string{"anon", "agent", "noscope", "owner", "administrator", "member", "adminkey", "guest",
	"otheragent", "otheradmin", "othermember"}

var matrixGroups = map[string][]string{
	"members": {"owner", "administrator", "member"},
	"others":  {"otheragent", "otheradmin", "othermember"},
}

// parseWant reads a row's want; every principal must be named exactly once.
func parseWant(s string) (map[string]testenv.Outcome, error) {
	return testenv.ParseWant(s, matrixPrincipals, matrixGroups)
}

var routeParam = regexp.MustCompile(`:[A-Za-z]+`)

// TestAuthzMatrixCoversEveryRoute fails when the engine serves a route
// under /api/v1 or /.well-known that has no row, when a row names a route it does not
// serve, or when a row cannot be read.
func TestAuthzMatrixCoversEveryRoute(t *testing.T) {
	t.Parallel()
	store := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	h := api.New(api.Deps{Logger: quiet, Services: app.Build(app.Deps{Store: store, Logger: quiet}).API()})
	engine, ok := h.(*gin.Engine)
	require.True(t, ok, "api.New must return the *gin.Engine so its routes can be listed")

	rows := map[string]bool{}
	for _, row := range authzMatrix {
		rows[row.name()] = true
		_, err := parseWant(row.want)
		assert.NoError(t, err, row.name())
		if (row.id == noID) != !routeParam.MatchString(row.path) {
			t.Errorf("%s: a path with a parameter needs a resource, and only such a path", row.name())
		}
		bare := row.path
		for _, p := range secondParams {
			bare = strings.ReplaceAll(bare, p, "")
		}
		if strings.Count(bare, ":") > 1 {
			t.Errorf("%s: fill more than one path parameter in authzEnv.call first", row.name())
		}
	}
	var served []string
	for _, r := range engine.Routes() {
		if strings.HasPrefix(r.Path, "/api/v1/") || strings.HasPrefix(r.Path, "/.well-known/") {
			served = append(served, r.Method+" "+r.Path)
		}
	}
	testenv.CheckCoverage(t, served, rows, "authzMatrix (api/authz_matrix_test.go)")
}

// TestAuthzMatrix sends every row's request as every principal and checks
// the status; another organisation's principals must get the same answer
// for this organisation's real ids as for ids that do not exist, and no
// 2xx of theirs may carry this organisation's ids. For POSTs it then
// checks that an Idempotency-Key belongs to whoever sent it: reused by
// another principal, first after an allowed call and then after a refused
// one, it gets that principal's own outcome, never the stored response.
func TestAuthzMatrix(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		// The rows run in shards at once, each shard in an organisation of
		// its own: a row may change what its organisation holds, so rows
		// of one organisation run one after another.
		for shard := range matrixShards {
			t.Run(fmt.Sprintf("shard %d", shard), func(t *testing.T) {
				t.Parallel()
				env := newAuthzEnv(t, db)
				for i, row := range authzMatrix {
					if i%matrixShards == shard {
						t.Run(row.name(), func(t *testing.T) { env.checkRow(t, row) })
					}
				}
			})
		}
		env := newAuthzEnv(t, db)
		t.Run("plan change is the operator's", func(t *testing.T) {
			r := env.do(t, "PATCH", "/api/v1/admin/organization", env.adminKey, `{"plan":"enterprise"}`, nil)
			assert.Equal(t, 403, r.status)
			assert.Equal(t, "forbidden", errField(r, "code"))
			assert.Equal(t, "plan", errField(r, "field"))
			org := env.do(t, "GET", "/api/v1/admin/organization", env.adminKey, "", nil)
			assert.Equal(t, "team", org.decoded["plan"], "unchanged")
		})
		t.Run("receipt rule", env.checkReceiptRule)
		t.Run("page sessions are not API credentials", func(t *testing.T) {
			for _, token := range []string{env.guestSession, env.memberSession} {
				assert.Equal(t, 401, env.do(t, "GET", "/api/v1/me", token, "", nil).status, "a session token as a bearer")
				assert.Equal(t, 401, env.do(t, "GET", "/api/v1/me", "", "", map[string]string{"Cookie": web.SessionCookie + "=" + token}).status)
			}
		})
	})
}

// matrixShards is how many organisations the matrix's rows are spread over.
const matrixShards = 4

// checkRow checks each principal's cell of row, and for a POST what a
// replayed Idempotency-Key answers.
func (e *authzEnv) checkRow(t *testing.T, row authzRow) {
	want, err := parseWant(row.want)
	require.NoError(t, err)
	for _, p := range matrixPrincipals {
		e.checkCell(t, row, p, want[p].Fresh)
	}
	if row.method == http.MethodPost {
		e.checkIdempotency(t, row, want)
	}
}

// authzEnv is the stack with a key for each scope, another organisation's
// owner, a guest and a member signed in to the pages, and a local webhook
// receiver.
type authzEnv struct {
	*stack
	ctx                         context.Context
	receiver                    string
	otherOwnerToken             string
	guestSession, memberSession string
	exact, allBut               map[string]string // scope → agent key
	exactID                     map[string]string // scope → the exact key's id
	noScopes                    string
	// ours are ids of the first organisation, which the other's principals
	// must never see.
	ours   []string
	serial atomic.Int64
}

func newAuthzEnv(t *testing.T, db *gorm.DB) *authzEnv {
	t.Helper()
	ctx := context.Background()
	e := &authzEnv{stack: newStackWith(t, db, netguard.DevLoopback), ctx: ctx,
		exact: map[string]string{}, allBut: map[string]string{}, exactID: map[string]string{}}
	st := e.store
	e.receiver = newReceiver(t, "").srv.URL + "/hook"
	e.ours = append(e.ours, e.org.ID, e.member.ID, e.bob.ID, e.cy.ID, e.team.ID)

	keys := []string{}
	for _, row := range authzMatrix {
		if row.scope != "" && !slices.Contains(keys, row.scope) {
			keys = append(keys, row.scope)
		}
	}
	for _, sc := range keys {
		k, secret, err := st.CreateKey(ctx, e.org.ID, "only "+sc, models.KeyAgent, []string{sc})
		require.NoError(t, err)
		e.exact[sc], e.exactID[sc] = secret, k.ID
		e.ours = append(e.ours, k.ID)
		rest := slices.DeleteFunc(slices.Clone(scopes.All), func(s string) bool { return s == sc })
		k, secret, err = st.CreateKey(ctx, e.org.ID, "all but "+sc, models.KeyAgent, rest)
		require.NoError(t, err)
		e.allBut[sc] = secret
		e.ours = append(e.ours, k.ID)
	}
	k, secret, err := st.CreateKey(ctx, e.org.ID, "no scopes", models.KeyAgent, []string{})
	require.NoError(t, err)
	e.noScopes = secret
	e.ours = append(e.ours, k.ID)

	other, err := accounts.New(st).Authenticate(ctx, e.otherAdmin)
	require.NoError(t, err)
	// On the team plan, so organisation-wide analytics answer rather
	// than ask for a plan (TestOrganizationAnalytics checks the 402).
	for _, org := range []string{e.org.ID, other.Organization.ID} {
		_, err = st.UpdateOrganization(ctx, org, models.OrganizationChange{Plan: new(models.PlanTeam)})
		require.NoError(t, err)
	}
	owner, err := st.CreateMember(ctx, other.Organization.ID, "olga@other.example", "Olga", models.RoleOwner)
	require.NoError(t, err)
	_, e.otherOwnerToken, err = st.CreateMemberToken(ctx, other.Organization.ID, owner.ID)
	require.NoError(t, err)

	guest, _, err := st.CreateGuest(ctx, e.org.ID, "gail@partner.example", "Gail")
	require.NoError(t, err)
	_, e.guestSession, err = accounts.New(st).CreateSession(ctx, e.org.ID, guest.ID)
	require.NoError(t, err)
	_, e.memberSession, err = accounts.New(st).CreateSession(ctx, e.org.ID, e.member.ID)
	require.NoError(t, err)
	e.ours = append(e.ours, guest.ID)
	e.create201(t, e.adminKey, "/api/v1/admin/actions", `{"name":"`+matrixAction+`","inputSchema":{"type":"object"},"policy":[{"name":"all","outcome":"allow"}],"executors":["`+e.exactID[rc]+`"]}`)
	e.create201(t, e.adminKey, "/api/v1/admin/actions", `{"name":"`+matrixAsk+`","inputSchema":{"type":"object"},"policy":[{"name":"ask","outcome":"approval","risk":"low"}]}`)
	return e
}

// credentials returns the bearer key and headers principal p sends on row.
func (e *authzEnv) credentials(row authzRow, p string) (string, map[string]string) {
	switch p {
	case "anon":
		return "", nil
	case "agent":
		if row.scope == "" {
			return e.agentKey, nil
		}
		return e.exact[row.scope], nil
	case "noscope":
		if row.scope == "" {
			return e.noScopes, nil
		}
		return e.allBut[row.scope], nil
	case "owner":
		return e.memberToken, nil
	case "administrator":
		return e.bobToken, nil
	case "member":
		return e.cyToken, nil
	case "adminkey":
		return e.adminKey, nil
	case "guest":
		return "", map[string]string{"Cookie": web.SessionCookie + "=" + e.guestSession}
	case "otheragent":
		return e.otherAgent, nil
	case "otheradmin":
		return e.otherAdmin, nil
	case "othermember":
		return e.otherOwnerToken, nil
	}
	panic("unknown principal " + p)
}

func other(p string) bool { return strings.HasPrefix(p, "other") }

// target is one request of a row: its resource and body, made fresh.
type target struct {
	id, body string
	// params fills a path's other parameters (secondParams but the
	// dataset's).
	params map[string]string
}

func (e *authzEnv) unique() string { return fmt.Sprintf("u%d", e.serial.Add(1)) }

// sharedReport is a report every member can read, to review.
const sharedReport = `{"title":"Q3","content":"<h1>Q3</h1>","audience":["everyone"]}`

// fresh makes what one call of row needs.
func (e *authzEnv) fresh(t *testing.T, row authzRow) target {
	t.Helper()
	vars := map[string]string{"{unique}": e.unique(), "{receiver}": e.receiver}
	var id string
	params := map[string]string{}
	switch row.id {
	case noID:
	case pendingApproval, askedApproval:
		id = e.create201(t, e.exact[aw], "/api/v1/approvals", `{"title":"Refund","approvers":["cy@example.com"]}`)
		if row.id == askedApproval {
			q := e.do(t, "POST", "/api/v1/approvals/"+id+"/questions", e.cyToken, `{"question":"Which customer?"}`, nil)
			require.Equal(t, 201, q.status, string(q.body))
			vars["{question}"] = q.decoded["questionId"].(string)
			e.ours = append(e.ours, vars["{question}"])
		}
	case openFlow:
		id = e.create201(t, e.exact[fw], "/api/v1/flows", `{"title":"Close"}`)
	case openCollection:
		id = e.create201(t, e.exact[cw], "/api/v1/collections", `{"title":"Facts","questions":[{"prompt":"Budget?","kind":"number"}],"respondents":["cy@example.com"]}`)
	case openReview:
		report := e.create201(t, e.exact[rw], "/api/v1/reports", sharedReport)
		id = e.create201(t, e.exact[vw], "/api/v1/reviews", `{"title":"Check","reportId":"`+report+`","reviewers":["cy@example.com"]}`)
	case sharedReportID:
		id = e.create201(t, e.exact[rw], "/api/v1/reports", sharedReport)
	case commentedReport, reportWithImage, openThread:
		id = e.create201(t, e.exact[rw], "/api/v1/reports", sharedReport)
		body := `{"body":"First."}`
		if row.id == reportWithImage {
			body = `{"body":"See this.","images":[{"data":"` + tinyPNG + `"}]}`
		}
		r := e.do(t, "POST", "/api/v1/reports/"+id+"/comments", e.exact[mw], body, nil)
		require.Equal(t, 201, r.status, string(r.body))
		e.ours = append(e.ours, r.decoded["id"].(string))
		comment := r.decoded["comments"].([]any)[0].(map[string]any)
		params[":commentId"] = comment["id"].(string)
		if row.id == reportWithImage {
			params[":sha256"] = comment["images"].([]any)[0].(map[string]any)["sha256"].(string)
		}
		if row.id == openThread {
			id = r.decoded["id"].(string)
		}
	case plainMember:
		id = e.create201(t, e.adminKey, "/api/v1/admin/members", `{"email":"`+e.unique()+`@example.com","role":"member"}`)
	case aGuest:
		id = e.create201(t, e.adminKey, "/api/v1/admin/guests", `{"email":"`+e.unique()+`@partner.example"}`)
	case aTeam:
		id = e.create201(t, e.adminKey, "/api/v1/admin/teams", `{"name":"`+e.unique()+`","kind":"team"}`)
	case anAgentKey:
		id = e.create201(t, e.adminKey, "/api/v1/admin/keys", `{"name":"doomed","kind":"agent","scopes":["approvals:read"]}`)
	case disabledRule:
		id = e.create201(t, e.adminKey, "/api/v1/admin/rules", `{"name":"`+e.unique()+`","kind":"approval","requiredApprovals":2,"enabled":false}`)
	case anAction:
		id = e.create201(t, e.adminKey, "/api/v1/admin/actions", `{"name":"`+e.unique()+`","inputSchema":{"type":"object"}}`)
	case grantedMandate:
		id = e.create201(t, e.memberToken, "/api/v1/mandates", matrixMandate)
	case cyOwnToken:
		id = e.create201(t, e.cyToken, "/api/v1/me/tokens", `{"scopes":["approvals:read"]}`)
	case liveReport:
		id = e.create201(t, e.exact[rw], "/api/v1/reports", `{"title":"Q3","content":"<h1>Q3</h1>"}`)
	case heldVersion:
		r := e.do(t, "POST", "/api/v1/reports", e.exact[rw], `{"title":"Held","content":"<base href=\"https://elsewhere.example/\">"}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		id = r.decoded["version"].(map[string]any)["id"].(string)
		e.ours = append(e.ours, r.decoded["id"].(string), id)
	case reportWithData:
		id = e.create201(t, e.exact[rw], "/api/v1/reports", `{"title":"Dash","content":"<h1>d</h1>"}`)
		r := e.do(t, "PUT", "/api/v1/reports/"+id+"/data/"+matrixDataset, e.exact[rw], `{"kpis":[]}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
	case aSchedule:
		report := e.create201(t, e.exact[rw], "/api/v1/reports", `{"title":"Weekly","living":true,"content":"<h1>w</h1>"}`)
		id = e.create201(t, e.exact[sw], "/api/v1/schedules", `{"reportId":"`+report+`","every":"24h"}`)
	case webhookEndpoint, failedDelivery:
		id = e.create201(t, e.adminKey, "/api/v1/admin/webhooks", `{"url":"`+e.receiver+`"}`)
		if row.id == failedDelivery {
			id = e.failedDelivery(t, id)
		}
	default:
		t.Fatalf("unknown resource %d", row.id)
	}
	if strings.Contains(row.body, "{sharedReport}") {
		vars["{sharedReport}"] = e.create201(t, e.exact[rw], "/api/v1/reports", sharedReport)
	}
	if strings.Contains(row.body, "{newMember}") {
		email := e.unique() + "@example.com"
		e.create201(t, e.adminKey, "/api/v1/admin/members", `{"email":"`+email+`"}`)
		vars["{newMember}"] = email
	}
	if strings.Contains(row.body, "{decisionToken}") {
		r := e.do(t, "POST", "/api/v1/gate", e.exact[gc], `{"action":"`+matrixAction+`","input":{}}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		vars["{decisionToken}"] = r.decoded["decisionToken"].(string)
	}
	if strings.Contains(row.body, "{livingReport}") {
		vars["{livingReport}"] = e.create201(t, e.exact[rw], "/api/v1/reports", `{"title":"Weekly","living":true,"content":"<h1>w</h1>"}`)
	}
	body := row.body
	for k, v := range vars {
		body = strings.ReplaceAll(body, k, v)
	}
	return target{id: id, body: body, params: params}
}

// create201 posts body as key, as a client does (doAsClient), and returns
// the new resource's id.
func (e *authzEnv) create201(t *testing.T, key, path, body string) string {
	t.Helper()
	r := e.doAsClient(t, path, key, body)
	require.Equal(t, 201, r.status, "%s: %s", path, r.body)
	id := r.decoded["id"].(string)
	e.ours = append(e.ours, id)
	return id
}

// failedDelivery records an event and its failed delivery to endpoint.
func (e *authzEnv) failedDelivery(t *testing.T, endpoint string) string {
	t.Helper()
	now := models.Now()
	ev := &models.Event{ID: ids.New(ids.Event), OrganizationID: e.org.ID, Kind: "approval.requested", SubjectType: "approval",
		SubjectID: ids.New(ids.Approval), Data: models.RawJSON(`{}`), CreatedAt: now, DispatchedAt: &now}
	d := &models.Delivery{ID: ids.New(ids.Delivery), OrganizationID: e.org.ID, EventID: ev.ID, Target: models.TargetWebhook,
		EndpointID: &endpoint, Status: models.DeliveryFailed, Attempts: 1, LastStatusCode: 500, LastError: "HTTP 500",
		StartedAt: &now, CreatedAt: now, UpdatedAt: now}
	db := e.store.DB().WithContext(e.ctx)
	require.NoError(t, db.Create(ev).Error)
	require.NoError(t, db.Create(d).Error)
	e.ours = append(e.ours, ev.ID, d.ID)
	return d.ID
}

// call sends row's request for tg as principal p, with an Idempotency-Key
// when idem is set.
func (e *authzEnv) call(t *testing.T, row authzRow, p string, tg target, idem string) response {
	t.Helper()
	key, headers := e.credentials(row, p)
	if idem != "" {
		headers = mergeHeaders(headers, map[string]string{"Idempotency-Key": idem})
	}
	path := strings.ReplaceAll(row.path, datasetParam, matrixDataset)
	for k, v := range tg.params {
		path = strings.ReplaceAll(path, k, v)
	}
	path = routeParam.ReplaceAllLiteralString(path, tg.id)
	r := e.do(t, row.method, path, key, tg.body, headers)
	// A 503 is the server's "nothing was done, try again" (the in-process
	// Temporal server can be slower than StartTimeout under load), and a
	// 409 idempotency_in_progress "the key's other attempt still runs":
	// never a cell's answer, each is sent again, as a client does.
	for try := 0; try < 3 && toldToRetry(r); try++ {
		t.Logf("%s %s answered %d, sent again: %s", row.method, path, r.status, r.body)
		r = e.do(t, row.method, path, key, tg.body, headers)
	}
	return r
}

func mergeHeaders(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// checkCell sends row's request as p on a fresh resource.
func (e *authzEnv) checkCell(t *testing.T, row authzRow, p string, want int) {
	t.Helper()
	tg := e.fresh(t, row)
	r := e.call(t, row, p, tg, "")
	assert.Equal(t, want, r.status, "as %s: %s", p, r.body)
	if !other(p) {
		return
	}
	if r.status < 300 {
		e.assertNoneOfOurs(t, p, r)
	}
	if tg.id != "" {
		// A foreign id must be answered as an id that does not exist.
		prefix, _, _ := strings.Cut(tg.id, "_")
		missing := e.call(t, row, p, target{id: prefix + "_0000000000000000000000", body: tg.body}, "")
		assert.Equal(t, missing.status, r.status, "as %s: a real foreign id is answered unlike a missing one: %s", p, r.body)
		assert.Equal(t, errField(missing, "code"), errField(r, "code"), "as %s", p)
	}
}

func (e *authzEnv) assertNoneOfOurs(t *testing.T, p string, r response) {
	t.Helper()
	for _, id := range e.ours {
		if strings.Contains(string(r.body), id) {
			t.Errorf("as %s: the answer carries the first organisation's %s: %s", p, id, r.body)
		}
	}
}

// checkIdempotency: an Idempotency-Key is the sender's alone. The first
// allowed principal sends the request with a key; each other principal then
// sends the very same request with the same key and must get their own
// outcome, not a replay. Then each refused principal goes first, and the
// allowed one after them still gets its own success.
func (e *authzEnv) checkIdempotency(t *testing.T, row authzRow, want map[string]testenv.Outcome) {
	t.Helper()
	first := ""
	for _, p := range matrixPrincipals {
		if want[p].Fresh < 300 {
			first = p
			break
		}
	}
	require.NotEmpty(t, first, "nobody may call %s", row.name())

	var last struct {
		tg       target
		key      string
		body     []byte
		location string
	}
	for _, p := range matrixPrincipals {
		if p == first {
			continue
		}
		tg := e.fresh(t, row)
		key := "shared-" + e.unique()
		a := e.call(t, row, first, tg, key)
		require.Equal(t, want[first].Fresh, a.status, "as %s: %s", first, a.body)
		require.Empty(t, a.header.Get("Idempotency-Replayed"))
		b := e.call(t, row, p, tg, key)
		assert.Equal(t, want[p].After, b.status, "as %s, reusing %s's Idempotency-Key: %s", p, first, b.body)
		assert.Empty(t, b.header.Get("Idempotency-Replayed"), "as %s: %s's response was replayed", p, first)
		for _, s := range firstSecrets(a, tg.id) {
			assert.NotContains(t, string(b.body), s, "as %s: the answer carries %s's %s", p, first, s)
		}
		last.tg, last.key, last.body, last.location = tg, key, a.body, a.header.Get("Location")
	}
	// The same caller with the same key does get the replay, so the route
	// does keep responses and the checks above mean something.
	again := e.call(t, row, first, last.tg, last.key)
	assert.Equal(t, "true", again.header.Get("Idempotency-Replayed"), "the route replays its own caller's response")
	assert.Equal(t, string(last.body), string(again.body))
	assert.Equal(t, last.location, again.header.Get("Location"), "the replay carries the first Location")

	for _, p := range matrixPrincipals {
		if p == first || want[p].Fresh < 300 {
			continue
		}
		tg := e.fresh(t, row)
		key := "refused-first-" + e.unique()
		r := e.call(t, row, p, tg, key)
		assert.Equal(t, want[p].Fresh, r.status, "as %s: %s", p, r.body)
		a := e.call(t, row, first, tg, key)
		assert.Equal(t, want[first].Fresh, a.status, "as %s after %s's %d with the same key: %s", first, p, r.status, a.body)
		assert.Empty(t, a.header.Get("Idempotency-Replayed"), "as %s: %s's refusal was replayed", first, p)
	}

	// Sent twice at once, a key runs once: the second attempt waits for
	// the first's outcome and is answered with it (or, when the first runs
	// longer than it waits, is told to try again, and then is).
	tg := e.fresh(t, row)
	key := "twice-at-once-" + e.unique()
	var twice [2]response
	var wg sync.WaitGroup
	for i := range twice {
		wg.Go(func() { twice[i] = e.call(t, row, first, tg, key) })
	}
	wg.Wait()
	replayed := 0
	for _, r := range twice {
		assert.Equal(t, want[first].Fresh, r.status, "as %s, the same key twice at once: %s", first, r.body)
		if r.header.Get("Idempotency-Replayed") == "true" {
			replayed++
		}
	}
	assert.Equal(t, 1, replayed, "one ran, the other was answered with its outcome")
	assert.Equal(t, string(twice[0].body), string(twice[1].body))
	assert.Equal(t, twice[0].header.Get("Location"), twice[1].header.Get("Location"), "the replay carries the first Location")
}

// firstSecrets are the values in r that only its caller may see: the ids
// it made and any secret, leaving out the id the caller named in the path.
func firstSecrets(r response, pathID string) []string {
	var out []string
	for _, field := range []string{"id", "questionId", "key", "token", "secret", "callbackSecret"} {
		if s, ok := r.decoded[field].(string); ok && s != "" && s != pathID {
			out = append(out, s)
		}
	}
	return out
}
