package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/ratelimit"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// TestLongPollsAreCapped: a key holds at most its cap of long-polls open
// at once and the process its own; one more is refused at once with 429
// rate_limited, Retry-After and the cap's name, while those held still
// wait; another key is not held back by one key's polls, and a read
// without wait never is.
func TestLongPollsAreCapped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.OpenDB(t, "sqlite"))
	slots := ratelimit.NewSlots(2, 3)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.srv = httptest.NewServer(api.New(api.Deps{Logger: quiet, BaseURL: "http://assent.test", Services: f.services.API(), LongPolls: slots}))
	t.Cleanup(f.srv.Close)
	a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: f.org.ID, Title: "Pay",
		ExpiresAt: models.Now().Add(time.Hour), Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow, ApproverIDs: []string{f.member.ID},
		RequiredApprovals: 1}
	_, err := requests.Insert(context.Background(), f.store, approvals.Records(f.store), a, nil)
	require.NoError(t, err)
	path := "/api/v1/approvals/" + a.ID
	require.Equal(t, 200, f.do(t, "GET", path, f.agentKey, "", nil).status) // loads the contract check, too

	held := make(chan response, 3)
	hold := func(key string, n int) {
		go func() { held <- f.do(t, "GET", path+"?wait=3s", key, "", nil) }()
		require.Eventually(t, func() bool { return slots.InUse() == n }, 5*time.Second, 5*time.Millisecond)
	}
	refused := func(r response, limit string) {
		t.Helper()
		require.Equal(t, 429, r.status, string(r.body))
		assert.Equal(t, "rate_limited", errField(r, "code"))
		assert.Equal(t, "wait", errField(r, "field"))
		assert.Contains(t, errField(r, "message"), limit)
		assert.Equal(t, "5", r.header.Get("Retry-After"))
	}
	hold(f.agentKey, 1)
	hold(f.agentKey, 2)
	start := time.Now()
	refused(f.do(t, "GET", path+"?wait=3s", f.agentKey, "", nil), "holds 2 long-polls (wait) open, the most one key may (ASSENT_LONG_POLLS_PER_KEY)")
	assert.Less(t, time.Since(start), time.Second, "refused at once")
	refused(f.do(t, "GET", "/api/v1/collections/col_01JABCDEF0123456789ABCDEFG?wait=3s", f.agentKey, "", nil), "ASSENT_LONG_POLLS_PER_KEY")
	refused(f.do(t, "GET", "/api/v1/reviews/rev_01JABCDEF0123456789ABCDEFG?wait=3s", f.agentKey, "", nil), "ASSENT_LONG_POLLS_PER_KEY")
	assert.Empty(t, held, "the held long-polls still wait")

	hold(f.readOnlyKey, 3) // another key is not held back by the first's
	refused(f.do(t, "GET", path+"?wait=3s", f.memberToken, "", nil), "this server already holds 3 long-polls (wait) open, the most it serves at once (ASSENT_LONG_POLLS)")
	now := f.do(t, "GET", path, f.memberToken, "", nil)
	assert.Equal(t, 200, now.status, "a read without wait is no long-poll")
	assert.Empty(t, held, "the held long-polls still wait")

	for range 3 {
		r := <-held
		assert.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "pending", r.decoded["status"])
	}
	assert.Equal(t, 0, slots.InUse(), "each slot is given back")
	again := f.do(t, "GET", path+"?wait=1", f.agentKey, "", nil)
	assert.Equal(t, 200, again.status, string(again.body))
}
