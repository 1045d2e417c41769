// Package events owns what Assent sends outward: the event catalogue
// (spec 6.1 and 6.3), the delivery envelopes for organisation webhooks and
// per-request callbacks, and their signatures (spec 6.2).
//
// Every delivery carries an Assent-Signature header of the form
//
//	t=<unix seconds>,v1=<hex>[,v1=<hex>…]
//
// where each v1 is the lowercase hex HMAC-SHA256 of "<t>.<raw body>" keyed
// with a signing secret. More than one v1 is sent while a secret is being
// rotated (old and new for 24 hours), so a receiver accepts the delivery if
// any v1 matches its secret.
//
// Receivers (and Verify) must use the raw body bytes exactly as received.
// Decoding the JSON and encoding it again changes key order, spacing and
// escapes, and the signature no longer matches.
//
// Sign each attempt when it is sent, not when it is queued: a retry an hour
// later must carry a fresh t, or receivers reject it as too old.
package events
