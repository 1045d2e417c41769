package reviews_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/publishscan"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
)

// scanner is built once: loading gitleaks' rules takes a while.
var scanner = sync.OnceValues(publishscan.New)

// env is one database with the services over it and a worker of its own
// running their workflows.
type env struct {
	store   *models.Store
	reports *reports.Service
	svc     *reviews.Service
}

// org is one test's people (testenv.People). Its report q3 is shared with
// Bob and Gus, not with Ada or Cy.
type org struct {
	*testenv.People
	q3   *models.Report
	q3v1 *models.ReportVersion
}

// eachDB runs each of tests on SQLite and on PostgreSQL: one database
// and one worker per kind, the tests on it in parallel, each in an
// organisation of its own.
func eachDB(t *testing.T, tests map[string]func(t *testing.T, e *env, o *org)) {
	temporalenv.EachDB(t, func(t *testing.T, store *models.Store, tc client.Client) *env {
		blobs, err := blobstore.Open(context.Background(), "", t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { blobs.Close() })
		sc, err := scanner()
		require.NoError(t, err)
		quiet := slog.New(slog.DiscardHandler)
		rep := reports.New(reports.Deps{Store: store, Temporal: tc, Blobs: blobs, Scanner: sc, Logger: quiet, BaseURL: "http://assent.test"})
		return &env{store: store, reports: rep, svc: reviews.New(requests.Deps{Store: store, Temporal: tc, Logger: quiet}, rep)}
	}, (*env).newOrg, tests)
}

func (e *env) newOrg(t *testing.T) *org {
	t.Helper()
	out := &org{People: testenv.NewPeople(t, e.store, "report agent")}
	out.q3, out.q3v1 = e.publish(t, out, "q3", "bob@example.com", "gus@partner.example")
	return out
}

// publish makes report slug, shared with audience, as o's agent.
func (e *env) publish(t *testing.T, o *org, slug string, audience ...string) (*models.Report, *models.ReportVersion) {
	t.Helper()
	page := "<!doctype html><title>" + slug + "</title><p>Revenue rose 4% in EMEA.</p>"
	r, v, err := e.reports.Create(context.Background(), o.Agent, &reports.CreateInput{Title: "Report " + slug, Slug: &slug,
		Source: reports.Source{Content: &page}, Audience: audience}, nil)
	require.NoError(t, err)
	require.Equal(t, models.VersionPublished, v.State, "%v", v.Findings.V)
	return r, v
}

// check asks Bob and Gus to review q3.
func check() *reviews.CreateInput {
	return &reviews.CreateInput{Fields: requests.Fields{Title: "Check Q3"}, ReportID: "q3", Reviewers: []string{"bob@example.com", "gus@partner.example"}}
}

// started creates in and waits until its workflow has written its first
// step.
func (e *env) started(t *testing.T, o *org, in *reviews.CreateInput) *reviews.Review {
	t.Helper()
	r, err := e.svc.Create(context.Background(), o.Agent, in, nil)
	return temporalenv.Started(t, e.svc, r, err)
}

