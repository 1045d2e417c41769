package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/idempotency"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestIdempotencyHoldsWhileTheFirstRequestRuns sends 20 requests with one
// key while the handler is still working: exactly one executes, the rest
// are told the first is in progress, and a later call replays it.
func TestIdempotencyHoldsWhileTheFirstRequestRuns(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		h, key := idempotencyHarness(t, db)
		var runs atomic.Int32
		release := make(chan struct{})
		r := gin.New()
		r.Use(errorsMiddleware(h.log))
		r.POST("/slow", readBody(DefaultBodyLimit), h.authenticate, h.idempotent(false), func(c *gin.Context) {
			runs.Add(1)
			<-release
			c.JSON(http.StatusCreated, gin.H{"run": runs.Load()})
		})
		srv := httptest.NewServer(r)
		defer srv.Close()

		post := func() *http.Response {
			req, _ := http.NewRequest("POST", srv.URL+"/slow", strings.NewReader(`{"a":1}`))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "k")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			return resp
		}

		first := make(chan *http.Response)
		go func() { first <- post() }()
		require.Eventually(t, func() bool { return runs.Load() == 1 }, 5*time.Second, 5*time.Millisecond)

		var wg sync.WaitGroup
		var conflicts atomic.Int32
		for range 19 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := post()
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 409 && strings.Contains(string(b), "idempotency_in_progress") {
					conflicts.Add(1)
				}
			}()
		}
		wg.Wait()
		close(release)
		resp := <-first
		resp.Body.Close()

		assert.Equal(t, int32(1), runs.Load(), "exactly one request executes")
		assert.Equal(t, int32(19), conflicts.Load())
		assert.Equal(t, 201, resp.StatusCode)

		replay := post()
		defer replay.Body.Close()
		assert.Equal(t, 201, replay.StatusCode)
		assert.Equal(t, "true", replay.Header.Get("Idempotency-Replayed"))
		assert.Equal(t, int32(1), runs.Load())
	})
}

// TestIdempotencyReleasesAfterServerError lets a client retry a key whose
// first attempt failed on the server's side.
func TestIdempotencyReleasesAfterServerError(t *testing.T) {
	t.Parallel()
	h, key := idempotencyHarness(t, testenv.OpenDB(t, "sqlite"))
	var calls atomic.Int32
	r := gin.New()
	r.Use(errorsMiddleware(h.log))
	r.POST("/flaky", readBody(DefaultBodyLimit), h.authenticate, h.idempotent(false), func(c *gin.Context) {
		if calls.Add(1) == 1 {
			panic("boom")
		}
		c.JSON(http.StatusCreated, gin.H{"ok": true})
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	post := func() int {
		req, _ := http.NewRequest("POST", srv.URL+"/flaky", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Idempotency-Key", "retry-me")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 500, post())
	assert.Equal(t, 201, post())
	assert.Equal(t, int32(2), calls.Load())
}

// idempotencyHarness returns handlers over db and an agent key of a fresh
// organisation.
func idempotencyHarness(t *testing.T, db *gorm.DB) (*handlers, string) {
	t.Helper()
	ctx := context.Background()
	store := models.NewStore(db, testenv.Keys())
	org, err := store.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	_, key, err := store.CreateKey(ctx, org.ID, "a", models.KeyAgent, []string{"approvals:write"})
	require.NoError(t, err)
	return &handlers{accounts: accounts.New(store), idempotency: idempotency.New(store.IdempotencyStore),
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}, key
}
