// Package instance is what belongs to the running instance rather than to
// an organisation: whether it is ready to serve (its database and
// Temporal answer) and the public halves of its signing keys, one set per
// key family, which anyone may fetch to check what it signed offline.
package instance

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/internal/payloadcodec"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/models"
)

// readyTimeout bounds the readiness checks together: a probe that hangs
// is as bad as one that fails.
const readyTimeout = 3 * time.Second

// Service answers for the instance.
type Service struct {
	store    *models.SigningKeyStore
	temporal client.Client
	blobs    Checker
	// stopping is set once the process begins to stop (Stop).
	stopping atomic.Bool
}

// Stop marks the process as stopping: readiness fails from now on, so a
// load balancer sends it nothing new while it finishes what it serves.
func (s *Service) Stop() { s.stopping.Store(true) }

// Checker is a dependency readiness asks: the report file store.
type Checker interface{ Check(context.Context) error }

// New returns the service; temporal is nil where the process has none,
// which readiness reports; blobs is nil where the process keeps no report
// files, and then not checked.
func New(store *models.SigningKeyStore, temporal client.Client, blobs Checker) *Service {
	return &Service{store: store, temporal: temporal, blobs: blobs}
}

// Readiness is what Ready found: each dependency "ok" or "down: …".
type Readiness struct {
	Ready  bool
	Checks map[string]string
}

// Ready checks the database (reachable, every migration this binary
// knows applied), Temporal (reachable, and its namespace not marked for
// another instance's key) and the report file store, and names what is
// down.
func (s *Service) Ready(ctx context.Context) Readiness {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	r := Readiness{Ready: true, Checks: map[string]string{"database": "ok", "temporal": "ok"}}
	down := func(what, why string) {
		r.Checks[what] = "down: " + why
		r.Ready = false
	}
	if s.stopping.Load() {
		down("process", "stopping")
	}
	if err := models.Ping(ctx, s.store.DB()); err != nil {
		down("database", err.Error())
	} else if err := models.RequireMigrated(s.store.DB().WithContext(ctx)); err != nil {
		// A newer binary's migration not run yet: this process must not
		// take traffic it cannot store.
		down("database", err.Error())
	}
	if s.blobs != nil {
		r.Checks["blobs"] = "ok"
		if err := s.blobs.Check(ctx); err != nil {
			down("blobs", err.Error())
		}
	}
	if s.temporal == nil {
		down("temporal", "no client configured")
	} else if _, err := s.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		down("temporal", err.Error())
	} else if err := payloadcodec.CheckMarker(ctx, s.temporal, "", s.store.Keys()); err != nil {
		// Another instance took the namespace since this one started.
		if m, ok := errors.AsType[*payloadcodec.MismatchError](err); ok {
			down("temporal", fmt.Sprintf("the namespace is marked for key %s, which %s lacks: another Assent instance uses it",
				m.Marked, secretkey.Env))
		} else {
			down("temporal", err.Error())
		}
	}
	return r
}

// KeySet lists every key of the family, retired ones included, oldest
// first; the family's first key is made here if none exists yet, so the
// set is never empty.
func (s *Service) KeySet(ctx context.Context, f models.KeyFamily) ([]models.SigningKey, error) {
	if _, _, err := s.store.ActiveSigningKey(ctx, f); err != nil {
		return nil, err
	}
	return s.store.SigningKeys(ctx, f)
}
