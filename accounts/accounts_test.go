package accounts_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

type env struct {
	db    *gorm.DB
	store *models.Store
	svc   *accounts.Service
}

type org = testenv.People

// eachDB runs each of tests on SQLite and on PostgreSQL, in parallel, each
// in an organisation of its own.
func eachDB(t *testing.T, tests map[string]func(t *testing.T, e *env, o *org)) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		store := models.NewStore(db, testenv.Keys())
		e := &env{db: db, store: store, svc: accounts.New(store)}
		for name, test := range tests {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				test(t, e, testenv.NewPeople(t, store, "agent"))
			})
		}
	})
}

// address is an email no other test's organisation has: sign-in looks
// addresses up across organisations.
func address(o *org, name string) string {
	return name + "-" + strings.ToLower(o.ID) + "@example.com"
}

// member adds a member with address(o, name) to o.
func (e *env) member(t *testing.T, o *org, name string) *models.Person {
	t.Helper()
	m, err := e.store.CreateMember(context.Background(), o.ID, address(o, name), name, models.RoleMember)
	require.NoError(t, err)
	return &models.Person{Organization: o.Organization, Member: m}
}

func (e *env) deactivate(t *testing.T, o *org, p *models.Person) {
	t.Helper()
	testenv.ChangeMember(t, e.store, o.ID, p.ID(), func(m *models.Member) { m.Active = false })
}

func (e *env) set(t *testing.T, model any, id, column string, v time.Time) {
	t.Helper()
	require.NoError(t, e.db.Model(model).Where("id = ?", id).Update(column, v).Error)
}

func TestAuthenticate(t *testing.T) {
	eachDB(t, map[string]func(*testing.T, *env, *org){
		"an agent key acts for its organisation": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			_, secret, err := e.store.CreateKey(ctx, o.ID, "bot", models.KeyAgent, []string{"approvals:read"})
			require.NoError(t, err)
			p, err := e.svc.Authenticate(ctx, secret)
			require.NoError(t, err)
			assert.Equal(t, o.ID, p.Organization.ID)
			assert.Nil(t, p.Member())
			assert.True(t, p.HasScope("approvals:read"))
		},
		"a missing, unknown or revoked key is refused": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			k, secret, err := e.store.CreateKey(ctx, o.ID, "bot", models.KeyAgent, []string{"approvals:read"})
			require.NoError(t, err)
			_, err = e.store.RevokeKey(ctx, o.ID, k.ID)
			require.NoError(t, err)
			for _, s := range []string{"", "asnt_agent_nope", secret} {
				_, err := e.svc.Authenticate(ctx, s)
				assert.True(t, apperr.Is(err, apperr.Unauthorized), "%q: %v", s, err)
			}
		},
		"a member token stops with its member": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			_, token, err := e.store.CreateMemberToken(ctx, o.ID, o.Bob.ID())
			require.NoError(t, err)
			p, err := e.svc.Authenticate(ctx, token)
			require.NoError(t, err)
			require.NotNil(t, p.Member())
			assert.Equal(t, o.Bob.ID(), p.Member().ID)
			e.deactivate(t, o, o.Bob)
			_, err = e.svc.Authenticate(ctx, token)
			assert.True(t, apperr.Is(err, apperr.Unauthorized), "%v", err)
		},
		"a member token whose member is another organisation's acts as nobody": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			k, token, err := e.store.CreateMemberToken(ctx, o.ID, o.Bob.ID())
			require.NoError(t, err)
			stranger, err := e.store.CreateMember(ctx, testenv.NewOrg(t, e.store).ID, "stranger@example.com", "", "")
			require.NoError(t, err)
			require.NoError(t, e.db.Model(k).Update("member_id", stranger.ID).Error)
			_, err = e.svc.Authenticate(ctx, token)
			assert.True(t, apperr.Is(err, apperr.Unauthorized), "%v", err)
			assert.Contains(t, err.Error(), "is gone")
		},
	})
}

