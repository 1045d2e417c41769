// Package delegations is a member's delegation while away: who stands in
// for them, from when until when. Its rules are here (who may be named,
// the times, no cycle); what a delegation changes is elsewhere, each in
// one place: requests made while it holds ask the delegate instead
// (requests.StandIns: at creation, and for an escalation when it fires),
// requests already waiting gain the delegate through their workflows
// (Start, through each kind's AddDelegate), and the delegate acts on the
// delegator's behalf (workflows' OnBehalfOf). Who a request may go to is
// requests.Handover's.
package delegations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// Delegation is a member's delegation, its members filled in.
type Delegation = models.Delegation

// SetInput is a delegation as a member sets it: to another active member
// of the organisation (an email or a member id, as a request names
// people), from (default now) until.
type SetInput struct {
	To    string  `json:"to" validate:"required,max=320"`
	From  *string `json:"from" nullable:"true"`
	Until string  `json:"until" validate:"required"`
	Note  string  `json:"note" validate:"max=2000"`
}

// Asker asks who stands in for a person away (in away, the delegations
// holding now) on a kind's open records still waiting on them, each
// record as it allows; the approvals, collections and reviews services
// are each one (requests.Lifecycle.AddDelegate).
type Asker interface {
	// Kind names the kind (events.RequestApproval, …).
	Kind() string
	AddDelegate(ctx context.Context, orgID string, ids []string, updateID, delegatorID string, away map[string]models.Delegation) error
}

// Store is what the service reads and writes through.
type Store interface {
	Tx(ctx context.Context, fn func(ctx context.Context) error) error
	LockOrganization(ctx context.Context, orgID string) error
	NextSeq(ctx context.Context, orgID, subjectID string) (int, error)
	Audit(ctx context.Context, e *models.AuditEntry) error
	OtherDelegations(ctx context.Context, orgID, delegatorID string) ([]models.Delegation, error)
	ReplaceDelegation(ctx context.Context, d *models.Delegation) error
	DeleteDelegation(ctx context.Context, orgID, delegatorID string) (bool, error)
	Delegation(ctx context.Context, orgID, delegatorID string) (*models.Delegation, error)
	DelegationsTo(ctx context.Context, orgID, delegateID string) ([]models.Delegation, error)
	UnstartedDelegations(ctx context.Context, now time.Time, limit int) ([]models.Delegation, error)
	MarkDelegationStarted(ctx context.Context, d *models.Delegation) error
	People(ctx context.Context, orgID string, personIDs []string) ([]*models.Person, error)
	WaitingOn(ctx context.Context, orgID, personID string) (models.Waiting, error)
	requests.Directory
}

// Service sets, reads and ends delegations, and starts them: hands the
// requests already waiting on the delegator to the delegate.
type Service struct {
	store Store
	log   *slog.Logger
	// kinds hand each kind's waiting requests over, by kind.
	kinds map[string]Asker
}

// New returns the service; kinds are the request kinds' services, which
// hand each kind's waiting requests over.
func New(store Store, log *slog.Logger, kinds ...Asker) *Service {
	if log == nil {
		log = slog.Default()
	}
	s := &Service{store: store, log: log, kinds: map[string]Asker{}}
	for _, k := range kinds {
		s.kinds[k.Kind()] = k
	}
	return s
}

// toRole resolves the member named in "to": one active member, never a
// guest or a team.
var toRole = requests.Role{Field: "to", Unknown: apperr.InvalidRequest, Ambiguous: apperr.InvalidRequest,
	GuestRefusal: "a guest; only a member of the organisation can stand in for you"}

