// Package keycheck lets one request check its key once. The MCP transport
// checks a request's key, and each REST call its tools make in process
// presents the same key to the API again: under a context from Once they
// share the first answer instead of each reading the key's row.
package keycheck

import (
	"context"
	"crypto/subtle"
	"sync"
)

type memoKey struct{}

type memo struct {
	mu     sync.Mutex
	secret string
	answer any
}

// Once is ctx under which Do checks each key at most once while it
// succeeds; a refusal is never remembered.
func Once(ctx context.Context) context.Context {
	return context.WithValue(ctx, memoKey{}, &memo{})
}

// Do is check's answer for secret, or, under Once, the answer an earlier
// check of the same secret gave.
func Do[T any](ctx context.Context, secret string, check func() (T, error)) (T, error) {
	m, _ := ctx.Value(memoKey{}).(*memo)
	if m == nil {
		return check()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if a, ok := m.answer.(T); ok && subtle.ConstantTimeCompare([]byte(m.secret), []byte(secret)) == 1 {
		return a, nil
	}
	a, err := check()
	if err == nil {
		m.secret, m.answer = secret, a
	}
	return a, err
}