func TestSessions(t *testing.T) {
	eachDB(t, map[string]func(*testing.T, *env, *org){
		"a session signs its person in until it has been idle too long": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			sess, token, err := e.svc.CreateSession(ctx, o.ID, o.Bob.ID())
			require.NoError(t, err)
			got, p, err := e.svc.LoadSession(ctx, token)
			require.NoError(t, err)
			assert.Equal(t, sess.ID, got.ID)
			assert.Equal(t, o.Bob.ID(), p.ID())

			e.set(t, &models.Session{}, sess.ID, "last_seen_at", models.Now().Add(-models.SessionIdleTimeout))
			_, _, err = e.svc.LoadSession(ctx, token)
			assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
		},
		"a session ends at its lifetime however recently used": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			sess, token, err := e.svc.CreateSession(ctx, o.ID, o.Gus.ID())
			require.NoError(t, err)
			e.set(t, &models.Session{}, sess.ID, "expires_at", models.Now().Add(-time.Second))
			_, _, err = e.svc.LoadSession(ctx, token)
			assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
		},
		"a touch writes at most once a minute and pushes the idle end back": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			sess, token, err := e.svc.CreateSession(ctx, o.ID, o.Bob.ID())
			require.NoError(t, err)
			seen := sess.LastSeenAt
			require.NoError(t, e.svc.TouchSession(ctx, sess))
			assert.Equal(t, seen, sess.LastSeenAt, "within the minute: no write")
			var row models.Session
			require.NoError(t, e.db.Where("id = ?", sess.ID).Take(&row).Error)
			assert.True(t, row.LastSeenAt.Equal(seen), "nothing written")

			past := models.Now().Add(-models.SessionIdleTimeout + time.Hour)
			e.set(t, &models.Session{}, sess.ID, "last_seen_at", past)
			got, _, err := e.svc.LoadSession(ctx, token)
			require.NoError(t, err)
			require.NoError(t, e.svc.TouchSession(ctx, got))
			got, _, err = e.svc.LoadSession(ctx, token)
			require.NoError(t, err)
			assert.WithinDuration(t, time.Now().Add(models.SessionIdleTimeout), got.EndsAt(), 5*time.Second)
		},
		"deactivation ends a session and refuses a new one": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			_, token, err := e.svc.CreateSession(ctx, o.ID, o.Cy.ID())
			require.NoError(t, err)
			e.deactivate(t, o, o.Cy)
			_, _, err = e.svc.LoadSession(ctx, token)
			assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
			_, _, err = e.svc.CreateSession(ctx, o.ID, o.Cy.ID())
			assert.ErrorIs(t, err, accounts.ErrPersonInactive)
		},
		"deleting a session signs it out, and again is no error": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			sess, token, err := e.svc.CreateSession(ctx, o.ID, o.Bob.ID())
			require.NoError(t, err)
			require.NoError(t, e.svc.DeleteSession(ctx, o.ID, sess.ID))
			_, _, err = e.svc.LoadSession(ctx, token)
			assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
			require.NoError(t, e.svc.DeleteSession(ctx, o.ID, sess.ID))
		},
	})
}

