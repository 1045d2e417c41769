package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/delegations"
	"github.com/assent-hq/assent/flows"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/publishscan"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/wire"
)

// The contract every request kind keeps, whatever it asks of people: one
// table of kinds, one suite run over each, on both databases, with the
// services as app.Build makes them and a worker running their workflows.
// A new kind joins the table (the suite fails while a registered kind
// has no row); what the suite checks it need not test again beside its
// service.

// kind is one request kind as the suite drives it, over its record T.
type kind[T any] struct {
	// name is the kind's, as events and flows name it.
	name string
	life *requests.Lifecycle[T]
	head func(*T) requests.Head
	// create asks Bob for something as m says.
	create func(ctx context.Context, o *kindOrg, m made) (*T, error)
	// act is what Bob does that settles it alone, as settled, with the
	// event settledEvent and the audit action acted.
	act                 func(ctx context.Context, o *kindOrg, id string) error
	settled             string
	settledEvent, acted string
	// list lists the organisation's requests of the kind with status, as
	// the agent that made them.
	list func(ctx context.Context, o *kindOrg, status string) ([]*T, error)
	// remove takes personID off the open requests ids, as an
	// administrator's removal of them from the organisation does.
	remove func(ctx context.Context, orgID string, by models.Actor, personID, name string, ids []string) error
	// open is the status of a request waiting; requested and expired are
	// the kind's events on creation and expiry.
	open, requested, expired string
}

// made is how the suite makes a request: expiring after expires (zero:
// the default), in the flow flowID names (nil: none).
type made struct {
	expires time.Duration
	flowID  *string
}

// Get and Head read the kind's requests as temporalenv.Started does.
func (k kind[T]) Get(ctx context.Context, orgID, id string) (*T, error) {
	return k.life.Get(ctx, orgID, id)
}
func (k kind[T]) Head(rec *T) requests.Head { return k.head(rec) }

// pointers points at each of recs.
func pointers[T any](recs []T) []*T {
	out := make([]*T, len(recs))
	for i := range recs {
		out[i] = &recs[i]
	}
	return out
}

// kindOrg is one organisation's people, and a report Bob, Cy and Gus read.
type kindOrg struct {
	*testenv.People
}

var kindScanner = sync.OnceValues(publishscan.New)

