package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// countingBody counts what the client is asked to send of a body.
type countingBody struct {
	r    io.Reader
	read atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// TestParallelPutsToOneUpload: a PUT claims the upload before reading its
// body, so a second PUT while the first streams is refused at once (409)
// without a byte of its body asked for, and one after it too; a PUT whose
// body is cut off lets the claim go, and the upload can be sent again.
func TestParallelPutsToOneUpload(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		newUpload := func() (id, url string) {
			r := f.do(t, "POST", "/api/v1/uploads", f.agentKey, "", nil)
			require.Equal(t, 201, r.status, string(r.body))
			return r.decoded["uploadId"].(string), strings.Replace(r.decoded["uploadUrl"].(string), "http://assent.test", f.srv.URL, 1)
		}
		claimed := func(id string) bool {
			var u models.Upload
			require.NoError(t, db.Where("id = ?", id).Take(&u).Error)
			return u.ReceivingUntil != nil
		}
		// holdPut starts a PUT that sends the start of its body and then
		// holds; it answers on the channel once its body ends.
		holdPut := func(url string) (*io.PipeWriter, chan response) {
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.CloseWithError(errors.New("the test ended")) }) // before the server closes
			done := make(chan response, 1)
			go func() {
				req, _ := http.NewRequest("PUT", url, pr)
				req.Header.Set("Content-Type", "text/html")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					done <- response{status: -1, body: []byte(err.Error())}
					return
				}
				defer resp.Body.Close()
				out := response{status: resp.StatusCode, header: resp.Header}
				out.body, _ = io.ReadAll(resp.Body)
				_ = json.Unmarshal(out.body, &out.decoded)
				done <- out
			}()
			_, err := pw.Write([]byte("<!doctype html><h1>Held"))
			require.NoError(t, err)
			return pw, done
		}
		// racingPut asks to send 8 MB, body only after 100 Continue: the
		// server asks for it only if the handler reads it.
		expect := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
		racingPut := func(url string) (response, int64) {
			body := &countingBody{r: bytes.NewReader(make([]byte, 8<<20))}
			req, err := http.NewRequest("PUT", url, body)
			require.NoError(t, err)
			req.ContentLength = 8 << 20
			req.Header.Set("Content-Type", "text/html")
			req.Header.Set("Expect", "100-continue")
			resp, err := expect.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			out := response{status: resp.StatusCode, header: resp.Header}
			out.body, _ = io.ReadAll(resp.Body)
			_ = json.Unmarshal(out.body, &out.decoded)
			sent, _ := http.NewRequest("PUT", url, strings.NewReader("x"))
			sent.Header.Set("Content-Type", "text/html")
			f.checkContract(t, sent, out)
			return out, body.read.Load()
		}

		id, url := newUpload()
		pw, first := holdPut(url)
		assert.Eventually(t, func() bool { return claimed(id) }, 5*time.Second, 10*time.Millisecond, "claimed before its body is read")
		start := time.Now()
		second, read := racingPut(url)
		assert.Equal(t, 409, second.status, string(second.body))
		assert.Equal(t, "invalid_state", errField(second, "code"))
		assert.Contains(t, errField(second, "message"), "another PUT is sending")
		assert.Zero(t, read, "the racing PUT's body was never asked for")
		assert.Less(t, time.Since(start), 2*time.Second)
		assert.Empty(t, first, "refused while the first still streams")

		_, err := pw.Write([]byte("</h1>"))
		require.NoError(t, err)
		require.NoError(t, pw.Close())
		got := <-first
		require.Equal(t, 200, got.status, string(got.body))
		assert.EqualValues(t, len("<!doctype html><h1>Held</h1>"), got.decoded["bytes"])
		late, read := racingPut(url)
		assert.Equal(t, 409, late.status)
		assert.Contains(t, errField(late, "message"), "already has its content")
		assert.Zero(t, read)
		rep := f.publish(t, `{"title":"Held","uploadId":"`+id+`"}`)
		assert.Equal(t, "live", version(rep)["status"])

		// A PUT cut off midway gives the upload back.
		id, url = newUpload()
		pw, first = holdPut(url)
		require.Eventually(t, func() bool { return claimed(id) }, 5*time.Second, 10*time.Millisecond)
		pw.CloseWithError(errors.New("the uploader's connection dropped"))
		assert.Equal(t, -1, (<-first).status)
		require.Eventually(t, func() bool { return !claimed(id) }, 5*time.Second, 10*time.Millisecond)
		again := f.put(t, url, "text/html", []byte("<!doctype html><h1>Again</h1>"))
		assert.Equal(t, 200, again.status, string(again.body))
	})
}