func TestSignInLinks(t *testing.T) {
	eachDB(t, map[string]func(*testing.T, *env, *org){
		"a link is peeked at freely and used once": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			ann := e.member(t, o, "ann")
			links, err := e.svc.CreateSignInLinks(ctx, strings.ToUpper(ann.Email()))
			require.NoError(t, err)
			require.Len(t, links, 1)
			token := links[0].Token
			for range 2 {
				p, err := e.svc.PeekSignInLink(ctx, token)
				require.NoError(t, err)
				assert.Equal(t, ann.ID(), p.ID())
			}

			var wg sync.WaitGroup
			errs := make([]error, 3)
			for i := range errs {
				wg.Go(func() { _, errs[i] = e.svc.ConsumeSignInLink(ctx, token) })
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				if err == nil {
					won++
				} else {
					assert.ErrorIs(t, err, accounts.ErrSignInLinkUsed)
				}
			}
			assert.Equal(t, 1, won, "of racing uses one wins")
			_, err = e.svc.PeekSignInLink(ctx, token)
			assert.ErrorIs(t, err, accounts.ErrSignInLinkUsed)
			for _, bad := range []string{"not-a-token", ""} {
				_, err = e.svc.ConsumeSignInLink(ctx, bad)
				assert.ErrorIs(t, err, accounts.ErrSignInLinkInvalid)
			}
		},
		"an unknown address gets no link and no error": func(t *testing.T, e *env, o *org) {
			links, err := e.svc.CreateSignInLinks(context.Background(), address(o, "nobody"))
			require.NoError(t, err)
			assert.Empty(t, links)
		},
		"an expired link is refused": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			ann := e.member(t, o, "ann")
			links, err := e.svc.CreateSignInLinks(ctx, ann.Email())
			require.NoError(t, err)
			require.Len(t, links, 1)
			require.NoError(t, e.db.Model(&models.SignInLink{}).Where("token_hash = ?", models.HashSecret(links[0].Token)).
				Update("expires_at", models.Now().Add(-time.Second)).Error)
			_, err = e.svc.ConsumeSignInLink(ctx, links[0].Token)
			assert.ErrorIs(t, err, accounts.ErrSignInLinkExpired)
		},
		"a link stops working when its member is deactivated": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			ann := e.member(t, o, "ann")
			links, err := e.svc.CreateSignInLinks(ctx, ann.Email())
			require.NoError(t, err)
			require.Len(t, links, 1)
			e.deactivate(t, o, ann)
			_, err = e.svc.ConsumeSignInLink(ctx, links[0].Token)
			assert.ErrorIs(t, err, accounts.ErrPersonInactive)
			links, err = e.svc.CreateSignInLinks(ctx, ann.Email())
			require.NoError(t, err)
			assert.Empty(t, links, "no new link for a deactivated member")
		},
		"an issued link is the emailed link's kind": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			l, err := e.svc.IssueSignInLink(ctx, o.Gus)
			require.NoError(t, err)
			p, err := e.svc.ConsumeSignInLink(ctx, l.Token)
			require.NoError(t, err)
			assert.Equal(t, o.Gus.ID(), p.ID())
			_, err = e.svc.ConsumeSignInLink(ctx, l.Token)
			assert.ErrorIs(t, err, accounts.ErrSignInLinkUsed)
		},
	})
}

func TestPeopleByEmail(t *testing.T) {
	eachDB(t, map[string]func(*testing.T, *env, *org){
		"single sign-on finds the address's active members and guests in every organisation": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			ann := e.member(t, o, "ann")
			other := testenv.NewPeople(t, e.store, "agent")
			_, _, err := e.store.CreateGuest(ctx, other.ID, ann.Email(), "Ann")
			require.NoError(t, err)
			third := testenv.NewPeople(t, e.store, "agent")
			m, err := e.store.CreateMember(ctx, third.ID, ann.Email(), "Ann", "")
			require.NoError(t, err)
			e.deactivate(t, third, &models.Person{Member: m})

			people, err := e.svc.SingleSignOn(ctx, strings.ToUpper(ann.Email()))
			require.NoError(t, err)
			require.Len(t, people, 2, "the deactivated member is left out")
			assert.Equal(t, ann.ID(), people[0].ID(), "members first")
			assert.Equal(t, o.ID, people[0].Organization.ID)
			assert.NotNil(t, people[1].Guest)
			assert.Equal(t, other.ID, people[1].Organization.ID)
		},
		"single sign-on says why nobody may sign on": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			_, err := e.svc.SingleSignOn(ctx, address(o, "nobody"))
			assert.ErrorIs(t, err, accounts.ErrNoAccount)
			ann := e.member(t, o, "ann")
			e.deactivate(t, o, ann)
			_, err = e.svc.SingleSignOn(ctx, ann.Email())
			assert.ErrorIs(t, err, accounts.ErrPersonInactive)
		},
		"the member match takes active members of the organisation only": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			ann := e.member(t, o, "ann")
			m, err := e.svc.ActiveMemberByEmail(ctx, o.ID, strings.ToUpper(ann.Email()))
			require.NoError(t, err)
			assert.Equal(t, ann.ID(), m.ID)
			assert.Equal(t, o.ID, m.OrgID(), "the actor carries its organisation")
			assert.True(t, m.IsPerson)

			other := testenv.NewPeople(t, e.store, "agent")
			for _, c := range []struct{ org, email string }{
				{other.ID, ann.Email()},      // another organisation's
				{o.ID, o.Dee.Email()},        // deactivated
				{o.ID, o.Gus.Email()},        // a guest
				{o.ID, address(o, "nobody")}, // nobody's
			} {
				_, err := e.svc.ActiveMemberByEmail(ctx, c.org, c.email)
				assert.True(t, apperr.Is(err, apperr.NotFound), "%s: %v", c.email, err)
			}
		},
	})
}
