// Package slackapp is an organisation's own Slack app: the settings an
// administrator stores (signing secret and bot token, sealed; the channel
// approval requests are posted to), shown as administrators see them and
// kept through the admin service, which checks them; the manifest that
// sets the app up; and the clicks on an approval message's Approve and
// Reject, which it verifies, maps to a member (through accounts) and
// decides through the approvals service, like the page and the REST API.
// It is the one code path behind the admin API, the admin page and the
// interactions endpoint, and reads or writes nothing itself.
package slackapp

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/outbound"
	"github.com/assent-hq/assent/wire"
)

// InteractionsPath is where Slack posts the app's interactions.
const InteractionsPath = wire.SlackInteractionsPath

// Deps are what the service needs.
type Deps struct {
	// Admin keeps the app's settings; Accounts matches a clicker to a
	// member; Approvals decides.
	Admin     *admin.Service
	Accounts  *accounts.Service
	Approvals *approvals.Service
	// BaseURL is this instance's public address: the manifest's request
	// URL and the messages' links start with it.
	BaseURL string
	// APIURL is Slack's Web API; "" is Slack's own (a fake in tests and
	// `assent dev`, ASSENT_SLACK_API_URL).
	APIURL string
	// NetPolicy says where calls to Slack may go (nil is
	// netguard.Public): the Web API and each click's response_url.
	NetPolicy *netguard.Policy
	Logger    *slog.Logger
}

// Service is the organisation's Slack app.
type Service struct {
	admin     *admin.Service
	accounts  *accounts.Service
	approvals *approvals.Service
	baseURL   string
	apiURL    string
	http      *http.Client
	log       *slog.Logger
	users     *userCache
}

// New returns the service.
func New(d Deps) *Service {
	policy := d.NetPolicy
	if policy == nil {
		policy = netguard.Public
	}
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Service{admin: d.Admin, accounts: d.Accounts, approvals: d.Approvals, baseURL: strings.TrimSuffix(d.BaseURL, "/"), apiURL: d.APIURL,
		http: outbound.NewClient(policy), log: log, users: newUserCache(userCacheTTL)}
}

// InteractionsURL is this instance's interactivity request URL.
func (s *Service) InteractionsURL() string { return s.baseURL + InteractionsPath }

// Get returns the organisation's Slack app as administrators see it; one
// not connected reads as connected false.
func (s *Service) Get(ctx context.Context, orgID string) (wire.SlackIntegration, error) {
	in, err := s.admin.SlackApp(ctx, orgID)
	if apperr.Is(err, apperr.NotFound) {
		return wire.NewSlackIntegration(nil, s.InteractionsURL()), nil
	}
	if err != nil {
		return wire.SlackIntegration{}, err
	}
	return wire.NewSlackIntegration(in, s.InteractionsURL()), nil
}

// Save connects the organisation's Slack app or changes it. The secrets
// are sealed at rest and never shown again, only whether each is set.
func (s *Service) Save(ctx context.Context, orgID string, by accounts.Actor, in admin.SlackSettings) (wire.SlackIntegration, error) {
	saved, err := s.admin.SaveSlackApp(ctx, orgID, by, in)
	if err != nil {
		return wire.SlackIntegration{}, err
	}
	return wire.NewSlackIntegration(saved, s.InteractionsURL()), nil
}

// Disconnect deletes the organisation's Slack app's settings: Slack
// messages keep their link button only, and clicks on earlier buttons
// are refused (nothing can verify them).
func (s *Service) Disconnect(ctx context.Context, orgID string) error {
	return s.admin.DisconnectSlackApp(ctx, orgID)
}

// userCacheTTL is how long a Slack user's users.info answer is used: a
// burst of clicks asks Slack once, and a person Slack removes or makes a
// guest is refused within minutes.
const userCacheTTL = 2 * time.Minute

// slackUser is what Assent keeps of a users.info answer.
type slackUser struct {
	email string
	// stranger is someone of another workspace in a Slack Connect channel:
	// their email is vouched for by that workspace, not this one.
	guest, stranger, gone bool
	lookedUpAt            time.Time
}

// userCache keeps users.info answers briefly, per organisation (each has
// its own app and token).
type userCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]slackUser
}

func newUserCache(ttl time.Duration) *userCache {
	return &userCache{ttl: ttl, m: map[string]slackUser{}}
}

// userCacheMax bounds the cache; past it, expired answers are dropped.
const userCacheMax = 10000

func (c *userCache) get(org, id string, now time.Time) (slackUser, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.m[org+"/"+id]
	return u, ok && now.Sub(u.lookedUpAt) < c.ttl
}

func (c *userCache) put(org, id string, u slackUser) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= userCacheMax {
		for k, old := range c.m {
			if u.lookedUpAt.Sub(old.lookedUpAt) >= c.ttl {
				delete(c.m, k)
			}
		}
	}
	if len(c.m) < userCacheMax {
		c.m[org+"/"+id] = u
	}
}
