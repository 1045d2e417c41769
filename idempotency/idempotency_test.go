package idempotency_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/idempotency"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

type env struct {
	db    *gorm.DB
	store *models.Store
	svc   *idempotency.Service
}

type org = testenv.People

func eachDB(t *testing.T, tests map[string]func(t *testing.T, e *env, o *org)) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		store := models.NewStore(db, testenv.Keys())
		e := &env{db: db, store: store, svc: idempotency.New(store.IdempotencyStore)}
		for name, test := range tests {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				test(t, e, testenv.NewPeople(t, store, "agent"))
			})
		}
	})
}

// lapse ends the lease of key's unfinished attempt, as its process dying
// does.
func (e *env) lapse(t *testing.T, o *org, key string) {
	t.Helper()
	require.NoError(t, e.db.Model(&models.IdempotencyKey{}).Where("organization_id = ? AND idempotency_key = ?", o.ID, key).
		Update("locked_until", models.Now().Add(-time.Second)).Error)
}

// post is the agent's POST /api/v1/approvals with body, under key.
func post(o *org, key, body string) idempotency.Request {
	return idempotency.Request{OrganizationID: o.ID, PrincipalID: o.Agent.Key.ID, Key: key,
		Method: http.MethodPost, Path: "/api/v1/approvals", Body: []byte(body)}
}

// fresh claims r and requires it to run.
func (e *env) fresh(t *testing.T, r idempotency.Request, resumable bool) *models.Claim {
	t.Helper()
	c, prev, err := e.svc.Claim(context.Background(), r, resumable)
	require.NoError(t, err)
	require.Nil(t, prev, "not a replay")
	require.NotNil(t, c)
	return c
}

func created(body string) *idempotency.Response {
	return &idempotency.Response{Status: http.StatusCreated, ContentType: "application/json", Body: []byte(body)}
}

