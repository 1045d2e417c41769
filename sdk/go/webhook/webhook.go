// Package webhook signs and verifies Assent's deliveries: the events it
// POSTs to an organisation's webhook endpoints and to a request's
// callbackUrl. A receiver needs only Verify; Sign and SignatureHeader are
// for tests and for anything that sends deliveries of its own.
//
// Every delivery carries an Assent-Signature header of the form
//
//	t=<unix seconds>,v1=<hex>[,v1=<hex>…]
//
// where each v1 is the lowercase hex HMAC-SHA256 of "<t>.<raw body>" keyed
// with a signing secret. While a secret is being rotated both the old and
// the new one sign (for 24 hours), so a receiver accepts the delivery if
// any v1 matches its secret.
//
// Verify the raw body bytes exactly as received. Decoding the JSON and
// encoding it again changes key order, spacing and escapes, and the
// signature no longer matches.
//
// docs/webhooks.md in the repository describes the whole scheme: headers,
// envelope, retries and rotation.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	HeaderEvent     = "Assent-Event"     // the event kind
	HeaderDelivery  = "Assent-Delivery"  // delivery id, the same across retries and resends
	HeaderSignature = "Assent-Signature" // t=<unix>,v1=<hex>[,v1=<hex>…]
	HeaderAttempt   = "Assent-Attempt"   // 1-based attempt number
)

// DefaultTolerance is how far a signature's t may be from the receiver's
// clock, in either direction.
const DefaultTolerance = 300 * time.Second

// Why Verify refused a delivery. Compare with errors.Is.
var (
	// ErrMalformedHeader: the header is not t=<digits> with at least one
	// v1=<64 hex digits>.
	ErrMalformedHeader = errors.New("webhook: malformed signature header")
	// ErrTimestampOutOfTolerance: t is too old (perhaps a replay) or too
	// far in the future (perhaps a wrong clock).
	ErrTimestampOutOfTolerance = errors.New("webhook: signature timestamp outside tolerance")
	// ErrNoMatchingSignature: no v1 matches this body and secret; the body
	// was changed, re-serialized, or signed with another secret.
	ErrNoMatchingSignature = errors.New("webhook: no matching signature")
	// ErrEmptySecret: verifying with an empty secret would accept anyone's
	// forgery, so it is refused outright.
	ErrEmptySecret = errors.New("webhook: empty signing secret")
)

// Sign returns the lowercase hex HMAC-SHA256 of "<unix seconds>.<body>"
// keyed with secret. t is signed, so a replay with a new t fails.
func Sign(secret string, t time.Time, body []byte) string {
	return hex.EncodeToString(mac(secret, t.Unix(), body))
}

// SignatureHeader returns "t=<unix>,v1=<hex>" with one v1 per secret, in
// the order given: during a rotation pass both old and new secrets so a
// receiver holding either accepts. With no secrets the header has no v1
// and every receiver refuses it. Sign each attempt when it is sent, not
// when it is queued: a retry an hour later needs a fresh t.
func SignatureHeader(t time.Time, body []byte, secrets ...string) string {
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(strconv.FormatInt(t.Unix(), 10))
	for _, s := range secrets {
		b.WriteString(",v1=")
		b.WriteString(Sign(s, t, body))
	}
	return b.String()
}

// Verify checks a received Assent-Signature header against the raw body as
// received. It accepts when t is within tolerance of now (either
// direction; tolerance <= 0 means DefaultTolerance) and any v1 matches.
// Unknown schemes (say a future v2) are ignored, so a receiver keeps
// working when the service adds one.
func Verify(header string, body []byte, secret string, now time.Time, tolerance time.Duration) error {
	if secret == "" {
		return ErrEmptySecret
	}
	ts, sigs, err := parseHeader(header)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if distance(ts, now.Unix()) > uint64(tolerance/time.Second) {
		return ErrTimestampOutOfTolerance
	}
	want := mac(secret, ts, body)
	ok := false
	for _, sig := range sigs {
		// Check every v1 without stopping early, in constant time each.
		ok = hmac.Equal(sig, want) || ok
	}
	if !ok {
		return ErrNoMatchingSignature
	}
	return nil
}

func mac(secret string, unix int64, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(strconv.AppendInt(nil, unix, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// parseHeader reads exactly one t (decimal digits only, so no sign or
// spaces) and one or more v1 values (64 hex digits each).
func parseHeader(header string) (ts int64, sigs [][]byte, err error) {
	haveT := false
	for part := range strings.SplitSeq(header, ",") {
		key, value, found := strings.Cut(part, "=")
		if !found {
			return 0, nil, ErrMalformedHeader
		}
		switch key {
		case "t":
			if haveT || !allDigits(value) {
				return 0, nil, ErrMalformedHeader
			}
			ts, err = strconv.ParseInt(value, 10, 64)
			if err != nil { // too many digits for int64
				return 0, nil, ErrMalformedHeader
			}
			haveT = true
		case "v1":
			sig, err := hex.DecodeString(value)
			if err != nil || len(sig) != sha256.Size {
				return 0, nil, ErrMalformedHeader
			}
			sigs = append(sigs, sig)
		}
	}
	if !haveT || len(sigs) == 0 {
		return 0, nil, ErrMalformedHeader
	}
	return ts, sigs, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// distance is |a-b| in seconds, exact for any two int64s (the unsigned
// subtraction cannot overflow), so an absurd t cannot wrap into range.
func distance(a, b int64) uint64 {
	if a > b {
		return uint64(a) - uint64(b)
	}
	return uint64(b) - uint64(a)
}
