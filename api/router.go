// Package api is the REST interface: the route table, middleware (errors,
// auth, scopes, idempotency, body limits) and one file per resource.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/comments"
	"github.com/assent-hq/assent/delegations"
	"github.com/assent-hq/assent/evidence"
	"github.com/assent-hq/assent/flows"
	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/idempotency"
	"github.com/assent-hq/assent/instance"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/logging"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/ratelimit"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/tracing"
	"github.com/assent-hq/assent/internal/wiring"
	"github.com/assent-hq/assent/receipts"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/webhooks"
	"github.com/assent-hq/assent/wire"
)

// Deps are what the handlers need.
type Deps struct {
	Logger *slog.Logger
	// BaseURL is the public address of the API and pages.
	BaseURL string
	// Mount adds routes outside /api/v1, such as the dev mailbox.
	Mount func(*gin.Engine)
	// Services are the domain services the API calls, shared with the
	// pages (app.Build); New panics when one is missing.
	Services Services
	// TrustedProxies are the IPs or CIDR ranges whose X-Forwarded-For
	// names the client (config.CheckTrustedProxies has read them); none
	// means the connection's address is the client's.
	TrustedProxies []string
	// LongPolls caps the long-polls (GET …?wait=) open at once, per key
	// and in the process; nil is the defaults of config.
	LongPolls *ratelimit.Slots
	// Metrics counts every request and the long-polls open, and is served
	// at /metrics unless NoMetrics; nil counts nothing (/metrics is then
	// empty).
	Metrics *metrics.Metrics
	// NoMetrics: this listener does not serve /metrics (the process
	// serves them on an address of their own, or not at all).
	NoMetrics bool
	// MetricsToken, when set, is the bearer /metrics needs.
	MetricsToken string
}

// Services are the domain services the API calls.
type Services struct {
	// Kinds are the request kinds' routes (Kind), in the order the
	// inbox of every kind breaks ties.
	Kinds       []Kind
	Reports     *reports.Service
	Comments    *comments.Service
	Evidence    *evidence.Service
	Gate        *gate.Service
	Receipts    *receipts.Service
	Webhooks    *webhooks.Service
	Flows       *flows.Service
	Admin       *admin.Service
	Slack       SlackApp
	Accounts    *accounts.Service
	Idempotency *idempotency.Service
	Instance    *instance.Service
	Delegations *delegations.Service
}

type handlers struct {
	log         *slog.Logger
	baseURL     string
	reports     *reports.Service
	comments    *comments.Service
	evidence    *evidence.Service
	gate        *gate.Service
	receipts    *receipts.Service
	webhooks    *webhooks.Service
	flows       *flows.Service
	admin       *admin.Service
	slack       SlackApp
	accounts    *accounts.Service
	idempotency *idempotency.Service
	instance    *instance.Service
	delegations *delegations.Service
	longPolls   *ratelimit.Slots
	// inboxKinds are the kinds' parts of the inbox, as listed.
	inboxKinds []InboxKind
}

func init() { gin.SetMode(gin.ReleaseMode) }

