package assent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// A failure receipt keeps the error's message cut to maxFailureResult
// bytes on a character's boundary, marked, so the API (64 KB at most)
// takes it; the caller still gets the error whole.
func TestFailureReceiptCutsTheMessage(t *testing.T) {
	var posted []ReceiptCreate
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body ReceiptCreate
		if r.URL.Path != "/api/v1/receipts" || json.NewDecoder(r.Body).Decode(&body) != nil {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		}
		posted = append(posted, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"rcp_1"}`))
	}))
	t.Cleanup(srv.Close)
	c := New(srv.URL, "k")

	// 'é' is two bytes: an odd cut falls inside one.
	long := "x" + strings.Repeat("é", 40000)
	ran := errors.New(long)
	err := c.runReported(context.Background(), "tok", map[string]any{}, func(context.Context) error { return ran })
	if err != ran {
		t.Fatalf("runReported returned %v, want the function's own error", err)
	}
	short := errors.New("card declined")
	_ = c.runReported(context.Background(), "tok", map[string]any{}, func(context.Context) error { return short })
	if len(posted) != 2 {
		t.Fatalf("%d receipts posted, want 2", len(posted))
	}

	got, _ := posted[0].Result.(string)
	if posted[0].Outcome != "failed" || len(got) > maxFailureResult || !utf8.ValidString(got) {
		t.Fatalf("outcome %s, result of %d bytes (valid UTF-8: %v); want failed, at most %d bytes",
			posted[0].Outcome, len(got), utf8.ValidString(got), maxFailureResult)
	}
	kept, marker, found := strings.Cut(got, "… [truncated from 80001 bytes]")
	if !found || marker != "" || !strings.HasPrefix(long, kept) || len(kept) < maxFailureResult-40 {
		t.Errorf("result %q…%q: want most of the message, then the marker", got[:20], got[len(got)-40:])
	}
	if posted[1].Result != "card declined" {
		t.Errorf("a short message is kept whole; got %v", posted[1].Result)
	}

	// At the limit exactly, nothing is cut.
	whole := strings.Repeat("a", maxFailureResult)
	if failureResult(whole) != whole {
		t.Error("a message of maxFailureResult bytes was cut")
	}
}
