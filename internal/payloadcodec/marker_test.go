package payloadcodec

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/assent-hq/assent/internal/secretkey"
)

// The first process records the namespace's key; a process with another
// key is refused with the namespace and what to change; one whose ring
// holds the marked key (second, as while rotating) is accepted and moves
// the marker to its current key.
func TestTheNamespaceMarkerAdmitsOnlyItsKey(t *testing.T) {
	t.Parallel()
	keyA, keyB, keyC := secretkey.Generate(), secretkey.Generate(), secretkey.Generate()
	a, b, rotated := ring(t, keyA), ring(t, keyB), ring(t, keyC+","+keyA)
	ts := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseClientOptions(ClientOptions(client.Options{}, New(a))))
	c, ns := ts.GetDefaultClient(), ts.GetDefaultNamespace()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	marked, err := ReadMarker(ctx, c)
	require.NoError(t, err)
	assert.Empty(t, marked, "a new namespace has no marker")
	require.NoError(t, CheckMarker(ctx, c, ns, b), "nothing to compare with yet")

	require.NoError(t, ClaimMarker(ctx, c, ns, a))
	marked, err = ReadMarker(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, a.CurrentID(), marked)
	require.NoError(t, ClaimMarker(ctx, c, ns, a), "the same ring again")

	err = ClaimMarker(ctx, c, ns, b)
	var mismatch *MismatchError
	require.ErrorAs(t, err, &mismatch)
	assert.Equal(t, a.CurrentID(), mismatch.Marked)
	for _, want := range []string{`namespace "` + ns + `"`, "ASSENT_TEMPORAL_NAMESPACE", "ASSENT_TEMPORAL_ADDRESS", "ASSENT_SECRET_KEY", a.CurrentID(), b.CurrentID()} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), keyA)
	assert.NotContains(t, err.Error(), keyB)
	require.ErrorAs(t, CheckMarker(ctx, c, ns, b), &mismatch, "readiness says the same")
	require.NoError(t, CheckMarker(ctx, c, ns, a))

	// Rotation: the ring [C, A] is admitted and moves the marker to C, so
	// the ring [A] alone no longer is.
	require.NoError(t, ClaimMarker(ctx, c, ns, rotated))
	marked, err = ReadMarker(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, rotated.CurrentID(), marked)
	require.ErrorAs(t, ClaimMarker(ctx, c, ns, a), &mismatch)
	require.NoError(t, ClaimMarker(ctx, c, ns, ring(t, keyC)), "the old key dropped")

	// A marker someone terminated is recorded again.
	require.NoError(t, c.TerminateWorkflow(ctx, MarkerWorkflowID, "", "tidying up"))
	require.NoError(t, ClaimMarker(ctx, c, ns, b))
	marked, err = ReadMarker(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, b.CurrentID(), marked)
}
