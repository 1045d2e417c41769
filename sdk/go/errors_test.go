package assent

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A receipt's 409 carries the token's receipt (ReceiptConflict); other
// errors, and a receipt this SDK cannot read, carry none.
func TestReceiptConflictCarriesTheReceipt(t *testing.T) {
	conflict := `{"error":{"code":"input_mismatch","message":"m","field":"input"},"receipt":{"id":"rcp_1","inputMatches":false,"outcome":"succeeded"}}`
	for _, c := range []struct {
		body, receipt string
	}{
		{conflict, "rcp_1"},
		{`{"error":{"code":"conflict","message":"m"}}`, ""},
		{`{"error":{"code":"receipt_exists","message":"m"},"receipt":{"id":"rcp_2","startedAt":"yesterday"}}`, ""},
	} {
		s := newScripted(t, answer{status: 409, body: c.body})
		_, err := s.client.Receipts.Create(context.Background(), &ReceiptCreate{DecisionToken: "tok", Outcome: "succeeded",
			StartedAt: time.Now(), FinishedAt: time.Now()})
		var e *Error
		if !errors.As(err, &e) || e.Status != 409 || e.Message != "m" {
			t.Fatalf("want the 409, got %v", err)
		}
		got := ""
		if e.Receipt != nil {
			got = e.Receipt.ID
		}
		if got != c.receipt {
			t.Fatalf("%s: receipt %q, want %q", c.body, got, c.receipt)
		}
		if len(s.keys) != 1 {
			t.Fatalf("a receipt conflict was retried: %d requests", len(s.keys))
		}
	}
}
