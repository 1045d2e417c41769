// Package events owns what Assent sends outward: the event catalogue (with
// the kinds not yet emitted), the delivery envelopes for organisation
// webhooks and per-request callbacks, their headers, and the signing
// secrets. Signing itself is package webhook's, the one place the scheme
// lives; docs/webhooks.md describes it for receivers.
package events