// New returns the HTTP handler for the API and health checks.
func New(d Deps) http.Handler {
	wiring.Require("api", d.Services)
	svc := d.Services
	h := &handlers{log: d.Logger, baseURL: d.BaseURL,
		reports: svc.Reports, comments: svc.Comments,
		evidence: svc.Evidence, gate: svc.Gate, receipts: svc.Receipts, webhooks: svc.Webhooks, flows: svc.Flows, admin: svc.Admin, slack: svc.Slack,
		accounts: svc.Accounts, idempotency: svc.Idempotency, instance: svc.Instance, delegations: svc.Delegations}
	if h.longPolls = d.LongPolls; h.longPolls == nil {
		h.longPolls = ratelimit.NewSlots(config.DefaultLongPollsPerKey, config.DefaultLongPolls)
	}
	d.Metrics.LongPolls(h.longPolls.InUse)
	r := gin.New()
	// gin trusts every proxy unless told: anyone could then name their own
	// address in X-Forwarded-For and escape a per-client limit.
	if err := r.SetTrustedProxies(d.TrustedProxies); err != nil {
		panic(fmt.Sprintf("trusted proxies: %v", err)) // config checked them
	}
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	// gin would answer a near miss (a trailing slash, a wrong case) with a
	// redirect and an HTML body, and a POST would lose its body on the way:
	// a path is served as registered or answered by NoRoute.
	r.RedirectTrailingSlash, r.RedirectFixedPath = false, false
	// Counted outside errorsMiddleware, as logged: the status is the one
	// the error became.
	r.Use(tracing.Gin(), jsonNewline, accessLog(d.Logger), countRequests(d.Metrics), errorsMiddleware(d.Logger))
	// Routes match the path as sent, so a slug's %2F stays inside its
	// parameter; a slug sent with bare slashes is routed again, encoded.
	r.UseRawPath = true
	r.NoRoute(func(c *gin.Context) {
		if unencodedSlug(c.Request.URL) {
			c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), reroutedKey{}, true))
			r.HandleContext(c)
			return
		}
		noRoute(c)
	})
	r.NoMethod(func(c *gin.Context) {
		Fail(c, apperr.New(apperr.MethodNotAllowed, "%s is not allowed here", c.Request.Method))
	})

	r.GET("/healthz", h.healthz)
	r.GET("/readyz", h.readyz)
	if !d.NoMetrics {
		r.GET(metrics.Path, gin.WrapH(d.Metrics.Handler(d.MetricsToken)))
	}
	r.GET(EvidenceKeysPath, h.keySet(instance.EvidenceKeys))
	r.GET(DecisionKeysPath, h.keySet(instance.DecisionKeys))
	r.GET(ProtectedResourcePath, h.protectedResource)
	r.GET(ProtectedResourcePath+MCPPath, h.protectedResource)
	r.GET("/api/v1/openapi.json", serveOpenAPI)
	r.GET("/api/docs", serveDocs)
	r.GET("/api/docs/:file", serveDocs)
	// Slack's clicks carry Slack's signature, not Assent's credentials.
	r.POST(wire.SlackInteractionsPath, h.slackInteractions)

	v1 := r.Group("/api/v1", h.authenticate, plainParams, knownQuery, readBody(DefaultBodyLimit))
	v1.GET("/me", h.me)
	h.post(v1, "/me/tokens", h.createOwnToken)
	v1.GET("/me/tokens", h.listOwnTokens)
	v1.DELETE("/me/tokens/:id", h.revokeOwnToken)
	v1.GET("/me/delegation", h.myDelegation)
	v1.PUT("/me/delegation", h.putDelegation)
	v1.DELETE("/me/delegation", h.endDelegation)

	kit := &Kit{h}
	for _, k := range svc.Kinds {
		k.Mount(v1, kit)
		h.inboxKinds = append(h.inboxKinds, k.Inbox(kit))
	}
	v1.GET("/inbox", h.inbox)

	h.post(v1, "/uploads", RequireScope(scopes.ReportsWrite), NoFields, h.createUpload)
	r.PUT(reports.UploadPath(":ticket"), plainParams, h.receiveUpload)
	// Publishes carry documents: their group reads larger bodies.
	docs := r.Group("/api/v1", h.authenticate, plainParams, readBody(ReportBodyLimit))
	h.postResumable(docs, "/reports", RequireScope(scopes.ReportsWrite), h.createReport)
	h.postResumable(docs, "/reports/:idOrSlug/versions", RequireScope(scopes.ReportsWrite), h.publishVersion)
	// Datasets are stored as sent, up to their own limit.
	data := r.Group("/api/v1", h.authenticate, plainParams, readBody(reports.MaxDatasetBytes))
	data.PUT("/reports/:idOrSlug/data/:name", RequireScope(scopes.ReportsWrite), h.putDataset)
	v1.GET("/reports/:idOrSlug/data", RequireScope(scopes.ReportsRead), h.listDatasets)
	v1.GET("/reports/:idOrSlug/data/:name", RequireScope(scopes.ReportsRead), h.getDataset)
	v1.DELETE("/reports/:idOrSlug/data/:name", RequireScope(scopes.ReportsWrite), h.deleteDataset)
	v1.GET("/reports", RequireScope(scopes.ReportsRead), h.listReports)
	v1.GET("/reports/:idOrSlug", RequireScope(scopes.ReportsRead), h.getReport)
	v1.PATCH("/reports/:idOrSlug", RequireScope(scopes.ReportsWrite), h.updateReport)
	v1.GET("/reports/:idOrSlug/versions", RequireScope(scopes.ReportsRead), h.listVersions)
	v1.GET("/reports/:idOrSlug/analytics", RequireScope(scopes.ReportsRead), h.reportAnalytics)
	v1.GET("/analytics", RequireScope(scopes.ReportsRead), h.organizationAnalytics)
	h.post(v1, "/reports/:idOrSlug/rollback", RequireScope(scopes.ReportsWrite), h.rollbackReport)
	h.post(v1, "/reports/:idOrSlug/archive", RequireScope(scopes.ReportsWrite), h.archiveReport)
	h.postResumable(v1, "/reports/:idOrSlug/copy", RequireScope(scopes.ReportsWrite), h.copyReport)
	v1.GET("/templates", RequireScope(scopes.ReportsRead), h.listTemplates)
	h.post(v1, "/reports/:idOrSlug/share", RequireScope(scopes.ReportsShare), h.shareReport)
	v1.DELETE("/reports/:idOrSlug/share", RequireScope(scopes.ReportsShare), h.unshareReport)
	h.postResumable(v1, "/reports/:idOrSlug/send", RequireScope(scopes.ReportsShare), h.sendReport)
	// Comments may carry images, so their posts read larger bodies.
	commentPosts := r.Group("/api/v1", h.authenticate, plainParams, readBody(CommentBodyLimit))
	h.post(commentPosts, "/reports/:idOrSlug/comments", RequireScope(scopes.CommentsWrite), h.postComment)
	v1.GET("/reports/:idOrSlug/comments", RequireScope(scopes.ReportsRead), h.reportComments)
	v1.GET("/reports/:idOrSlug/comments/images/:sha256", RequireScope(scopes.ReportsRead), h.commentImage)
	v1.DELETE("/reports/:idOrSlug/comments/:commentId", RequireScope(scopes.CommentsWrite), h.retractComment)
	v1.GET("/comments", RequireScope(scopes.ReportsRead), h.openComments)
	h.post(v1, "/comments/:threadId/resolve", RequireScope(scopes.CommentsWrite), h.resolveThread)
	h.post(v1, "/reports/:idOrSlug/revision-briefs", RequireScope(scopes.ReportsRead), h.revisionBrief)
	h.post(v1, "/audiences/resolve", RequireScope(scopes.AudiencesRead), h.resolveAudience)
	h.postResumable(v1, "/schedules", RequireScope(scopes.SchedulesWrite), h.createSchedule)
	v1.GET("/schedules", RequireScope(scopes.SchedulesWrite), h.listSchedules)
	v1.GET("/schedules/:id", RequireScope(scopes.SchedulesWrite), h.getSchedule)
	h.post(v1, "/schedules/:id/pause", RequireScope(scopes.SchedulesWrite), NoFields, h.pauseSchedule)
	h.post(v1, "/schedules/:id/resume", RequireScope(scopes.SchedulesWrite), NoFields, h.resumeSchedule)
	v1.DELETE("/schedules/:id", RequireScope(scopes.SchedulesWrite), h.deleteSchedule)

	h.post(v1, "/flows", RequireScope(scopes.FlowsWrite), h.createFlow)
	v1.GET("/flows/:id", RequireScope(scopes.FlowsRead), h.getFlow)
	h.post(v1, "/flows/:id/complete", RequireScope(scopes.FlowsWrite), NoFields, h.completeFlow)
	h.post(v1, "/flows/:id/cancel", RequireScope(scopes.FlowsWrite), NoFields, h.cancelFlow)
	v1.GET("/flows/:id/evidence", requireEvidence, h.flowEvidence)
	v1.GET("/reports/:idOrSlug/evidence", requireEvidence, h.reportEvidence)
	h.postResumable(v1, "/gate", RequireScope(scopes.GateCheck), h.checkGate)
	// A receipt is bound to its claim as it is written.
	h.postResumable(v1, "/receipts", RequireScope(scopes.ReceiptsWrite), h.reportReceipt)
	// Standing mandates are people's: the gate refuses agent keys.
	h.post(v1, "/mandates", PersonActs(scopes.ApprovalsWrite), h.grantMandate)
	v1.GET("/mandates", PersonActs(scopes.ApprovalsRead), h.listMandates)
	v1.GET("/mandates/:id", PersonActs(scopes.ApprovalsRead), h.getMandate)
	h.post(v1, "/mandates/:id/revoke", PersonActs(scopes.ApprovalsWrite), NoFields, h.revokeMandate)

	adm := v1.Group("/admin", requireAdmin)
	adm.GET("/organization", h.getOrganization)
	adm.PATCH("/organization", h.updateOrganization)
	h.post(adm, "/members", h.createMember)
	adm.GET("/members", h.listMembers)
	adm.PATCH("/members/:id", h.updateMember)
	h.post(adm, "/members/:id/tokens", h.createMemberToken)
	h.post(adm, "/teams", h.createTeam)
	adm.GET("/teams", h.listTeams)
	adm.PATCH("/teams/:id", h.updateTeam)
	adm.DELETE("/teams/:id", h.deleteTeam)
	h.post(adm, "/guests", h.createGuest)
	adm.GET("/guests", h.listGuests)
	adm.PATCH("/guests/:id", h.updateGuest)
	adm.DELETE("/guests/:id", h.removeGuest)
	h.post(adm, "/keys", h.createKey)
	adm.GET("/keys", h.listKeys)
	adm.DELETE("/keys/:id", h.revokeKey)
	h.post(adm, "/rules", h.createRule)
	adm.GET("/rules", h.listRules)
	adm.PATCH("/rules/:id", h.updateRule)
	adm.DELETE("/rules/:id", h.deleteRule)
	h.post(adm, "/webhooks", h.createWebhook)
	adm.GET("/webhooks", h.listWebhooks)
	adm.GET("/webhooks/:id", h.getWebhook)
	adm.PATCH("/webhooks/:id", h.updateWebhook)
	adm.DELETE("/webhooks/:id", h.deleteWebhook)
	h.post(adm, "/webhooks/:id/rotate-secret", NoFields, h.rotateWebhookSecret)
	h.post(adm, "/webhooks/:id/test", NoFields, h.testWebhook)
	adm.GET("/webhooks/:id/deliveries", h.listDeliveries)
	h.post(adm, "/webhooks/:id/recover", h.recoverDeliveries)
	adm.GET("/deliveries/:id", h.getDelivery)
	h.post(adm, "/deliveries/:id/resend", NoFields, h.resendDelivery)
	h.post(adm, "/actions", h.createAction)
	adm.GET("/actions", h.listActions)
	adm.GET("/actions/:id", h.getAction)
	adm.PUT("/actions/:id", h.updateAction)
	adm.DELETE("/actions/:id", h.deleteAction)
	adm.GET("/integrations/slack", h.getSlack)
	adm.PUT("/integrations/slack", h.putSlack)
	adm.DELETE("/integrations/slack", h.deleteSlack)
	adm.GET("/integrations/slack/manifest", h.slackManifest)
	adm.GET("/model-screen", h.getModelScreen)
	adm.PUT("/model-screen", h.putModelScreen)
	adm.DELETE("/model-screen", h.deleteModelScreen)
	adm.GET("/held-versions", h.listHeldVersions)
	h.postResumable(adm, "/held-versions/:id/release", NoFields, h.releaseHeld)
	h.postResumable(adm, "/held-versions/:id/decline", NoFields, h.declineHeld)

	if d.Mount != nil {
		d.Mount(r)
	}
	return r
}

