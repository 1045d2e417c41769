// Package rest is the approvals' part of the REST API (an api.Kind): what
// every kind serves, and an approval's own acts, a decision, a question
// to the requester and its answer.
package rest

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/requests"
)

type routes struct{ approvals *approvals.Service }

// New returns the approvals' routes over their service.
func New(s *approvals.Service) api.Kind { return routes{s} }

type approvalRoutes = api.RequestRoutes[approvals.Approval, approvals.CreateInput, approvals.Wire]

// common are what approvals serve as every kind does.
func (r routes) common(k *api.Kit) approvalRoutes {
	return approvalRoutes{
		Kit: k, Path: "approvals", Read: scopes.ApprovalsRead, Write: scopes.ApprovalsWrite, Service: r.approvals,
		Filter: func(c *gin.Context, common requests.RequestFilter) (requests.Filter, error) {
			executed, err := api.BoolParam(c, "executed")
			return approvals.Filter{RequestFilter: common, Executed: executed}, err
		},
		Serialize: approvals.NewWire, Created: approvals.NewCreated,
	}
}

func (r routes) Mount(v1 *gin.RouterGroup, k *api.Kit) {
	common := r.common(k)
	common.Mount(v1)
	k.PostResumable(v1, "/approvals/:id/answers", api.RequireScope(scopes.ApprovalsWrite),
		api.Act(common, func(c *gin.Context, in approvals.Answer) (*approvals.Approval, error) {
			return r.approvals.Answer(c.Request.Context(), api.OrgID(c), c.Param("id"), api.Claim(c).UpdateID(), api.Principal(c), in)
		}))
	// A person's actions: member tokens only; the workflow decides who may.
	k.PostResumable(v1, "/approvals/:id/decision", api.PersonActs(scopes.ApprovalsWrite),
		api.Act(common, func(c *gin.Context, in approvals.Decision) (*approvals.Approval, error) {
			return r.approvals.Decide(c.Request.Context(), api.OrgID(c), c.Param("id"), api.Claim(c).UpdateID(), api.Principal(c), in)
		}))
	k.PostResumable(v1, "/approvals/:id/questions", api.PersonActs(scopes.ApprovalsWrite), r.ask)
}

// Inbox: an approval's own list is newest first and paged.
func (r routes) Inbox(k *api.Kit) api.InboxKind {
	common := r.common(k)
	return api.InboxOf(common, r.approvals.Lifecycle, requests.Newest, func(c *gin.Context, p requests.Page) {
		rows, next, err := r.approvals.Pending(c.Request.Context(), api.OrgID(c), api.Principal(c), p)
		common.RespondList(c, rows, next, err)
	})
}

// ask puts a person's question to the requester; its answer is the
// question.
func (r routes) ask(c *gin.Context) {
	var in approvals.Question
	if err := api.Bind(c, &in); err != nil {
		api.Fail(c, err)
		return
	}
	_, q, err := r.approvals.Ask(c.Request.Context(), api.OrgID(c), c.Param("id"), api.Claim(c).UpdateID(), api.Principal(c), in)
	if err != nil {
		api.Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, approvals.NewWireQuestion(q))
}
