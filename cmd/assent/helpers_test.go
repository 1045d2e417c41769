package main

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/freeport"
)

func freePort(t *testing.T) string {
	t.Helper()
	p, err := freeport.Pick("127.0.0.1")
	require.NoError(t, err)
	return strconv.Itoa(p)
}
