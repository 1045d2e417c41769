// Package temporalenv gives a test the real workflow engine without a
// server of its own: a namespace of its own on the test binary's one
// in-process Temporal server, with Assent's worker running there over the
// test's store. It lives apart from testenv so that tests which only open
// a database do not link the Temporal server.
package temporalenv

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/protobuf/types/known/durationpb"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/tracing/otelsetup"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/worker"
)

// server is started by the first test that needs it and runs until the
// test binary exits; it keeps its state in memory.
var server = sync.OnceValue(func() string { return temporaltest.NewServer().GetFrontendHostPort() })

// Client returns a client on a fresh namespace of the shared server, with
// the search attributes registered; it closes when t ends. Namespaces keep
// each test's workflows to its own worker, so tests on different databases
// may run at once.
func Client(t testing.TB) client.Client {
	t.Helper()
	c, _ := ClientIn(t)
	return c
}

// ClientIn is Client with the name of its namespace.
func ClientIn(t testing.TB) (client.Client, string) {
	t.Helper()
	ctx := context.Background()
	hostPort := server()
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	ns := fmt.Sprintf("test-%d", rand.Int64())
	admin, err := client.Dial(client.Options{HostPort: hostPort, Logger: quiet})
	require.NoError(t, err)
	_, err = admin.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)})
	admin.Close()
	require.NoError(t, err)
	// Traced when the test has turned tracing on (tracing.Install).
	c, err := client.Dial(otelsetup.TemporalClient(client.Options{HostPort: hostPort, Namespace: ns, Logger: quiet}))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.NoError(t, worker.RegisterSearchAttributes(ctx, c, ns))
	return c, ns
}

// Worker returns Client(t) with Assent's worker running over store until
// t ends.
func Worker(t testing.TB, store *models.Store) client.Client {
	t.Helper()
	c := Client(t)
	Run(t, c, worker.Deps{Store: store, BaseURL: "http://assent.test"})
	return c
}

// Run runs Assent's worker with d on c until t ends.
func Run(t testing.TB, c client.Client, d worker.Deps) {
	t.Helper()
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Kinds == nil {
		d.Kinds = app.Workers()
	}
	w := worker.New(c, d)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
}

// EachDB runs each of tests on SQLite and on PostgreSQL: per database one
// store, one worker over it (Worker) and the services build makes, the
// tests on them in parallel, each in an organisation of its own (newOrg).
func EachDB[E, O any](t *testing.T, build func(t *testing.T, store *models.Store, c client.Client) E,
	newOrg func(e E, t *testing.T) O, tests map[string]func(t *testing.T, e E, o O)) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		store := models.NewStore(db, testenv.Keys())
		e := build(t, store, Worker(t, store))
		for name, test := range tests {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				test(t, e, newOrg(e, t))
			})
		}
	})
}

// Service is a request kind's service (approvals, collections, reviews)
// as Started reads it.
type Service[T any] interface {
	Get(ctx context.Context, orgID, id string) (*T, error)
	Head(rec *T) requests.Head
}

// Started is rec, which a create just answered with err, as it is read
// once its workflow has written its first step.
func Started[T any](t testing.TB, svc Service[T], rec *T, err error) *T {
	t.Helper()
	require.NoError(t, err)
	h := svc.Head(rec)
	require.Eventually(t, func() bool {
		got, err := svc.Get(context.Background(), h.OrganizationID, h.ID)
		if err == nil && svc.Head(got).Started {
			rec = got
			return true
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "the workflow writes the created step")
	return rec
}

// KindEnv is one database with a request kind's service (S) over it, and
// a worker of its own running the workflows, for the kind's own tests.
type KindEnv[S any] struct {
	Store *models.Store
	Svc   S
}

// EachKindDB runs each of tests on SQLite and on PostgreSQL (EachDB)
// with the service newSvc makes, each test in an organisation of its own
// whose agent is named agent.
func EachKindDB[S any](t *testing.T, newSvc func(requests.Deps) S, agent string,
	tests map[string]func(t *testing.T, e *KindEnv[S], o *testenv.People)) {
	EachDB(t, func(t *testing.T, store *models.Store, c client.Client) *KindEnv[S] {
		return &KindEnv[S]{Store: store, Svc: newSvc(requests.Deps{Store: store, Temporal: c, Logger: slog.New(slog.DiscardHandler)})}
	}, func(e *KindEnv[S], t *testing.T) *testenv.People { return testenv.NewPeople(t, e.Store, agent) }, tests)
}
