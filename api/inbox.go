package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/wire"
)

// InboxKind is one kind's part of the inbox (Kind.Inbox, InboxOf).
type InboxKind struct {
	name string
	// order is its own list's order when the caller names none.
	order requests.InboxOrder
	// keys are where its first waiting requests sort, from its asked
	// index alone.
	keys func(ctx context.Context, orgID string, who accounts.Actor, order requests.InboxOrder, limit int) ([]requests.WaitingKey, error)
	// items are its first n waiting requests, serialized.
	items func(ctx context.Context, orgID string, who accounts.Actor, order requests.InboxOrder, n int) ([]inboxItem, error)
	// paged, when set, answers its list newest first a page at a time.
	paged func(c *gin.Context, p requests.Page)
}

// InboxOf is k's part of the inbox, over its requests' lifecycle l, in
// order when the caller names none; paged, when not nil, answers its own
// list newest first a page at a time.
func InboxOf[T, In, W any](k RequestRoutes[T, In, W], l *requests.Lifecycle[T], order requests.InboxOrder,
	paged func(c *gin.Context, p requests.Page)) InboxKind {
	return InboxKind{name: l.Kind(), order: order, keys: l.WaitingKeys, paged: paged,
		items: func(ctx context.Context, orgID string, who accounts.Actor, order requests.InboxOrder, n int) ([]inboxItem, error) {
			rows, err := l.Waiting(ctx, orgID, who, order, n)
			items := make([]inboxItem, len(rows))
			for i := range rows {
				items[i] = inboxItem{kind: l.Kind(), request: k.Serialize(&rows[i], k.Kit.BaseURL()), id: k.Service.Head(&rows[i]).ID}
			}
			return items, err
		}}
}

// inbox lists what waits on the calling person: without kind every
// request waiting on them, newest first unless order says; with kind that
// kind's list. order=attention lists the most severe risk first, then the
// earliest due; order=newest the most recently created first.
func (h *handlers) inbox(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	kinds := h.inboxKinds
	name := c.Query("kind")
	at := slices.IndexFunc(kinds, func(k InboxKind) bool { return k.name == name })
	if name != "" && at < 0 {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = k.name
		}
		last := len(names) - 1
		Fail(c, apperr.Field(apperr.InvalidRequest, "kind", "kind must be %s or %s", strings.Join(names[:last], ", "), names[last]))
		return
	}
	order := requests.Newest
	if at >= 0 {
		order = kinds[at].order
	}
	if order, err = requests.InboxOrderOf(c.Query("order"), order); err != nil {
		Fail(c, err)
		return
	}
	if at >= 0 && order == requests.Newest && kinds[at].paged != nil {
		kinds[at].paged(c, p)
		return
	}
	if p.Cursor != "" {
		Fail(c, apperr.Field(apperr.InvalidRequest, "cursor", "cursor pages only kind=approval, newest first: this list is one page"))
		return
	}
	if at >= 0 {
		items, err := kinds[at].items(c.Request.Context(), OrgID(c), Principal(c), order, p.Limit)
		if err != nil {
			Fail(c, err)
			return
		}
		data := make([]any, len(items))
		for i, item := range items {
			data[i] = item.request
		}
		c.JSON(http.StatusOK, wire.List[any]{Data: data})
		return
	}
	h.allInbox(c, kinds, order, p.Limit)
}

// inboxItem is one request of the inbox without kind: its kind, and the
// request under the field its kind names.
type inboxItem struct {
	kind    string
	request any
	id      string
}

func (i inboxItem) MarshalJSON() ([]byte, error) {
	kind, err := json.Marshal(i.kind)
	if err != nil {
		return nil, err
	}
	request, err := json.Marshal(i.request)
	return fmt.Appendf(nil, `{"kind":%s,%s:%s}`, kind, kind, request), err
}

// allInbox lists the first limit requests waiting on the caller, of every
// kind, in order. Where each kind's requests sort comes from its asked
// index alone, so only the records shown are loaded, not a page of each
// kind.
func (h *handlers) allInbox(c *gin.Context, kinds []InboxKind, order requests.InboxOrder, limit int) {
	ctx, org, who := c.Request.Context(), OrgID(c), Principal(c)
	type waiting struct {
		requests.WaitingKey
		kind int
	}
	var first []waiting
	for k, kind := range kinds {
		found, err := kind.keys(ctx, org, who, order, limit)
		if err != nil {
			Fail(c, err)
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
			Fail(c, err)
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
