package assent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"time"
)

// pages yields every item of a list, following nextCursor.
func pages[R any, T any](ctx context.Context, c *Client, id string, path []string, query url.Values,
	extract func(*R) ([]T, string), opts []CallOption) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		for {
			var page R
			if err := c.call(ctx, id, path, q, nil, &page, opts); err != nil {
				yield(nil, err)
				return
			}
			items, next := extract(&page)
			for i := range items {
				if !yield(&items[i], nil) {
					return
				}
			}
			if next == "" {
				return
			}
			q.Set("cursor", next)
		}
	}
}

// WaitTimeoutError is returned by Wait when the context ends while the
// request is still open; Last is the last read (never settled).
type WaitTimeoutError[T any] struct {
	Last   *T
	Status string
	Err    error
}

func (e *WaitTimeoutError[T]) Error() string {
	return fmt.Sprintf("assent: still %s when the wait ended: %v", e.Status, e.Err)
}

func (e *WaitTimeoutError[T]) Unwrap() error { return e.Err }

// longPoll is the most the server holds a request.
const longPoll = 60 * time.Second

// wait long-polls id until its status leaves open or ctx ends. A dropped
// connection, a 5xx or a 429 is retried until then; any other refusal is
// returned. It never returns an open request as settled.
func wait[T any](ctx context.Context, c *Client, id, op, open string, status func(*T) string) (*T, error) {
	var last *T
	lastStatus := open
	for {
		poll := longPoll
		if d, ok := ctx.Deadline(); ok {
			poll = min(poll, time.Until(d).Truncate(time.Second))
		}
		if poll < 0 {
			poll = 0
		}
		var got T
		err := c.call(ctx, op, []string{id}, url.Values{"wait": {fmt.Sprintf("%ds", int(poll/time.Second))}}, nil, &got,
			[]CallOption{})
		if err == nil {
			if status(&got) != open {
				return &got, nil
			}
			last, lastStatus = &got, status(&got)
		} else {
			var apiErr *Error
			if ctx.Err() != nil {
				return nil, &WaitTimeoutError[T]{Last: last, Status: lastStatus, Err: ctx.Err()}
			}
			if !errors.As(err, &apiErr) || (apiErr.Status != 0 && apiErr.Status != http.StatusTooManyRequests && apiErr.Status < 500) {
				return nil, err
			}
			if err := c.sleep(ctx, time.Second); err != nil {
				return nil, &WaitTimeoutError[T]{Last: last, Status: lastStatus, Err: err}
			}
			continue
		}
		if ctx.Err() != nil || poll == 0 {
			if ctx.Err() == nil {
				// Less than a second left: let the deadline pass rather than spin.
				<-ctx.Done()
			}
			return nil, &WaitTimeoutError[T]{Last: last, Status: lastStatus, Err: ctx.Err()}
		}
	}
}

// Wait long-polls the approval until it is no longer pending (approved,
// rejected, expired or cancelled) or ctx ends (then a *WaitTimeoutError).
func (s *ApprovalsService) Wait(ctx context.Context, id string) (*Approval, error) {
	return wait(ctx, s.c, id, "getApproval", "pending", func(a *Approval) string { return a.Status })
}

// Wait long-polls the collection until it is no longer open or ctx ends.
func (s *CollectionsService) Wait(ctx context.Context, id string) (*Collection, error) {
	return wait(ctx, s.c, id, "getCollection", "open", func(a *Collection) string { return a.Status })
}

// Wait long-polls the review until it is no longer open or ctx ends.
func (s *ReviewsService) Wait(ctx context.Context, id string) (*Review, error) {
	return wait(ctx, s.c, id, "getReview", "open", func(a *Review) string { return a.Status })
}

// EvidenceCSV reads the flow's evidence as CSV.
func (s *FlowsService) EvidenceCSV(ctx context.Context, id string, opts ...CallOption) ([]byte, error) {
	var out []byte
	err := s.c.call(ctx, "getFlowEvidence", []string{id}, url.Values{"format": {"csv"}}, nil, &out, opts)
	return out, err
}

// EvidenceCSV reads the report's evidence as CSV.
func (s *ReportsService) EvidenceCSV(ctx context.Context, idOrSlug string, opts ...CallOption) ([]byte, error) {
	var out []byte
	err := s.c.call(ctx, "getReportEvidence", []string{idOrSlug}, url.Values{"format": {"csv"}}, nil, &out, opts)
	return out, err
}
