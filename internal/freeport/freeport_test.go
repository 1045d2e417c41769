package freeport

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPickIsBindableAndNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		p, err := Pick("127.0.0.1")
		require.NoError(t, err)
		require.False(t, seen[p], "port %d handed out twice", p)
		require.GreaterOrEqual(t, p, low)
		require.Less(t, p, high)
		seen[p] = true
	}
	p, err := Pick("127.0.0.1")
	require.NoError(t, err)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	require.NoError(t, err)
	require.NoError(t, l.Close())
}