func TestEveryKindKeepsTheRequestContract(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		store := models.NewStore(db, testenv.Keys())
		blobs, err := blobstore.Open(context.Background(), "", t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { blobs.Close() })
		sc, err := kindScanner()
		require.NoError(t, err)
		svc := app.Build(app.Deps{Store: store, Temporal: temporalenv.Worker(t, store), Blobs: blobs, Scanner: sc,
			Logger: slog.New(slog.DiscardHandler), BaseURL: "http://assent.test"})
		newOrg := func(t *testing.T) *kindOrg {
			o := &kindOrg{testenv.NewPeople(t, store, "contract agent")}
			page := "<!doctype html><title>Q3</title><p>Revenue rose 4% in EMEA.</p>"
			slug := "q3"
			_, v, err := svc.Reports.Create(context.Background(), o.Agent, &reports.CreateInput{Title: "Q3", Slug: &slug,
				Source: reports.Source{Content: &page}, Audience: []string{"bob@example.com", "cy@example.com", "gus@partner.example"}}, nil)
			require.NoError(t, err)
			require.Equal(t, models.VersionPublished, v.State)
			return o
		}
		expiring := func(d time.Duration) *string {
			if d == 0 {
				return nil
			}
			return new(time.Now().Add(d).UTC().Format(time.RFC3339Nano))
		}

		// Every kind app.Build registers has its row below (each row adds
		// its kind to covered before it pauses for the others).
		var registered, covered []string
		for _, o := range svc.Owned() {
			if _, ok := models.KindNamed(o.Kind()); ok {
				registered = append(registered, o.Kind())
			}
		}
		t.Run("approval", func(t *testing.T) {
			covered = append(covered, events.RequestApproval)
			t.Parallel()
			contract(t, store, svc.Flows, newOrg, kind[approvals.Approval]{name: events.RequestApproval, life: svc.Approvals.Lifecycle, head: svc.Approvals.Head,
				create: func(ctx context.Context, o *kindOrg, m made) (*approvals.Approval, error) {
					return svc.Approvals.Create(ctx, o.Agent, &approvals.CreateInput{Fields: requests.Fields{Title: "Pay supplier 7", ExpiresAt: expiring(m.expires), FlowID: m.flowID}, Approvers: []string{"bob@example.com"}}, nil)
				},
				act: func(ctx context.Context, o *kindOrg, id string) error {
					_, err := svc.Approvals.Decide(ctx, o.ID, id, "", o.Bob.Actor(), approvals.Decision{Decision: "approve"})
					return err
				},
				settled: states.Approved, settledEvent: events.ApprovalApproved, acted: approvals.ActionApproved,
				list: func(ctx context.Context, o *kindOrg, status string) ([]*approvals.Approval, error) {
					recs, _, err := svc.Approvals.List(ctx, o.Agent, models.RequestFilter{Status: status}, models.Page{Limit: 10})
					return pointers(recs), err
				},
				remove: svc.Approvals.RemoveAsked,
				open:   states.Pending, requested: events.ApprovalRequested, expired: events.ApprovalExpired})
		})
		t.Run("collection", func(t *testing.T) {
			covered = append(covered, events.RequestCollection)
			t.Parallel()
			contract(t, store, svc.Flows, newOrg, kind[collections.Collection]{name: events.RequestCollection, life: svc.Collections.Lifecycle, head: svc.Collections.Head,
				create: func(ctx context.Context, o *kindOrg, m made) (*collections.Collection, error) {
					return svc.Collections.Create(ctx, o.Agent, &collections.CreateInput{Fields: requests.Fields{Title: "Q3 budget", ExpiresAt: expiring(m.expires), FlowID: m.flowID}, Respondents: []string{"bob@example.com"},
						Questions: []questions.Input{{ID: "budget", Prompt: "Budget", Kind: questions.Number}}}, nil)
				},
				act: func(ctx context.Context, o *kindOrg, id string) error {
					_, err := svc.Collections.Reply(ctx, o.Bob.Actor(), id, "", collections.ReplyInput{Submit: true,
						Answers: map[string]json.RawMessage{"budget": json.RawMessage("1200")}})
					return err
				},
				settled: states.Complete, settledEvent: events.CollectionCompleted, acted: collections.ActionReplied,
				list: func(ctx context.Context, o *kindOrg, status string) ([]*collections.Collection, error) {
					recs, _, err := svc.Collections.List(ctx, o.Agent, models.RequestFilter{Status: status}, models.Page{Limit: 10})
					return pointers(recs), err
				},
				remove: svc.Collections.RemoveAsked,
				open:   states.Open, requested: events.CollectionRequested, expired: events.CollectionExpired})
		})
		t.Run("review", func(t *testing.T) {
			covered = append(covered, events.RequestReview)
			t.Parallel()
			contract(t, store, svc.Flows, newOrg, kind[reviews.Review]{name: events.RequestReview, life: svc.Reviews.Lifecycle, head: svc.Reviews.Head,
				create: func(ctx context.Context, o *kindOrg, m made) (*reviews.Review, error) {
					return svc.Reviews.Create(ctx, o.Agent, &reviews.CreateInput{Fields: requests.Fields{Title: "Check Q3", ExpiresAt: expiring(m.expires), FlowID: m.flowID}, ReportID: "q3",
						Reviewers: []string{"bob@example.com"}}, nil)
				},
				act: func(ctx context.Context, o *kindOrg, id string) error {
					_, err := svc.Reviews.Verdict(ctx, o.Bob.Actor(), id, "", reviews.VerdictInput{Verdict: "approved"})
					return err
				},
				settled: states.Approved, settledEvent: events.ReviewApproved, acted: reviews.VerdictApproved,
				list: func(ctx context.Context, o *kindOrg, status string) ([]*reviews.Review, error) {
					recs, _, err := svc.Reviews.List(ctx, o.Agent, models.RequestFilter{Status: status}, models.Page{Limit: 10})
					return pointers(recs), err
				},
				remove: svc.Reviews.RemoveAsked,
				open:   states.Open, requested: events.ReviewRequested, expired: events.ReviewExpired})
		})
		assert.ElementsMatch(t, registered, covered, "a kind app.Build registers joins the contract suite's table")
	})
}

