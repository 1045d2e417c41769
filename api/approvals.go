package api

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/ratelimit"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/wire"
)

func (h *handlers) createApproval(c *gin.Context) {
	var in approvals.CreateInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	rec, err := h.approvals.Create(c.Request.Context(), principal(c), &in, claim(c))
	if err != nil {
		fail(c, err)
		return
	}
	out := wire.NewApproval(rec, h.baseURL)
	out.CallbackSecret = rec.CallbackSecret
	c.Header("Location", "/api/v1/approvals/"+rec.ID)
	c.JSON(http.StatusCreated, out)
}

func (h *handlers) listApprovals(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	f := approvals.Filter{Status: c.Query("status"), ExternalID: c.Query("externalId")}
	if f.Executed, err = boolParam(c, "executed"); err != nil {
		fail(c, err)
		return
	}
	rows, next, err := h.approvals.List(c.Request.Context(), principal(c), f, p)
	h.respondApprovals(c, rows, next, err)
}

// inbox lists what waits on the calling person: without kind every
// request waiting on them, newest first; kind=approval, collection or
// review narrows it to one kind.
func (h *handlers) inbox(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	switch c.Query("kind") {
	case "":
		h.allInbox(c, p)
	case events.RequestApproval:
		rows, next, err := h.approvals.Pending(c.Request.Context(), orgID(c), principal(c), p)
		h.respondApprovals(c, rows, next, err)
	case events.RequestCollection:
		h.collectionInbox(c, p)
	case events.RequestReview:
		h.reviewInbox(c, p)
	default:
		fail(c, apperr.Field(apperr.InvalidRequest, "kind", "kind must be approval, collection or review"))
	}
}

// inboxItem is one request of the inbox without kind: its kind and the
// request, under the field its kind names.
type inboxItem struct {
	Kind       string           `json:"kind"`
	Approval   *wire.Approval   `json:"approval,omitempty"`
	Collection *wire.Collection `json:"collection,omitempty"`
	Review     *wire.Review     `json:"review,omitempty"`
	id         string
}

// inboxKind is one kind's part of the inbox without kind: the ids of its
// newest waiting requests, and its newest n of them as items.
type inboxKind struct {
	newestIDs func(ctx context.Context, orgID string, who accounts.Actor, limit int) ([]string, error)
	newest    func(ctx context.Context, orgID string, who accounts.Actor, n int) ([]inboxItem, error)
}

func kindInbox[T any](l *requests.Lifecycle[T], item func(*T) inboxItem) inboxKind {
	return inboxKind{newestIDs: l.NewestWaitingIDs,
		newest: func(ctx context.Context, orgID string, who accounts.Actor, n int) ([]inboxItem, error) {
			rows, err := l.Waiting(ctx, orgID, who, requests.Newest, n)
			items := make([]inboxItem, len(rows))
			for i := range rows {
				items[i] = item(&rows[i])
			}
			return items, err
		}}
}

// allInbox lists the newest p.Limit requests waiting on the caller, of
// every kind. Each kind's newest ids come from its asked index alone, so
// only the records shown are loaded, not a page of each kind.
func (h *handlers) allInbox(c *gin.Context, p requests.Page) {
	ctx, org, who := c.Request.Context(), orgID(c), principal(c)
	if p.Cursor != "" {
		fail(c, apperr.Field(apperr.InvalidRequest, "cursor", "cursor pages one kind only: send it with the kind it came from"))
		return
	}
	kinds := []inboxKind{
		kindInbox(h.approvals.Lifecycle, func(a *approvals.Approval) inboxItem {
			w := wire.NewApproval(a, h.baseURL)
			return inboxItem{Kind: events.RequestApproval, Approval: &w, id: a.ID}
		}),
		kindInbox(h.collections.Lifecycle, func(r *collections.Collection) inboxItem {
			w := wire.NewCollection(r, h.baseURL)
			return inboxItem{Kind: events.RequestCollection, Collection: &w, id: r.ID}
		}),
		kindInbox(h.reviews.Lifecycle, func(r *reviews.Review) inboxItem {
			w := wire.NewReview(r, h.baseURL)
			return inboxItem{Kind: events.RequestReview, Review: &w, id: r.ID}
		}),
	}
	type waiting struct {
		id   string
		kind int
	}
	var newest []waiting
	for k, kind := range kinds {
		found, err := kind.newestIDs(ctx, org, who, p.Limit)
		if err != nil {
			fail(c, err)
			return
		}
		for _, id := range found {
			newest = append(newest, waiting{id, k})
		}
	}
	sort.Slice(newest, func(i, j int) bool { return ids.Newer(newest[i].id, newest[j].id) })
	shown := make([]int, len(kinds))
	for _, w := range newest[:min(p.Limit, len(newest))] {
		shown[w.kind]++
	}
	items := make([]inboxItem, 0, p.Limit)
	for k, kind := range kinds {
		if shown[k] == 0 {
			continue
		}
		part, err := kind.newest(ctx, org, who, shown[k])
		if err != nil {
			fail(c, err)
			return
		}
		items = append(items, part...)
	}
	// A request created between the two reads may take an older one's
	// place in its kind: the page is still the newest of each kind.
	sort.Slice(items, func(i, j int) bool { return ids.Newer(items[i].id, items[j].id) })
	c.JSON(http.StatusOK, wire.List[inboxItem]{Data: items[:min(p.Limit, len(items))]})
}