// reroutedKey marks a request the engine routes a second time.
type reroutedKey struct{}

// noRoute answers a path nothing serves. Pages share the engine and get
// the same 404: a page path with a trailing slash is as unknown as any
// other.
func noRoute(c *gin.Context) {
	Fail(c, apperr.New(apperr.NotFound, "no such endpoint: %s %s", c.Request.Method, c.Request.URL.Path))
}

// post registers a POST whose last handler runs once per Idempotency-Key
// (see idempotent), after the handlers before it have authorised the
// caller.
func (h *handlers) post(g *gin.RouterGroup, path string, chain ...gin.HandlerFunc) {
	h.postOnce(g, path, false, chain)
}

// postResumable is post for a handler that converges when run again after
// a crash: a create bound to its claim or a workflow Update.
func (h *handlers) postResumable(g *gin.RouterGroup, path string, chain ...gin.HandlerFunc) {
	h.postOnce(g, path, true, chain)
}

func (h *handlers) postOnce(g *gin.RouterGroup, path string, resumable bool, chain []gin.HandlerFunc) {
	last := len(chain) - 1
	g.POST(path, append(slices.Clone(chain[:last]), h.idempotent(resumable), chain[last])...)
}

// accessLog writes one JSON line per request, naming its route, never
// its path (logging.Route).
func accessLog(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		rerouted := c.Request.Context().Value(reroutedKey{}) != nil
		c.Next()
		if !rerouted && c.Request.Context().Value(reroutedKey{}) != nil {
			return // routed again (unencodedSlug): that pass wrote the line
		}
		attrs := []any{"method", c.Request.Method, "route", logging.Route(c), "status", c.Writer.Status(),
			"duration_ms", time.Since(start).Milliseconds()}
		if p, ok := c.Get(principalKey); ok {
			attrs = append(attrs, "organization", p.(accounts.Actor).Organization.ID)
		}
		log.InfoContext(c.Request.Context(), "http request", attrs...)
	}
}