// contract runs the suite over one kind, each case in an organisation of
// its own.
func contract[T any](t *testing.T, store *models.Store, flowsSvc *flows.Service, newOrg func(*testing.T) *kindOrg, k kind[T]) {
	ctx := context.Background()
	// started creates a request and waits until its workflow has written
	// its first step.
	started := func(t *testing.T, o *kindOrg, m made) requests.Head {
		t.Helper()
		rec, err := k.create(ctx, o, m)
		return k.head(temporalenv.Started(t, k, rec, err))
	}
	statusOf := func(t *testing.T, o *kindOrg, id string) string {
		t.Helper()
		rec, err := k.life.Get(ctx, o.ID, id)
		require.NoError(t, err)
		return k.head(rec).Status
	}
	waitingOn := func(t *testing.T, o *kindOrg, who *models.Person) []string {
		t.Helper()
		recs, err := k.life.Waiting(ctx, o.ID, who.Actor(), requests.Attention, 10)
		require.NoError(t, err)
		var out []string
		for i := range recs {
			out = append(out, k.head(&recs[i]).ID)
		}
		return out
	}
	eventsOf := func(t *testing.T, o *kindOrg, id string) []string {
		t.Helper()
		evs, err := store.ListEvents(ctx, o.ID, id)
		require.NoError(t, err)
		var out []string
		for _, e := range evs {
			out = append(out, e.Kind)
		}
		return out
	}

	cases := map[string]func(t *testing.T, o *kindOrg){
		"made, it waits on whom it asks and nobody else": func(t *testing.T, o *kindOrg) {
			h := started(t, o, made{})
			assert.Equal(t, []string{o.Bob.ID()}, h.Asked)
			assert.Equal(t, []string{h.ID}, waitingOn(t, o, o.Bob))
			assert.Empty(t, waitingOn(t, o, o.Cy))
			_, err := k.life.Waiting(ctx, o.ID, o.Agent, requests.Attention, 10)
			testenv.Refused(t, err, apperr.Forbidden, "")
			counts, err := k.life.WaitingCounts(ctx, o.ID, o.Bob.Actor(), time.Now().Add(365*24*time.Hour))
			require.NoError(t, err)
			assert.Equal(t, 1, counts.Total)
			assert.Equal(t, []string{k.requested}, eventsOf(t, o, h.ID))

			_, err = k.life.View(ctx, o.Gus.Actor(), h.ID)
			testenv.Refused(t, err, apperr.NotFound, "")
			_, err = k.life.Get(ctx, newOrg(t).ID, h.ID)
			testenv.Refused(t, err, apperr.NotFound, "")
			listed, err := k.list(ctx, o, k.open)
			require.NoError(t, err)
			require.Len(t, listed, 1)
			assert.Equal(t, h.ID, k.head(listed[0]).ID)
			listed, err = k.list(ctx, o, states.Cancelled)
			require.NoError(t, err)
			assert.Empty(t, listed)
			_, err = k.list(ctx, o, "nonsense")
			testenv.Refused(t, err, apperr.InvalidRequest, "status")
		},
		"a person settles it, and a long-poll hears at once": func(t *testing.T, o *kindOrg) {
			h := started(t, o, made{})
			waited := make(chan *T, 1)
			go func() {
				rec, err := k.life.Wait(ctx, o.ID, h.ID, 30*time.Second)
				assert.NoError(t, err)
				waited <- rec
			}()
			time.Sleep(50 * time.Millisecond)
			asked := time.Now()
			require.NoError(t, k.act(ctx, o, h.ID))
			rec := <-waited
			require.NotNil(t, rec)
			assert.Equal(t, k.settled, k.head(rec).Status)
			assert.Less(t, time.Since(asked), 10*time.Second)
			assert.Empty(t, waitingOn(t, o, o.Bob))
			assert.Equal(t, []string{k.requested, k.settledEvent}, eventsOf(t, o, h.ID))

			_, err := k.life.Cancel(ctx, o.ID, h.ID, "", o.Agent)
			testenv.Refused(t, err, apperr.InvalidState, "")
		},
		"its requester cancels it, once": func(t *testing.T, o *kindOrg) {
			h := started(t, o, made{})
			_, err := k.life.Cancel(ctx, o.ID, h.ID, "", o.Bob.Actor())
			testenv.Refused(t, err, apperr.Forbidden, "")

			rec, err := k.life.Cancel(ctx, o.ID, h.ID, "cancel-1", o.Agent)
			require.NoError(t, err)
			assert.Equal(t, states.Cancelled, k.head(rec).Status)
			_, err = k.life.Cancel(ctx, o.ID, h.ID, "cancel-1", o.Agent)
			require.NoError(t, err, "a retried cancel is applied once")
			_, err = k.life.Cancel(ctx, o.ID, h.ID, "cancel-2", o.Agent)
			testenv.Refused(t, err, apperr.InvalidState, "")
			testenv.Refused(t, k.act(ctx, o, h.ID), apperr.InvalidState, "")
			assert.Empty(t, waitingOn(t, o, o.Bob))
			assert.Equal(t, []string{k.requested}, eventsOf(t, o, h.ID), "a cancel sends no event")
		},
		"someone away hands it to who stands in for them": func(t *testing.T, o *kindOrg) {
			h := started(t, o, made{})
			away := map[string]models.Delegation{o.Bob.ID(): {OrganizationID: o.ID, DelegatorID: o.Bob.ID(), DelegateID: o.Cy.ID(),
				Delegator: o.Bob.Member, Delegate: o.Cy.Member}}
			require.NoError(t, k.life.AddDelegate(ctx, o.ID, []string{h.ID}, "delegation-1", o.Bob.ID(), away))
			require.NoError(t, k.life.AddDelegate(ctx, o.ID, []string{h.ID}, "delegation-1", o.Bob.ID(), away), "applied once")
			rec, err := k.life.Get(ctx, o.ID, h.ID)
			require.NoError(t, err)
			assert.Equal(t, []string{o.Bob.ID(), o.Cy.ID()}, k.head(rec).Asked)
			assert.Equal(t, []string{h.ID}, waitingOn(t, o, o.Cy))
		},
		"a person removed from the organisation is no longer asked": func(t *testing.T, o *kindOrg) {
			h := started(t, o, made{})
			require.NoError(t, k.remove(ctx, o.ID, o.Ada.Actor(), o.Bob.ID(), "Bob", []string{h.ID}))
			require.NoError(t, k.remove(ctx, o.ID, o.Ada.Actor(), o.Bob.ID(), "Bob", []string{h.ID}), "a retry does nothing more")
			rec, err := k.life.Get(ctx, o.ID, h.ID)
			require.NoError(t, err)
			assert.False(t, slices.Contains(k.head(rec).Asked, o.Bob.ID()), "%v", k.head(rec).Asked)
			assert.Empty(t, waitingOn(t, o, o.Bob))
		},
		"it joins its flow, which has settled once it has": func(t *testing.T, o *kindOrg) {
			f, err := flowsSvc.Create(ctx, o.Agent, &flows.CreateInput{Title: "Onboarding"})
			require.NoError(t, err)
			h := started(t, o, made{flowID: &f.ID})
			d, err := flowsSvc.Detail(ctx, o.Agent, f.ID)
			require.NoError(t, err)
			members := wire.NewFlow(d, "http://assent.test").Members
			require.Len(t, members, 1)
			assert.Equal(t, k.name, members[0].Type)
			assert.Equal(t, h.ID, members[0].ID)
			assert.False(t, d.AllSettled())

			require.NoError(t, k.act(ctx, o, h.ID))
			d, err = flowsSvc.Detail(ctx, o.Agent, f.ID)
			require.NoError(t, err)
			assert.True(t, d.AllSettled())
			var steps []string
			for _, e := range d.Timeline {
				steps = append(steps, e.SubjectType+":"+e.Action)
			}
			assert.Equal(t, []string{"flow:created", k.name + ":created", k.name + ":" + k.acted}, steps)
		},
		"it expires when its time comes": func(t *testing.T, o *kindOrg) {
			h := started(t, o, made{expires: 3 * time.Second})
			rec, err := k.life.Wait(ctx, o.ID, h.ID, 30*time.Second)
			require.NoError(t, err)
			assert.Equal(t, states.Expired, k.head(rec).Status)
			assert.Equal(t, []string{k.requested, k.expired}, eventsOf(t, o, h.ID))
			testenv.Refused(t, k.act(ctx, o, h.ID), apperr.InvalidState, "")
			assert.Equal(t, states.Expired, statusOf(t, o, h.ID))
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c(t, newOrg(t))
		})
	}
}

