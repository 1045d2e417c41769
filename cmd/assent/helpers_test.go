package main

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/bootstrap"
	"github.com/assent-hq/assent/internal/freeport"
)

func freePort(t *testing.T) string {
	t.Helper()
	p, err := freeport.Pick("127.0.0.1")
	require.NoError(t, err)
	return strconv.Itoa(p)
}

// demoMember is the demo organisation's member with role.
func demoMember(t *testing.T, boot *bootstrap.Bootstrap, role string) bootstrap.Member {
	t.Helper()
	for _, m := range boot.Members {
		if m.Role == role {
			return m
		}
	}
	t.Fatalf("the demo organisation has no %s", role)
	return bootstrap.Member{}
}