func TestClaims(t *testing.T) {
	t.Parallel()
	eachDB(t, map[string]func(*testing.T, *env, *org){
		"a completed request is replayed byte for byte, however its JSON is laid out": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			c := e.fresh(t, post(o, "k1", `{"title":"Pay","amount":1.50}`), false)
			require.NoError(t, e.svc.Settle(ctx, c, created(`{"id":"apr_1","secret":"shown once"}`)))

			for _, body := range []string{`{"title":"Pay","amount":1.50}`, "{ \"amount\": 1.50,\n \"title\": \"Pay\" }"} {
				again, prev, err := e.svc.Claim(ctx, post(o, "k1", body), false)
				require.NoError(t, err)
				assert.Nil(t, again)
				require.NotNil(t, prev)
				assert.Equal(t, http.StatusCreated, prev.StatusCode)
				assert.Equal(t, "application/json", prev.ContentType)
				assert.Equal(t, `{"id":"apr_1","secret":"shown once"}`, string(prev.ResponseBody))
			}
			var row models.IdempotencyKey
			require.NoError(t, e.db.Where("organization_id = ? AND idempotency_key = ?", o.ID, "k1").Take(&row).Error)
			assert.NotContains(t, string(row.ResponseBody), "shown once", "the stored response is sealed")
		},
		"a key is refused for another request": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			c := e.fresh(t, post(o, "k1", `{"title":"Pay","amount":1.50}`), false)
			require.NoError(t, e.svc.Settle(ctx, c, created(`{}`)))
			for _, r := range []idempotency.Request{
				post(o, "k1", `{"title":"Pay","amount":1.5}`), // a number spelt otherwise
				{OrganizationID: o.ID, PrincipalID: o.Agent.Key.ID, Key: "k1", Method: http.MethodPost, Path: "/api/v1/collections", Body: []byte(`{"title":"Pay","amount":1.50}`)},
			} {
				_, _, err := e.svc.Claim(ctx, r, false)
				testenv.Refused(t, err, apperr.IdempotencyReused, "")
			}
		},
		"a key belongs to the key or token that sent it": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			c := e.fresh(t, post(o, "k1", `{}`), false)
			require.NoError(t, e.svc.Settle(ctx, c, created(`{"id":"apr_1"}`)))
			other := post(o, "k1", `{}`)
			other.PrincipalID = "key_other"
			e.fresh(t, other, false)
		},
		"an unfinished attempt holds the key until its lock lapses": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			e.fresh(t, post(o, "k1", `{}`), false)
			_, _, err := e.svc.Claim(ctx, post(o, "k1", `{}`), false)
			testenv.Refused(t, err, apperr.IdempotencyInFlight, "")

			e.lapse(t, o, "k1")
			c := e.fresh(t, post(o, "k1", `{}`), false)
			assert.False(t, c.Resumed, "a fresh attempt, not a resumed one")
		},
		"a claim whose process died is resumed on a resumable route": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			first := e.fresh(t, post(o, "k1", `{"title":"Pay"}`), true)
			assert.False(t, first.Resumed)
			// The create bound its record, then the process died unsettled.
			require.NoError(t, e.db.Transaction(func(tx *gorm.DB) error {
				_, err := models.BindClaim(tx, first, "apr_made")
				return err
			}))
			_, _, err := e.svc.Claim(ctx, post(o, "k1", `{"title":"Pay"}`), true)
			testenv.Refused(t, err, apperr.IdempotencyInFlight, "")
			e.lapse(t, o, "k1")

			retry := e.fresh(t, post(o, "k1", `{"title":"Pay"}`), true)
			assert.True(t, retry.Resumed)
			assert.Equal(t, first.UpdateID(), retry.UpdateID(), "the retry's Updates are the first attempt's")
			made, err := e.store.ClaimedResource(ctx, retry)
			require.NoError(t, err)
			assert.Equal(t, "apr_made", made)

			// Failing again releases nothing: the claim is bound to its record.
			require.NoError(t, e.svc.Settle(ctx, retry, &idempotency.Response{Status: http.StatusServiceUnavailable}))
			again := e.fresh(t, post(o, "k1", `{"title":"Pay"}`), true)
			assert.True(t, again.Resumed)
			made, err = e.store.ClaimedResource(ctx, again)
			require.NoError(t, err)
			assert.Equal(t, "apr_made", made)
		},
		"two attempts never run at once, and one retry takes up a lapsed lease": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			e.fresh(t, post(o, "k1", `{}`), true)
			_, _, err := e.svc.Claim(ctx, post(o, "k1", `{}`), true)
			testenv.Refused(t, err, apperr.IdempotencyInFlight, "")

			e.lapse(t, o, "k1")
			var took atomic.Int32
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					c, _, err := e.svc.Claim(ctx, post(o, "k1", `{}`), true)
					if err == nil && c.Resumed {
						took.Add(1)
					} else {
						assert.True(t, apperr.Is(err, apperr.IdempotencyInFlight), "%v", err)
					}
				})
			}
			wg.Wait()
			assert.EqualValues(t, 1, took.Load(), "one retry takes it up, the others wait for it")
		},
		"a second attempt awaits the first's outcome": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			first := e.fresh(t, post(o, "k1", `{}`), true)
			stop := e.svc.Hold(ctx, first)
			go func() {
				time.Sleep(3 * idempotency.Renew) // past the lease, which Hold renews
				stop()
				assert.NoError(t, e.svc.Settle(ctx, first, created(`{"id":"apr_1"}`)))
			}()
			c, prev, err := e.svc.Await(ctx, post(o, "k1", `{}`), true, 10*time.Second)
			require.NoError(t, err)
			assert.Nil(t, c, "not run again")
			require.NotNil(t, prev, "the first attempt's response, held past a renewal")
			assert.Equal(t, `{"id":"apr_1"}`, string(prev.ResponseBody))

			// Refused, the first leaves the key to the one waiting.
			second := e.fresh(t, post(o, "k2", `{}`), false)
			go func() {
				time.Sleep(100 * time.Millisecond)
				assert.NoError(t, e.svc.Settle(ctx, second, &idempotency.Response{Status: http.StatusBadRequest}))
			}()
			c, prev, err = e.svc.Await(ctx, post(o, "k2", `{}`), false, 10*time.Second)
			require.NoError(t, err)
			assert.Nil(t, prev)
			assert.NotNil(t, c, "runs itself")

			// Still running when the wait ends: in progress.
			e.fresh(t, post(o, "k3", `{}`), true)
			_, _, err = e.svc.Await(ctx, post(o, "k3", `{}`), true, 200*time.Millisecond)
			testenv.Refused(t, err, apperr.IdempotencyInFlight, "")
		},
		"a refusal, a failure or no response releases the key": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			for _, r := range []*idempotency.Response{
				{Status: http.StatusBadRequest, ContentType: "application/json", Body: []byte(`{"error":{}}`)},
				{Status: http.StatusInternalServerError},
				nil,
			} {
				c := e.fresh(t, post(o, "k1", `{}`), false)
				require.NoError(t, e.svc.Settle(ctx, c, r))
			}
			c := e.fresh(t, post(o, "k1", `{"now":"different"}`), false)
			require.NoError(t, e.svc.Settle(ctx, c, created(`{}`)))
		},
		"a key that is not 1 to 255 printable ASCII characters is refused": func(t *testing.T, e *env, o *org) {
			for _, k := range []string{"", strings.Repeat("k", 256), "tab\there", "naïve"} {
				_, _, err := e.svc.Claim(context.Background(), post(o, k, `{}`), false)
				testenv.Refused(t, err, apperr.InvalidRequest, idempotency.Header)
			}
			e.fresh(t, post(o, strings.Repeat("k", 255), `{}`), false)
		},
	})
}