// A delegation that begins while a request is being made, after who it
// asks was resolved and before it was written, hands it over too: the
// delegation's own hand-over ran before the request existed.
func TestADelegationBegunWhileARequestIsMadeHandsItOver(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		store := models.NewStore(db, testenv.Keys())
		svc := app.Build(app.Deps{Store: store, Temporal: temporalenv.Worker(t, store), Logger: slog.New(slog.DiscardHandler),
			BaseURL: "http://assent.test"})
		o := testenv.NewPeople(t, store, "agent")
		ctx := context.Background()
		rec, err := svc.Approvals.Lifecycle.Create(ctx, nil, func() (*approvals.Approval, error) {
			// Bob goes away now, Cy standing in: his hand-over finds
			// nothing waiting on him yet.
			_, err := svc.Delegations.Set(ctx, o.Bob.Actor(), delegations.SetInput{To: "cy@example.com",
				Until: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
			return &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: o.ID, Title: "Pay supplier 7",
				ExpiresAt: time.Now().Add(time.Hour).UTC(), Requester: o.Agent.ID, RequestedBy: "agent"},
				Risk: models.RiskLow, RequiredApprovals: 1, Approvers: []string{"bob@example.com"}, ApproverIDs: []string{o.Bob.ID()}}, err
		})
		require.NoError(t, err)
		assert.Equal(t, []string{o.Bob.ID(), o.Cy.ID()}, svc.Approvals.Head(rec).Asked)
		waiting, err := svc.Approvals.Waiting(ctx, o.ID, o.Cy.Actor(), requests.Attention, 10)
		require.NoError(t, err)
		require.Len(t, waiting, 1)
		assert.Equal(t, rec.ID, waiting[0].ID)
	})
}
