package keycheck

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOnceChecksAKeyOnceWhileItSucceeds(t *testing.T) {
	checks := 0
	check := func(answer string, err error) func() (string, error) {
		return func() (string, error) { checks++; return answer, err }
	}
	ctx := Once(context.Background())

	_, err := Do(ctx, "k1", check("", errors.New("refused")))
	require.Error(t, err)
	a, err := Do(ctx, "k1", check("mia", nil))
	require.NoError(t, err)
	require.Equal(t, "mia", a)
	a, err = Do(ctx, "k1", check("other", nil))
	require.NoError(t, err)
	require.Equal(t, "mia", a, "the first success is reused")
	require.Equal(t, 2, checks, "a refusal is not remembered, a success is")

	a, err = Do(ctx, "k2", check("ben", nil))
	require.NoError(t, err)
	require.Equal(t, "ben", a, "another key is checked anew")
	require.Equal(t, 3, checks)

	a, err = Do(context.Background(), "k2", check("fresh", nil))
	require.NoError(t, err)
	require.Equal(t, "fresh", a, "without Once every check runs")
}
