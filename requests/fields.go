package requests

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gowebpki/jcs"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
)

// The fields every kind of request takes alike, checked one way.

// Deps are what every kind's service needs.
type Deps struct {
	Store    *models.Store
	Temporal client.Client
	Logger   *slog.Logger
	// NetPolicy checks callback addresses when a request is created; nil
	// is netguard.Public.
	NetPolicy *netguard.Policy
}

// Filled returns d with its defaults: the public address policy and the
// default logger.
func (d Deps) Filled() Deps {
	if d.NetPolicy == nil {
		d.NetPolicy = netguard.Public
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return d
}

// PollInterval is how often a long-poll checks for changes made in other
// processes (changes made in this one wake it at once): often where the
// check is the only way to hear of them (SQLite), seldom where
// PostgreSQL's NOTIFY relays them and it only covers a dropped connection.
func PollInterval(relayed bool) time.Duration {
	if relayed {
		return 250 * time.Millisecond
	}
	return 50 * time.Millisecond
}

// Timestamp parses a request's RFC 3339 timestamp field, to the
// microsecond the database keeps.
func Timestamp(field, raw string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return time.Time{}, apperr.Field(apperr.InvalidRequest, field, "%s must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z", field)
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

// Fields are the create fields every kind takes alike; each kind's
// CreateInput embeds them, and its create starts its record from Base.
type Fields struct {
	Title       string          `json:"title" validate:"required,notblank,max=200"`
	ExpiresAt   *string         `json:"expiresAt" nullable:"true"`
	ExternalID  *string         `json:"externalId" validate:"omitempty,max=255" nullable:"true"`
	FlowID      *string         `json:"flowId" validate:"omitempty,max=40" nullable:"true"`
	Metadata    json.RawMessage `json:"metadata" nullable:"true"`
	CallbackURL *string         `json:"callbackUrl" validate:"omitempty,max=2048" nullable:"true"`
}

// Base is the record p's create starts with: its title, reference, flow,
// requester, expiry (at most the organisation's maximum after now),
// metadata, and callback, checked against policy, with the secret its
// callbacks are signed with.
func (f *Fields) Base(ctx context.Context, p models.Actor, now time.Time, policy *netguard.Policy) (models.RequestBase, error) {
	b := models.RequestBase{OrganizationID: p.Organization.ID, Title: strings.TrimSpace(f.Title), ExternalID: f.ExternalID,
		FlowID: f.FlowID, Requester: p.ID, RequestedBy: p.Name}
	var err error
	if b.ExpiresAt, err = Expiry(f.ExpiresAt, now, p.Organization.MaxApprovalExpiry()); err != nil {
		return b, err
	}
	if b.Metadata, err = JSONObject("metadata", f.Metadata); err != nil {
		return b, err
	}
	b.CallbackURL, b.CallbackSecret, err = Callback(ctx, policy, f.CallbackURL)
	return b, err
}

// Asked are the people asked as the record keeps them, each with how the
// request reached them.
func Asked(people []*models.Person, via map[string][]models.Via) []models.PersonRef {
	out := make([]models.PersonRef, 0, len(people))
	for _, person := range people {
		ref := person.Ref()
		ref.Via = via[ref.ID]
		out = append(out, ref)
	}
	return out
}

// Shown are people named as the pages and emails name them
// (models.PersonRef.Shown), as a kind that keeps who it asks stores them.
func Shown(people []models.PersonRef) []models.PersonRef {
	out := make([]models.PersonRef, len(people))
	for i, p := range people {
		out[i] = p.Shown()
	}
	return out
}

// Expiry is the requested expiry, which must lie in the future and within
// the organisation's maximum; absent, it is the maximum, so nothing waits
// forever.
func Expiry(raw *string, now time.Time, max time.Duration) (time.Time, error) {
	if raw == nil {
		return now.Add(max), nil
	}
	t, err := Timestamp("expiresAt", *raw)
	if err != nil {
		return time.Time{}, err
	}
	switch {
	case !t.After(now):
		return time.Time{}, apperr.Field(apperr.InvalidRequest, "expiresAt", "expiresAt must be in the future")
	case t.After(now.Add(max)):
		return time.Time{}, apperr.Field(apperr.InvalidRequest, "expiresAt", "expiresAt may be at most %s ahead (the organisation's maximum)", validate.Duration(max))
	}
	return t, nil
}

// Duration reads a duration field given as a string ("4h", "90m") or as
// whole seconds (14400); it must be a positive whole number of seconds.
func Duration(field string, raw json.RawMessage) (time.Duration, error) {
	var d time.Duration
	var text string
	var seconds int64
	switch {
	case json.Unmarshal(raw, &seconds) == nil:
		d = time.Duration(seconds) * time.Second
	case json.Unmarshal(raw, &text) == nil:
		var err error
		if d, err = time.ParseDuration(text); err != nil {
			return 0, apperr.Field(apperr.InvalidRequest, field, "%s must be a duration such as \"4h\" or whole seconds", field)
		}
	default:
		return 0, apperr.Field(apperr.InvalidRequest, field, "%s must be a duration such as \"4h\" or whole seconds", field)
	}
	if d <= 0 || d%time.Second != 0 {
		return 0, apperr.Field(apperr.InvalidRequest, field, "%s must be a positive whole number of seconds", field)
	}
	return d, nil
}

// JSONObject keeps a JSON object as sent (compacted); null means absent.
func JSONObject(field string, raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, apperr.Field(apperr.InvalidRequest, field, "%s must be a JSON object", field)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, apperr.Field(apperr.InvalidRequest, field, "%s is not valid JSON", field)
	}
	// What decision tokens hash (RFC 8785) must exist: no key twice, no
	// lone surrogate, no number beyond a double.
	if _, err := jcs.Transform(buf.Bytes()); err != nil {
		return nil, apperr.Field(apperr.InvalidRequest, field, "%s must be JSON with one meaning (no key twice, no lone surrogate, numbers within a double's range): %v", field, err)
	}
	return buf.Bytes(), nil
}

// Callback checks a request's callback address against policy and makes
// the secret its callbacks are signed with, shown once.
func Callback(ctx context.Context, policy *netguard.Policy, url *string) (*string, *string, error) {
	if url == nil {
		return nil, nil, nil
	}
	if err := policy.CheckURL(ctx, *url); err != nil {
		return nil, nil, apperr.Field(apperr.InvalidCallbackURL, "callbackUrl", "callbackUrl is refused: %v", err)
	}
	secret := events.NewSecret(events.CallbackSecretPrefix)
	return url, &secret, nil
}
