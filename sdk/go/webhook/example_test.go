package webhook_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/assent-hq/assent/sdk/go/webhook"
)

// A receiver reads the raw body, verifies it against the endpoint's signing
// secret and only then decodes it. Here a delivery is signed the way Assent
// signs one and sent to the handler.
func Example() {
	secret := "whsec_example" // the secret Assent showed when the endpoint was added

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		err = webhook.Verify(r.Header.Get(webhook.HeaderSignature), body, secret, time.Now(), webhook.DefaultTolerance)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Println("verified", r.Header.Get(webhook.HeaderEvent), string(body))
		w.WriteHeader(http.StatusNoContent) // any 2xx counts as delivered
	})

	body := `{"event":"approval.approved","sentAt":"2026-01-01T00:00:00Z","data":{"id":"apr_1"}}`
	send := func(signedWith string) int {
		r := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
		r.Header.Set(webhook.HeaderEvent, "approval.approved")
		r.Header.Set(webhook.HeaderSignature, webhook.SignatureHeader(time.Now(), []byte(body), signedWith))
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		return w.Code
	}
	fmt.Println(send(secret))
	fmt.Println(send("whsec_someone_else"))
	// Output:
	// verified approval.approved {"event":"approval.approved","sentAt":"2026-01-01T00:00:00Z","data":{"id":"apr_1"}}
	// 204
	// 400
}

// Verify says why it refused, so a receiver can log the reason.
func ExampleVerify() {
	secret := "whsec_example"
	body := []byte(`{"event":"approval.rejected","data":{}}`)
	signedAt := time.Unix(1767225600, 0)
	header := webhook.SignatureHeader(signedAt, body, secret)

	fmt.Println(webhook.Verify(header, body, secret, signedAt.Add(time.Minute), 0))
	err := webhook.Verify(header, body, secret, signedAt.Add(time.Hour), 0)
	fmt.Println(errors.Is(err, webhook.ErrTimestampOutOfTolerance))
	err = webhook.Verify(header, []byte(`{"event":"approval.approved","data":{}}`), secret, signedAt, 0)
	fmt.Println(errors.Is(err, webhook.ErrNoMatchingSignature))
	// Output:
	// <nil>
	// true
	// true
}

// During a secret rotation each delivery carries one v1 per secret, so a
// receiver still holding the old secret and one given the new both accept.
func ExampleSignatureHeader() {
	at := time.Unix(1767225600, 0)
	body := []byte(`{}`)
	h := webhook.SignatureHeader(at, body, "whsec_old", "whsec_new")
	fmt.Println(strings.Count(h, "v1="))
	fmt.Println(webhook.Verify(h, body, "whsec_old", at, 0), webhook.Verify(h, body, "whsec_new", at, 0))
	// Output:
	// 2
	// <nil> <nil>
}