// Set stores who's delegation (replacing any) and, when it holds now,
// hands the requests waiting on them to who stands in. A delegation
// leading back to who (A to B while B is away to A, at overlapping
// times) is refused, naming the cycle.
func (s *Service) Set(ctx context.Context, who models.Actor, in SetInput) (*Delegation, error) {
	me, err := member(who)
	if err != nil {
		return nil, err
	}
	if err := validate.Struct(&in); err != nil {
		return nil, err
	}
	now := models.Now()
	d := &Delegation{OrganizationID: me.OrganizationID, DelegatorID: me.ID, From: now, Note: strings.TrimSpace(in.Note)}
	if in.From != nil {
		if d.From, err = requests.Timestamp("from", *in.From); err != nil {
			return nil, err
		}
	}
	if d.Until, err = requests.Timestamp("until", in.Until); err != nil {
		return nil, err
	}
	switch {
	case !d.Until.After(d.From):
		return nil, apperr.Field(apperr.InvalidRequest, "until", "until must be after from")
	case !d.Until.After(now):
		return nil, apperr.Field(apperr.InvalidRequest, "until", "until must be in the future")
	}
	to, err := s.delegate(ctx, me, in.To)
	if err != nil {
		return nil, err
	}
	d.DelegateID, d.Delegator, d.Delegate = to.ID, me, &models.Member{ID: to.ID, Name: to.Name}
	if err := s.set(ctx, me, d); err != nil {
		return nil, err
	}
	if d.ActiveAt(models.Now()) {
		// Should this fail (no workflow service, say), the reconciler
		// starts it later.
		if err := s.Start(ctx, d); err != nil {
			s.log.Error("hand waiting requests to a delegate", "organization", d.OrganizationID, "delegator", d.DelegatorID, "error", err)
		}
	}
	return d, nil
}

// delegate is the member ref names: one active member other than me.
func (s *Service) delegate(ctx context.Context, me *models.Member, ref string) (requests.Match, error) {
	matches, err := requests.ResolveEach(ctx, s.store, me.OrganizationID, []string{ref}, toRole)
	if err != nil {
		return requests.Match{}, err
	}
	switch m := matches[0]; {
	case m.Kind != models.ApproverMember:
		return m, apperr.Field(apperr.InvalidRequest, "to", "to must name one member (an email or a member id), not %s", m.Name)
	case m.ID == me.ID:
		return m, apperr.Field(apperr.InvalidRequest, "to", "to must name someone other than you")
	default:
		return m, nil
	}
}

