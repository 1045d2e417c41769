package assent

import (
	"context"
	"encoding/json"
	"iter"
)

// The inbox answers every kind's requests (an InboxList) or, by kind, one
// of three lists (the document's anyOf); these read it typed. Each needs a
// member token.

// Items yields what waits on the caller, each under its kind: with
// params.Kind empty, every kind, newest first (at most params.Limit, one
// page, as the API answers it); with a kind, that kind's list, page after
// page, as Approvals, Collections and Reviews read it.
func (s *InboxService) Items(ctx context.Context, params *InboxParams, opts ...CallOption) iter.Seq2[*InboxItem, error] {
	var p InboxParams
	if params != nil {
		p = *params
	}
	switch p.Kind {
	case "approval":
		return inboxOf(ctx, s, p.Kind, &p, func(l *ApprovalList) ([]InboxItem, string) {
			return wrap(l.Data, func(a *Approval) InboxItem { return InboxItem{Kind: "approval", Approval: a} }), deref(l.NextCursor)
		}, opts)
	case "collection":
		return inboxOf(ctx, s, p.Kind, &p, func(l *CollectionList) ([]InboxItem, string) {
			return wrap(l.Data, func(c *Collection) InboxItem { return InboxItem{Kind: "collection", Collection: c} }), deref(l.NextCursor)
		}, opts)
	case "review":
		return inboxOf(ctx, s, p.Kind, &p, func(l *ReviewList) ([]InboxItem, string) {
			return wrap(l.Data, func(r *Review) InboxItem { return InboxItem{Kind: "review", Review: r} }), deref(l.NextCursor)
		}, opts)
	}
	// Unknown kinds go to the server too, which refuses them.
	return inboxOf(ctx, s, p.Kind, &p, func(l *InboxList) ([]InboxItem, string) { return l.Data, deref(l.NextCursor) }, opts)
}

func wrap[T any](list []T, item func(*T) InboxItem) []InboxItem {
	out := make([]InboxItem, len(list))
	for i := range list {
		out[i] = item(&list[i])
	}
	return out
}

func inboxOf[L any, T any](ctx context.Context, s *InboxService, kind string, params *InboxParams,
	extract func(*L) ([]T, string), opts []CallOption) iter.Seq2[*T, error] {
	var p InboxParams
	if params != nil {
		p = *params
	}
	p.Kind = kind
	return pages(ctx, s.c, "inbox", nil, queryOf(&p), extract, opts)
}

// Approvals yields the pending approvals the caller may decide, newest
// first, page after page (params.Kind is set to approval).
func (s *InboxService) Approvals(ctx context.Context, params *InboxParams, opts ...CallOption) iter.Seq2[*Approval, error] {
	return inboxOf(ctx, s, "approval", params, func(l *ApprovalList) ([]Approval, string) { return l.Data, deref(l.NextCursor) }, opts)
}

// Collections yields the open requests for information the caller was
// asked and has not replied to, the earliest due first.
func (s *InboxService) Collections(ctx context.Context, params *InboxParams, opts ...CallOption) iter.Seq2[*Collection, error] {
	return inboxOf(ctx, s, "collection", params, func(l *CollectionList) ([]Collection, string) { return l.Data, deref(l.NextCursor) }, opts)
}

// Reviews yields the open reviews awaiting the caller's verdict, the
// earliest closing first.
func (s *InboxService) Reviews(ctx context.Context, params *InboxParams, opts ...CallOption) iter.Seq2[*Review, error] {
	return inboxOf(ctx, s, "review", params, func(l *ReviewList) ([]Review, string) { return l.Data, deref(l.NextCursor) }, opts)
}

// GetDatasetInto decodes the report's dataset name into out (a pointer
// to the caller's type): the document types a dataset as any JSON, so
// its shape is the caller's to name. GetDataset returns it untyped.
func (s *ReportsService) GetDatasetInto(ctx context.Context, idOrSlug, name string, out any, opts ...CallOption) error {
	var raw []byte
	if err := s.c.call(ctx, "getDataset", []string{idOrSlug, name}, nil, nil, &raw, opts); err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}
