package mcp

import (
	"context"
	"errors"
	"slices"
	"time"

	assent "github.com/assent-hq/assent/sdk/go"
)

// A tool that asks a person promises that repeating the call returns the
// same request. The call's key (callKey) is both the Idempotency-Key and
// the request's externalId; a repeat finds the request by it before
// creating anything, so an expiresIn keeps the meaning it had at the first
// call, and never adopts a request someone else made: the API lists by
// externalId only the caller's own requests, and the requester is
// compared here too, so that an older server listing the whole
// organisation's cannot hand another key's request over.

// made finds one kind's requests by externalId, with who asked for each
// and when.
type made[T any] struct {
	list      func(externalID string) ([]T, error)
	requester func(*T) string
	created   func(*T) time.Time
}

// repeatFor is how long a repeated call returns the first call's request,
// as long as the API keeps an Idempotency-Key: a day later the same call
// asks again.
const repeatFor = 24 * time.Hour

// once returns the request an earlier identical call by this caller made,
// else creates it; when two identical calls race, the one whose create is
// refused as a repeat finds the other's.
func once[T any](ctx context.Context, c *assent.Client, key string, m made[T], create func() (*T, error)) (*T, error) {
	if v, err := earlier(ctx, c, key, m); err != nil || v != nil {
		return v, err
	}
	v, err := create()
	if errors.Is(err, &assent.Error{Code: assent.CodeIdempotencyKeyReused}) || errors.Is(err, &assent.Error{Code: assent.CodeIdempotencyInProgress}) {
		if found, ferr := earlier(ctx, c, key, m); ferr == nil && found != nil {
			return found, nil
		}
	}
	return v, err
}

// earlier is the caller's own request that key names, made within
// repeatFor, or nil.
func earlier[T any](ctx context.Context, c *assent.Client, key string, m made[T]) (*T, error) {
	rows, err := mine(ctx, c, key, m)
	if err != nil || len(rows) == 0 || time.Since(m.created(&rows[0])) > repeatFor {
		return nil, err
	}
	return &rows[0], nil
}

// mine are the caller's own requests that key names, newest first.
func mine[T any](ctx context.Context, c *assent.Client, key string, m made[T]) ([]T, error) {
	rows, err := m.list(key)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	self, err := caller(ctx, c)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(rows, func(r T) bool { return m.requester(&r) != self }), nil
}

// caller is who the client acts as, as requests name their requester: the
// member of a member token, else the key.
func caller(ctx context.Context, c *assent.Client) (string, error) {
	me, err := c.Me.Get(ctx)
	if err != nil {
		return "", err
	}
	if me.Member != nil {
		return me.Member.ID, nil
	}
	return me.KeyID, nil
}

func approvalsMade(ctx context.Context, c *assent.Client) made[assent.Approval] {
	return made[assent.Approval]{
		list: func(id string) ([]assent.Approval, error) {
			l, err := c.Approvals.ListPage(ctx, &assent.ListApprovalsParams{ExternalID: id, Limit: 50})
			if err != nil {
				return nil, err
			}
			return l.Data, nil
		},
		requester: func(a *assent.Approval) string { return a.RequestedByID },
		created:   func(a *assent.Approval) time.Time { return a.CreatedAt },
	}
}

func collectionsMade(ctx context.Context, c *assent.Client) made[assent.Collection] {
	return made[assent.Collection]{
		list: func(id string) ([]assent.Collection, error) {
			l, err := c.Collections.ListPage(ctx, &assent.ListCollectionsParams{ExternalID: id, Limit: 10})
			if err != nil {
				return nil, err
			}
			return l.Data, nil
		},
		requester: func(x *assent.Collection) string { return x.RequestedByID },
		created:   func(x *assent.Collection) time.Time { return x.CreatedAt },
	}
}

func reviewsMade(ctx context.Context, c *assent.Client) made[assent.Review] {
	return made[assent.Review]{
		list: func(id string) ([]assent.Review, error) {
			l, err := c.Reviews.ListPage(ctx, &assent.ListReviewsParams{ExternalID: id, Limit: 10})
			if err != nil {
				return nil, err
			}
			return l.Data, nil
		},
		requester: func(v *assent.Review) string { return v.RequestedByID },
		created:   func(v *assent.Review) time.Time { return v.CreatedAt },
	}
}
