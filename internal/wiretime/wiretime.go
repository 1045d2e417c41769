// Package wiretime is the one form of a timestamp on the wire: RFC 3339 in
// UTC with exactly six fractional digits, as in 2026-01-02T15:04:05.123456Z.
// Microseconds are what both databases keep, so a time truncated once, when
// a Time is made, reads the same in a webhook payload and in a later GET.
package wiretime

import (
	"encoding/json"
	"fmt"
	"time"
)

// Layout is the wire form of a timestamp.
const Layout = "2006-01-02T15:04:05.000000Z07:00"

// Time is a timestamp as sent. Its field is unexported, so every Time is
// made by New and is already in UTC at microsecond precision.
type Time struct{ t time.Time }

// New returns t in UTC, truncated to the microsecond.
func New(t time.Time) Time { return Time{t.UTC().Truncate(time.Microsecond)} }

// Ptr converts an optional time; nil stays nil (JSON null).
func Ptr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	w := New(*t)
	return &w
}

// Time returns the timestamp.
func (t Time) Time() time.Time { return t.t }

// IsZero reports whether t is the zero time.
func (t Time) IsZero() bool { return t.t.IsZero() }

// String is the wire form.
func (t Time) String() string { return t.t.Format(Layout) }

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

// UnmarshalJSON reads any RFC 3339 timestamp and truncates it like New, so
// a receiver (or a test) holds what the sender meant.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("wiretime: %w", err)
	}
	parsed, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("wiretime: %w", err)
	}
	*t = New(parsed)
	return nil
}
