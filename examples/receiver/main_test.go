package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/assent-hq/assent/sdk/go/webhook"
)

func TestReceiverAcceptsOnlyItsSecret(t *testing.T) {
	h := handler("whsec_right")
	body := `{"event":"approval.approved","data":{}}`
	post := func(secret string) int {
		r := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
		r.Header.Set(webhook.HeaderSignature, webhook.SignatureHeader(time.Now(), []byte(body), secret))
		r.Header.Set(webhook.HeaderDelivery, "dlv_1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if got := post("whsec_right"); got != http.StatusNoContent {
		t.Fatalf("signed with its secret: got %d, want 204", got)
	}
	if got := post("whsec_wrong"); got != http.StatusBadRequest {
		t.Fatalf("signed with another secret: got %d, want 400", got)
	}
}