func (h *handlers) respondApprovals(c *gin.Context, rows []approvals.Approval, next string, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, func(a *approvals.Approval) wire.Approval { return wire.NewApproval(a, h.baseURL) }))
}

// getApproval returns the approval; with ?wait= it first waits for the
// approval to leave pending.
func (h *handlers) getApproval(c *gin.Context) {
	wait, done, err := h.longPoll(c)
	if err != nil {
		fail(c, err)
		return
	}
	defer done()
	a, err := h.approvals.Wait(c.Request.Context(), orgID(c), c.Param("id"), wait)
	h.respondApproval(c, a, err)
}

// longPollRetry is the Retry-After of a long-poll refused for a cap:
// slots free as other waits end, each within requests.MaxWait.
const longPollRetry = 5 * time.Second

// longPoll reads ?wait= and, for a wait, takes one of the caller's
// long-poll slots, refused with rate_limited (naming the cap) when the
// key or the process holds all it may; done gives the slot back.
func (h *handlers) longPoll(c *gin.Context) (wait time.Duration, done func(), err error) {
	if wait, err = waitParam(c.Query("wait")); err != nil || wait <= 0 {
		return wait, func() {}, err
	}
	done, full := h.longPolls.Take(principal(c).Key.ID)
	switch full {
	case ratelimit.KeyFull:
		err = apperr.Field(apperr.RateLimited, "wait", "this key already holds %d long-polls (wait) open, the most one key may (ASSENT_LONG_POLLS_PER_KEY); retry when one returns, or read without wait",
			h.longPolls.PerKey)
	case ratelimit.TotalFull:
		err = apperr.Field(apperr.RateLimited, "wait", "this server already holds %d long-polls (wait) open, the most it serves at once (ASSENT_LONG_POLLS); retry shortly, or read without wait",
			h.longPolls.Total)
	}
	if err != nil {
		c.Header("Retry-After", strconv.Itoa(int(longPollRetry.Seconds())))
		return 0, nil, err
	}
	return wait, done, nil
}

// waitParam reads ?wait= as a duration ("30s") or whole seconds ("30");
// the service bounds it.
func waitParam(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, apperr.Field(apperr.InvalidRequest, "wait", "wait must be a duration such as 30s")
	}
	return d, nil
}

func (h *handlers) decideApproval(c *gin.Context) {
	var in approvals.Decision
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	a, err := h.approvals.Decide(c.Request.Context(), orgID(c), c.Param("id"), claim(c).UpdateID(), principal(c), in)
	h.respondApproval(c, a, err)
}

func (h *handlers) askQuestion(c *gin.Context) {
	var in approvals.Question
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	_, q, err := h.approvals.Ask(c.Request.Context(), orgID(c), c.Param("id"), claim(c).UpdateID(), principal(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, wire.NewQuestion(q))
}

func (h *handlers) answerQuestion(c *gin.Context) {
	var in approvals.Answer
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	a, err := h.approvals.Answer(c.Request.Context(), orgID(c), c.Param("id"), claim(c).UpdateID(), principal(c), in)
	h.respondApproval(c, a, err)
}

func (h *handlers) cancelApproval(c *gin.Context) {
	a, err := h.approvals.Cancel(c.Request.Context(), orgID(c), c.Param("id"), claim(c).UpdateID(), principal(c))
	h.respondApproval(c, a, err)
}

func (h *handlers) respondApproval(c *gin.Context, a *approvals.Approval, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewApproval(a, h.baseURL))
}
