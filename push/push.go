// Package push is the people's Web Push subscriptions, the browsers the
// inbox's "Notify me" subscribed: the instance's VAPID public key they
// subscribe with, and a browser's subscription bound to the person
// signed in there, ended, or asked after. notify sends the pushes to
// them, beside the emails that ask a person.
package push

import (
	"context"

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
	if err := n.Check(); err != nil {
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
