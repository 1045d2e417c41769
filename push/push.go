// Package push is the people's Web Push subscriptions, the browsers the
// inbox's "Notify me" subscribed: the instance's VAPID public key they
// subscribe with, and a browser's subscription bound to the person
// signed in there, ended, or asked after. notify sends the pushes to
// them, beside the emails that ask a person.
package push

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/models"
)

// Service keeps the subscriptions.
type Service struct {
	store  *models.PushStore
	policy *netguard.Policy
}

// New returns the service; policy says where a subscription's endpoint
// may point (nil is netguard.Public), as pushes are sent under it.
func New(store *models.PushStore, policy *netguard.Policy) *Service {
	if policy == nil {
		policy = netguard.Public
	}
	return &Service{store: store, policy: policy}
}

// PublicKey is the instance's VAPID public key (base64url), the
// applicationServerKey browsers subscribe with; the key pair is made on
// first use.
func (s *Service) PublicKey(ctx context.Context) (string, error) {
	public, _, err := s.store.VAPIDKey(ctx)
	return public, err
}

// Subscribe binds the browser's subscription n to person, made in the
// sign-in sessionID (signing out there ends it). Its keys must be a P-256
// point and a 16-byte secret and its endpoint a push service the network
// policy lets pushes reach. An endpoint already stored takes n's keys and
// person: a browser someone else signed in to before is this person's
// now.
func (s *Service) Subscribe(ctx context.Context, who models.Actor, sessionID string, n Subscription) error {
	person, err := accounts.ActingPerson(who, "notifications")
	if err != nil {
		return err
	}
	if err := checkSubscription(n); err != nil {
		return apperr.New(apperr.InvalidRequest, "%s", err.Error())
	}
	if err := s.policy.CheckURL(ctx, n.Endpoint); err != nil {
		return apperr.New(apperr.InvalidRequest, "the subscription's endpoint cannot be reached: %s", err.Error())
	}
	_, err = s.store.SubscribePush(ctx, person, sessionID, n)
	return err
}

// Unsubscribe ends the subscription at endpoint of the person who acts,
// if any: they turned notifications off in that browser. Someone else's
// stays.
func (s *Service) Unsubscribe(ctx context.Context, who models.Actor, endpoint string) error {
	person, err := accounts.ActingPerson(who, "notifications")
	if err != nil {
		return err
	}
	return s.store.UnsubscribePush(ctx, person, endpoint)
}

// Subscribed says whether the browser at endpoint is subscribed for the
// person who acts (it may be someone else's, who used it before).
func (s *Service) Subscribed(ctx context.Context, who models.Actor, endpoint string) (bool, error) {
	person, err := accounts.ActingPerson(who, "notifications")
	if err != nil {
		return false, err
	}
	return s.store.PushSubscribed(ctx, person, endpoint)
}

// maxEndpoint bounds a push endpoint URL; the browser vendors' are a few
// hundred characters.
const maxEndpoint = 2000

// checkSubscription refuses keys that are not a P-256 point and a 16-byte
// secret, and an endpoint that is not an absolute http(s) URL of a sane
// length; where the endpoint may point is the network policy's to say.
func checkSubscription(n Subscription) error {
	if n.Endpoint == "" || len(n.Endpoint) > maxEndpoint ||
		!(strings.HasPrefix(n.Endpoint, "https://") || strings.HasPrefix(n.Endpoint, "http://")) {
		return errors.New("the subscription's endpoint is not a push service's URL")
	}
	p256dh, err := decodeKey(n.P256dh)
	if err != nil {
		return errors.New("the subscription's p256dh key is not base64url")
	}
	if _, err := ecdh.P256().NewPublicKey(p256dh); err != nil || len(p256dh) != 65 {
		return errors.New("the subscription's p256dh key is not an uncompressed P-256 point")
	}
	if auth, err := decodeKey(n.Auth); err != nil || len(auth) != 16 {
		return errors.New("the subscription's auth secret is not 16 bytes of base64url")
	}
	return nil
}

// decodeKey reads base64url with or without padding, as browsers and
// libraries write it.
func decodeKey(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}
