package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/wire"
)

// inbox lists what waits on the calling person: without kind every
// request waiting on them; kind=approval, collection or review narrows it
// to one kind. order=attention lists the most severe risk first, then the
// earliest due; order=newest the most recently created first. Only the
// approvals newest first are paged.
func (h *handlers) inbox(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	kind := c.Query("kind")
	if kind != "" && kind != events.RequestApproval && kind != events.RequestCollection && kind != events.RequestReview {
		fail(c, apperr.Field(apperr.InvalidRequest, "kind", "kind must be approval, collection or review"))
		return
	}
	order := requests.Newest
	if kind == events.RequestCollection || kind == events.RequestReview {
		order = requests.Attention
	}
	if order, err = requests.InboxOrderOf(c.Query("order"), order); err != nil {
		fail(c, err)
		return
	}
	ctx, org, who := c.Request.Context(), orgID(c), principal(c)
	if kind == events.RequestApproval && order == requests.Newest {
		rows, next, err := h.approvals.Pending(ctx, org, who, p)
		h.approvalRoutes().respondList(c, rows, next, err)
		return
	}
	if p.Cursor != "" {
		fail(c, apperr.Field(apperr.InvalidRequest, "cursor", "cursor pages only kind=approval, newest first: this list is one page"))
		return
	}
	switch kind {
	case "":
		h.allInbox(c, order, p.Limit)
	case events.RequestApproval:
		rows, err := h.approvals.Waiting(ctx, org, who, order, p.Limit)
		h.approvalRoutes().respondList(c, rows, "", err)
	case events.RequestCollection:
		rows, err := h.collections.Waiting(ctx, org, who, order, p.Limit)
		h.collectionRoutes().respondList(c, rows, "", err)
	case events.RequestReview:
		rows, err := h.reviews.Waiting(ctx, org, who, order, p.Limit)
		h.reviewRoutes().respondList(c, rows, "", err)
	}
}

// inboxItem is one request of the inbox without kind: its kind and the
// request, under the field its kind names.
type inboxItem struct {
	Kind       string            `json:"kind"`
	Approval   *approvals.Wire   `json:"approval,omitempty"`
	Collection *collections.Wire `json:"collection,omitempty"`
	Review     *reviews.Wire     `json:"review,omitempty"`
	id         string
}

// inboxKind is one kind's part of the inbox without kind: where its first
// waiting requests sort, and its first n of them as items.
type inboxKind struct {
	keys  func(ctx context.Context, orgID string, who accounts.Actor, order requests.InboxOrder, limit int) ([]requests.WaitingKey, error)
	items func(ctx context.Context, orgID string, who accounts.Actor, order requests.InboxOrder, n int) ([]inboxItem, error)
}

func kindInbox[T any](l *requests.Lifecycle[T], item func(*T) inboxItem) inboxKind {
	return inboxKind{keys: l.WaitingKeys,
		items: func(ctx context.Context, orgID string, who accounts.Actor, order requests.InboxOrder, n int) ([]inboxItem, error) {
			rows, err := l.Waiting(ctx, orgID, who, order, n)
			items := make([]inboxItem, len(rows))
			for i := range rows {
				items[i] = item(&rows[i])
			}
			return items, err
		}}
}

// allInbox lists the first limit requests waiting on the caller, of every
// kind, in order. Where each kind's requests sort comes from its asked
// index alone, so only the records shown are loaded, not a page of each
// kind.
func (h *handlers) allInbox(c *gin.Context, order requests.InboxOrder, limit int) {
	ctx, org, who := c.Request.Context(), orgID(c), principal(c)
	kinds := []inboxKind{
		kindInbox(h.approvals.Lifecycle, func(a *approvals.Approval) inboxItem {
			w := approvals.NewWire(a, h.baseURL)
			return inboxItem{Kind: events.RequestApproval, Approval: &w, id: a.ID}
		}),
		kindInbox(h.collections.Lifecycle, func(r *collections.Collection) inboxItem {
			w := collections.NewWire(r, h.baseURL)
			return inboxItem{Kind: events.RequestCollection, Collection: &w, id: r.ID}
		}),
		kindInbox(h.reviews.Lifecycle, func(r *reviews.Review) inboxItem {
			w := reviews.NewWire(r, h.baseURL)
			return inboxItem{Kind: events.RequestReview, Review: &w, id: r.ID}
		}),
	}
	type waiting struct {
		requests.WaitingKey
		kind int
	}
	var first []waiting
	for k, kind := range kinds {
		found, err := kind.keys(ctx, org, who, order, limit)
		if err != nil {
			fail(c, err)
			return
		}
		for _, key := range found {
			first = append(first, waiting{key, k})
		}
	}
	before := func(a, b waiting) int { return order.Compare(a.WaitingKey, b.WaitingKey) }
	slices.SortFunc(first, before)
	first = first[:min(limit, len(first))]
	shown := make([]int, len(kinds))
	at := map[string]waiting{}
	for _, w := range first {
		shown[w.kind]++
		at[w.ID] = w
	}
	items := make([]inboxItem, 0, limit)
	for k, kind := range kinds {
		if shown[k] == 0 {
			continue
		}
		part, err := kind.items(ctx, org, who, order, shown[k])
		if err != nil {
			fail(c, err)
			return
		}
		items = append(items, part...)
	}
	// A request that changed between the two reads may take another's
	// place in its kind: the page is still the first of each kind, in
	// order, such a newcomer after those whose place was read.
	slices.SortStableFunc(items, func(a, b inboxItem) int {
		wa, oka := at[a.id]
		wb, okb := at[b.id]
		switch {
		case oka && okb:
			return before(wa, wb)
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
	c.JSON(http.StatusOK, wire.List[inboxItem]{Data: items[:min(limit, len(items))]})
}