func TestReviewRules(t *testing.T) {
	eachDB(t, map[string]func(*testing.T, *env, *org){
		"create refuses what build checks": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			old, _ := e.publish(t, o, "old", "bob@example.com")
			_, err := e.reports.Archive(ctx, o.Agent, "old", &reports.ArchiveInput{})
			require.NoError(t, err)
			_, other := e.publish(t, o, "other", "bob@example.com")
			elsewhere := e.newOrg(t)
			held := "<!doctype html><base href=\"https://elsewhere.example/\">"
			_, heldVersion, err := e.reports.Publish(ctx, o.Agent, "q3", &reports.VersionInput{Source: reports.Source{Content: &held}}, nil)
			require.NoError(t, err)
			require.Equal(t, models.VersionHeld, heldVersion.State)
			past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
			with := func(change func(in *reviews.CreateInput)) *reviews.CreateInput {
				in := check()
				change(in)
				return in
			}
			cases := []struct {
				name        string
				in          *reviews.CreateInput
				code, field string
			}{
				{"unknown report", with(func(in *reviews.CreateInput) { in.ReportID = "nope" }), apperr.NotFound, "reportId"},
				{"another organisation's report", with(func(in *reviews.CreateInput) { in.ReportID = elsewhere.q3.ID }), apperr.NotFound, "reportId"},
				{"archived report", with(func(in *reviews.CreateInput) { in.ReportID = old.ID }), apperr.InvalidState, "reportId"},
				{"another report's version", with(func(in *reviews.CreateInput) { in.VersionID = &other.ID }), apperr.NotFound, "versionId"},
				{"unknown version", with(func(in *reviews.CreateInput) { in.VersionID = new("ver_nope") }), apperr.NotFound, "versionId"},
				{"held version", with(func(in *reviews.CreateInput) { in.VersionID = &heldVersion.ID }), apperr.InvalidState, "versionId"},
				{"unknown reviewer", with(func(in *reviews.CreateInput) { in.Reviewers = append(in.Reviewers, "nobody@example.com") }),
					apperr.UnknownReviewer, "reviewers"},
				{"no approval required", with(func(in *reviews.CreateInput) { in.RequiredApprovals = new(0) }), apperr.InvalidRequest, "requiredApprovals"},
				{"more approvals than reviewers", with(func(in *reviews.CreateInput) { in.RequiredApprovals = new(3) }), apperr.InvalidRequest, "requiredApprovals"},
				{"expiresAt in the past", with(func(in *reviews.CreateInput) { in.ExpiresAt = &past }), apperr.InvalidRequest, "expiresAt"},
				{"metadata not an object", with(func(in *reviews.CreateInput) { in.Metadata = json.RawMessage(`"x"`) }), apperr.InvalidRequest, "metadata"},
				{"private callback", with(func(in *reviews.CreateInput) { in.CallbackURL = new("https://127.0.0.1/cb") }), apperr.InvalidCallbackURL, "callbackUrl"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					_, err := e.svc.Create(ctx, o.Agent, c.in, nil)
					testenv.Refused(t, err, c.code, c.field)
				})
			}

			// A reviewer must already read the report, or be an owner or
			// administrator: only those who cannot are named, and the
			// candidates are who may be asked instead, never them.
			_, err = e.svc.Create(ctx, o.Agent, with(func(in *reviews.CreateInput) {
				in.Reviewers = []string{"bob@example.com", "cy@example.com", "ada@example.com"}
			}), nil)
			cannot := testenv.Refused(t, err, apperr.ReviewerCannotRead, "reviewers")
			assert.Contains(t, cannot.Message, "cy@example.com")
			assert.NotContains(t, cannot.Message, "bob@example.com")
			assert.NotContains(t, cannot.Message, "ada@example.com", "an owner may be asked about any report")
			assert.Equal(t, []string{"member Ada <ada@example.com> (" + o.Ada.ID() + ")"}, cannot.Candidates)

			// A person puts under review only what they read.
			cy := models.KeyActor(o.Organization, &models.APIKey{ID: "key_cy", Kind: models.KeyMember}, o.Cy.Member)
			_, err = e.svc.Create(ctx, cy, check(), nil)
			testenv.Refused(t, err, apperr.Forbidden, "")

			list, _, err := e.svc.List(ctx, o.Agent, models.RequestFilter{}, models.Page{Limit: 10})
			require.NoError(t, err)
			assert.Empty(t, list, "no refused create left a record")
		},

		"owners and administrators may be asked about any report": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			admin, err := e.store.CreateMember(ctx, o.ID, "ida@example.com", "Ida", models.RoleAdmin)
			require.NoError(t, err)
			ida := &models.Person{Organization: o.Organization, Member: admin}
			other, _ := e.publish(t, o, "other", "bob@example.com")
			for _, p := range []*models.Person{o.Ada, ida} {
				ok, err := e.store.CanRead(ctx, o.q3, p)
				require.NoError(t, err)
				require.False(t, ok, "q3 is not shared with %s", p.Email())
			}
			r := e.started(t, o, &reviews.CreateInput{Fields: requests.Fields{Title: "Check Q3"}, ReportID: "q3", Reviewers: []string{"ada@example.com", "ida@example.com"}})
			assert.Equal(t, models.StringList{o.Ada.ID(), ida.ID()}, r.ReviewerIDs)
			for _, p := range []*models.Person{o.Ada, ida} {
				ok, err := e.store.CanRead(ctx, o.q3, p)
				require.NoError(t, err)
				assert.True(t, ok, "%s reads the report they are asked to review", p.Email())
				ok, err = e.store.CanRead(ctx, other, p)
				require.NoError(t, err)
				assert.False(t, ok, "and no other")
			}
			_, err = e.svc.Verdict(ctx, ida.Actor(), r.ID, "ida-1", reviews.VerdictInput{Verdict: "approved"})
			require.NoError(t, err)
			done, err := e.svc.Wait(ctx, o.ID, r.ID, 10*time.Second)
			require.NoError(t, err)
			assert.Equal(t, states.Approved, done.Status)
			ok, err := e.store.CanRead(ctx, o.q3, ida)
			require.NoError(t, err)
			assert.True(t, ok, "what they reviewed stays readable once the review is settled")

			// A member no longer an administrator reads it by a grant only.
			ida.Member = testenv.ChangeMember(t, e.store, o.ID, ida.ID(), func(m *models.Member) { m.Role = models.RoleMember })
			ok, err = e.store.CanRead(ctx, o.q3, ida)
			require.NoError(t, err)
			assert.False(t, ok)
			_, err = e.svc.Create(ctx, o.Agent, &reviews.CreateInput{Fields: requests.Fields{Title: "Again"}, ReportID: "q3", Reviewers: []string{"ida@example.com"}}, nil)
			cannot := testenv.Refused(t, err, apperr.ReviewerCannotRead, "reviewers")
			assert.NotContains(t, cannot.Candidates, requests.DescribePerson(ida), "never the person just refused")
			assert.Equal(t, []string{requests.DescribePerson(o.Ada)}, cannot.Candidates)
		},

		"a created review runs until its verdicts settle it": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			in := check()
			in.RequiredApprovals = new(2)
			r := e.started(t, o, in)
			assert.Equal(t, states.Open, r.Status)
			assert.Equal(t, o.q3v1.ID, r.VersionID, "the live version, when none is named")
			assert.Equal(t, models.StringList{o.Bob.ID(), o.Gus.ID()}, r.ReviewerIDs)

			_, err := e.svc.Verdict(ctx, o.Cy.Actor(), r.ID, "cy-1", reviews.VerdictInput{Verdict: "approved"})
			testenv.Refused(t, err, apperr.NotAReviewer, "")
			_, err = e.svc.Verdict(ctx, o.Bob.Actor(), r.ID, "bob-1", reviews.VerdictInput{Verdict: "approved"})
			require.NoError(t, err)
			_, err = e.svc.Verdict(ctx, o.Gus.Actor(), r.ID, "gus-1", reviews.VerdictInput{Verdict: "approved", Note: "  Fine.  "})
			require.NoError(t, err)
			done, err := e.svc.Wait(ctx, o.ID, r.ID, 10*time.Second)
			require.NoError(t, err)
			assert.Equal(t, states.Approved, done.Status)
			assert.Equal(t, 2, done.ApprovalsSoFar)
		},

		"a review pins the version named": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			next := "<!doctype html><p>Version two</p>"
			_, v2, err := e.reports.Publish(ctx, o.Agent, "q3", &reports.VersionInput{Source: reports.Source{Content: &next}}, nil)
			require.NoError(t, err)
			require.Equal(t, models.VersionPublished, v2.State)
			in := check()
			in.VersionID = &o.q3v1.ID
			r := e.started(t, o, in)
			assert.Equal(t, o.q3v1.ID, r.VersionID)
			assert.Equal(t, 1, r.Version)
		},
	})
}
