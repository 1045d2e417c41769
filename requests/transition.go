package requests

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/workflows"
)

// This file holds what every kind's activities share: what they reach,
// the write, who acted, and the delegates a workflow added.

// ActivityEnv is what the activities reach: each kind's Activities, and
// the worker's own (package activities), embed it. It carries the whole
// store, one value for them all.
type ActivityEnv struct {
	Store  *models.Store
	Notify *notify.Notifier
	// BaseURL makes page urls in event data.
	BaseURL string
}

// A Worker is what a request kind runs in the worker: its workflow, by
// the type name its histories carry, and the struct whose methods are its
// activities, made from what every kind's activities reach and where
// outbound requests may go.
type Worker struct {
	WorkflowType string
	Workflow     any
	Activities   func(env ActivityEnv, policy *netguard.Policy) any
}

// PersistTransition is a kind's persist activity: it writes one transition
// of a request (its record T, its state S): the record, its audit entry
// and its outbox event, in one transaction (Persist). A retry of a
// transition already written changes nothing. fill copies the state onto
// the record; data is the event's data, the kind's wire serializer. For a
// transition that asks by email (AskByEmail), ask then emails the people
// the record as written asks (askByEmail).
func PersistTransition[T any, S workflows.RequestState](ctx context.Context, j Journal, recs Writable[T],
	t workflows.Transition[S], fill func(*T, *workflows.Transition[S]) error, data func(*T) any,
	ask func(ctx context.Context, rec *T) error) (workflows.Persisted, error) {
	wrote := false
	rec, err := Persist(ctx, j, recs, Change[T]{
		OrganizationID: t.OrganizationID,
		ID:             t.RequestID,
		Seq:            t.Seq,
		Apply: func(rec *T) (models.AuditEntry, error) {
			wrote = true
			if err := fill(rec, &t); err != nil {
				return models.AuditEntry{}, err
			}
			return models.AuditEntry{Action: t.Action, ActorID: t.ActorID, ActorName: t.ActorName, Detail: t.Detail, At: t.At}, nil
		},
		Event:     t.Event,
		EventData: func(rec *T) ([]byte, error) { return json.Marshal(data(rec)) },
	})
	if errors.Is(err, models.ErrRequestMissing) {
		return workflows.Persisted{}, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrRequestMissing, err)
	}
	if err != nil || !t.AskByEmail {
		return workflows.Persisted{}, err
	}
	if wrote {
		// Its emails follow its write, which this attempt made: none went.
		ctx = notify.NoneSent(ctx)
	}
	return workflows.Persisted{Emailed: askByEmail(ctx, func(ctx context.Context) error { return ask(ctx, rec) })}, nil
}

// AskByEmailTimeout bounds the emails a persist activity sends, well
// inside the activity's own timeout: a slow mail server leaves them to the
// email activity, with its retries, rather than hold the write up.
const AskByEmailTimeout = 2 * time.Second

// askByEmail sends the emails of a transition just written, once, and
// reports whether everyone was reached. Each email is sent once whoever
// sends it (notify.Once), so the email activity that follows a failure
// sends only what did not go.
func askByEmail(ctx context.Context, ask func(ctx context.Context) error) bool {
	ctx, cancel := context.WithTimeout(ctx, AskByEmailTimeout)
	defer cancel()
	if err := ask(ctx); err != nil {
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Info("emails left to the email activity", "error", err)
		}
		return false
	}
	return true
}

// NameActor completes who acted where the workflow could not know it:
// Assent for what its timers did, the requester (requester, requestedBy)
// for what names nobody or them.
func NameActor[S workflows.RequestState](t *workflows.Transition[S], requester, requestedBy string) {
	switch {
	case t.Action == workflows.ActionExpired || t.Action == workflows.ActionReminded || t.Action == workflows.ActionEscalated:
		t.ActorID, t.ActorName = models.SystemActor.ID, models.SystemActor.Name
	case t.ActorID == "" || t.ActorID == requester:
		t.ActorID, t.ActorName = requester, requestedBy
	}
}

// WithDelegates is asked with each delegate a workflow added since (in ids,
// standing in as onBehalfOf says, not yet among asked), reached through
// field by a delegation; the store fills in their names (Requests.Save).
func WithDelegates(asked []models.PersonRef, ids []string, onBehalfOf map[string]workflows.Delegator, field string) []models.PersonRef {
	for _, id := range ids {
		d, ok := onBehalfOf[id]
		if !ok || slices.ContainsFunc(asked, func(p models.PersonRef) bool { return p.ID == id }) {
			continue
		}
		asked = append(asked, models.PersonRef{ID: id, Via: []models.Via{{Field: field, Kind: models.ViaDelegation, ID: d.ID, Name: d.Name}}})
	}
	return asked
}