// cycle is the chain by which d would lead back to its delegator, by
// names (Ann → Bob → Cy → Ann), or nil. Each step follows the next
// delegation at times overlapping all the steps before it: delegations
// that never hold together make no cycle.
func cycle(others []Delegation, d *Delegation) []string {
	byDelegator := map[string]*Delegation{}
	for i := range others {
		byDelegator[others[i].DelegatorID] = &others[i]
	}
	path := []string{d.DelegatorName(), d.DelegateName()}
	from, until := d.From, d.Until
	seen := map[string]bool{d.DelegatorID: true}
	for at := d.DelegateID; at != d.DelegatorID; {
		next, ok := byDelegator[at]
		if !ok || seen[at] || !next.From.Before(until) || !from.Before(next.Until) {
			return nil
		}
		seen[at] = true
		from, until = later(from, next.From), earlier(until, next.Until)
		path = append(path, next.DelegateName())
		at = next.DelegateID
	}
	return path
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Mine is who's own delegation not yet over (nil when none) and those
// not yet over that name them.
func (s *Service) Mine(ctx context.Context, who models.Actor) (*Delegation, []Delegation, error) {
	me, err := member(who)
	if err != nil {
		return nil, nil, err
	}
	d, err := s.store.Delegation(ctx, me.OrganizationID, me.ID)
	if err != nil {
		return nil, nil, err
	}
	toMe, err := s.store.DelegationsTo(ctx, me.OrganizationID, me.ID)
	return d, toMe, err
}

// End ends who's delegation at once: requests made (and escalations
// firing) from now on ask them again. Nobody is taken off a request: one
// made meanwhile keeps asking only the delegate, one handed over keeps
// both.
func (s *Service) End(ctx context.Context, who models.Actor) error {
	me, err := member(who)
	if err != nil {
		return err
	}
	return s.store.Tx(ctx, func(ctx context.Context) error {
		if err := s.store.LockOrganization(ctx, me.OrganizationID); err != nil {
			return err
		}
		ended, err := s.store.DeleteDelegation(ctx, me.OrganizationID, me.ID)
		if err != nil || !ended {
			return err
		}
		return s.step(ctx, me, "delegation_ended", "", models.Now())
	})
}

// set stores d in place of me's delegation, if any, unless it would close
// a cycle with the organisation's other delegations not yet over. The
// organisation's row is locked meanwhile, so two delegations set at once
// cannot make a cycle neither saw.
func (s *Service) set(ctx context.Context, me *models.Member, d *Delegation) error {
	return s.store.Tx(ctx, func(ctx context.Context) error {
		if err := s.store.LockOrganization(ctx, d.OrganizationID); err != nil {
			return err
		}
		others, err := s.store.OtherDelegations(ctx, d.OrganizationID, d.DelegatorID)
		if err != nil {
			return err
		}
		if path := cycle(others, d); path != nil {
			return apperr.Field(apperr.DelegationCycle, "to",
				"to leads back to you at overlapping times (%s): one of those delegations must end first", strings.Join(path, " → "))
		}
		now := models.Now()
		d.CreatedAt, d.UpdatedAt, d.StartedAt = now, now, nil
		if err := s.store.ReplaceDelegation(ctx, d); err != nil {
			return err
		}
		detail := fmt.Sprintf("%s stands in from %s until %s", d.DelegateName(), d.From.Format(time.RFC3339), d.Until.Format(time.RFC3339))
		return s.step(ctx, me, "delegation_set", detail, now)
	})
}

// step audits a step of me's delegation, numbered under the organisation's
// row lock.
func (s *Service) step(ctx context.Context, me *models.Member, action, detail string, at time.Time) error {
	seq, err := s.store.NextSeq(ctx, me.OrganizationID, me.ID)
	if err != nil {
		return err
	}
	return s.store.Audit(ctx, models.DelegationAudit(me.OrganizationID, me, seq, action, detail, at))
}

// member is the member who acts: a delegation is a member's own.
func member(who models.Actor) (*models.Member, error) {
	p, err := accounts.ActingPerson(who, "a delegation")
	if err != nil {
		return nil, err
	}
	if p.Member == nil {
		return nil, apperr.New(apperr.Forbidden, "only a member of the organisation can delegate")
	}
	return p.Member, nil
}

// Start hands the requests still waiting on d's delegator to who stands
// in for them now (the end of their chain, short of anyone a request may
// not go to: requests.Handover), through each request's workflow, as an
// escalation adds approvers; the delegate is emailed. It is applied once
// per delegation, however often it runs.
func (s *Service) Start(ctx context.Context, d *Delegation) error {
	away, err := s.store.ActiveDelegations(ctx, d.OrganizationID, models.Now())
	if err != nil {
		return err
	}
	if chain := requests.Chain(away, d.DelegatorID); len(chain) > 0 {
		if err := s.handOver(ctx, d, away, chain[len(chain)-1]); err != nil {
			return err
		}
	}
	return s.store.MarkDelegationStarted(ctx, d)
}

// handOver asks each request waiting on d's delegator to take who stands
// in for them; to, the end of their chain, names the Update.
func (s *Service) handOver(ctx context.Context, d *Delegation, away map[string]Delegation, to string) error {
	waiting, err := s.store.WaitingOn(ctx, d.OrganizationID, d.DelegatorID)
	if err != nil {
		return err
	}
	people, err := s.store.People(ctx, d.OrganizationID, []string{d.DelegatorID, to})
	if err != nil {
		return err
	}
	if len(people) < 2 {
		return nil // either left the organisation meanwhile
	}
	id := requests.HandoverID(*d, to)
	var errs []error
	for kind, ids := range waiting {
		if k := s.kinds[kind]; k != nil {
			errs = append(errs, k.AddDelegate(ctx, d.OrganizationID, ids, id, d.DelegatorID, away))
		}
	}
	return errors.Join(errs...)
}

// Kind names delegations in the reconciler's logs.
func (s *Service) Kind() string { return "delegation" }

// StartUnowned starts the delegations whose time came before olderThan
// that no call started (one set to begin later, or whose start failed),
// at most batch; the reconciler runs it with the request kinds. It counts
// none as started: starting a delegation set to begin later is its usual
// path, not a lost workflow start the reconciler warns of.
func (s *Service) StartUnowned(ctx context.Context, olderThan time.Time, batch int) (int, error) {
	due, err := s.store.UnstartedDelegations(ctx, olderThan, batch)
	if err != nil {
		return 0, err
	}
	var errs []error
	for i := range due {
		// One that fails (a workflow not answering) waits for the next
		// round without holding up the others.
		errs = append(errs, s.Start(ctx, &due[i]))
	}
	return 0, errors.Join(errs...)
}
