package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/assent-hq/assent/flows"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// checkRecord is a check to record with what it writes beside it.
type checkRecord struct {
	check *models.GateCheck
	// by is who asked, for the audit entry.
	by models.Actor
	// denied writes gate.denied beside the check.
	denied bool
	// token, when set, signs the check's decision token (an allow): before
	// the transaction, or within it once a mandate is spent.
	token func(*models.GateCheck) (string, error)
	// spends, when set, are the mandates that may allow the check, in the
	// order to try: the first with budget left is spent in the check's
	// transaction (errSpent when none has).
	spends []spend
}

// spend is a mandate a check may spend, with the amount it would.
type spend struct {
	mandateID string
	amount    float64
}

// errSpent is record's answer when none of the check's mandates has
// budget left: nothing was written.
var errSpent = errors.New("no mandate covering the check has budget left")

// record writes a check, its audit entry and its event in one
// transaction, and binds claim (when not nil) to it. When an earlier
// attempt of the claimed request already recorded a check, or the check's
// approval has its check already, nothing is written and that check is
// returned.
func (s *Service) record(ctx context.Context, r checkRecord, claim *models.Claim) (*models.GateCheck, error) {
	c := r.check
	c.ID, c.CreatedAt = ids.New(ids.GateCheck), models.Now()
	sign := func() error {
		if r.token == nil {
			return nil
		}
		token, err := r.token(c)
		if err != nil {
			return fmt.Errorf("decision token of %s: %w", c.ID, err)
		}
		c.DecisionToken = &token
		return nil
	}
	if len(r.spends) == 0 {
		if err := sign(); err != nil {
			return nil, err
		}
	}
	var earlier string
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		if err := flows.RequireOpen(ctx, s.store, c.OrganizationID, c.FlowID); err != nil {
			return err
		}
		var err error
		if earlier, err = s.store.BindClaim(ctx, claim, c.ID); err != nil || earlier != "" {
			return err
		}
		if len(r.spends) > 0 {
			if c.Mandate, err = s.spend(ctx, c, r.spends, r.by); err != nil {
				return err
			}
			if err := sign(); err != nil {
				return err
			}
		}
		inserted, err := s.store.InsertGateCheck(ctx, c)
		if err != nil || !inserted {
			earlier = "approval"
			return err
		}
		if err := s.store.Audit(ctx, models.GateAudit(c, checkDetail(c), r.by)); err != nil || !r.denied {
			return err
		}
		data, err := json.Marshal(wire.NewGateCheck(c))
		if err != nil {
			return err
		}
		return s.store.Emit(ctx, &models.Event{OrganizationID: c.OrganizationID, Kind: events.GateDenied,
			SubjectType: "gate_check", SubjectID: c.ID, Data: data, CreatedAt: c.CreatedAt})
	})
	switch {
	case err != nil:
		return nil, err
	case earlier == "approval":
		return s.store.GateCheckOfApproval(ctx, c.OrganizationID, *c.ApprovalID)
	case earlier != "":
		return s.store.GetGateCheck(ctx, c.OrganizationID, earlier)
	}
	return c, nil
}

// checkDetail is a check's line in the audit trail.
func checkDetail(c *models.GateCheck) string {
	d := c.Action
	if c.Rule != "" {
		d += " (rule " + c.Rule + ")"
	}
	if c.Reason != "" {
		d += ": " + c.Reason
	}
	if c.Mandate != nil {
		d += "; mandate " + c.Mandate.ID + " granted by " + c.Mandate.GranterName
	}
	if c.ApprovalID != nil {
		d += "; approval " + *c.ApprovalID
	}
	return d
}

// spend spends the first of spends whose mandate is still live and has
// the budget, under the mandate's row lock, so concurrent checks never
// overspend: it records the use of check c and names the mandate on it.
// When the use leaves no budget in the window, the mandate's exhaustion
// is audited and mandate.exhausted written. None with budget left is
// errSpent.
func (s *Service) spend(ctx context.Context, c *models.GateCheck, spends []spend, by models.Actor) (*models.Mandate, error) {
	for _, sp := range spends {
		m, err := s.store.LockMandate(ctx, c.OrganizationID, sp.mandateID, c.CreatedAt)
		if err != nil {
			return nil, err
		}
		if !m.LiveAt(c.CreatedAt) || !m.Covers(m.Usage, sp.amount) {
			continue
		}
		use := &models.MandateUse{OrganizationID: c.OrganizationID, MandateID: m.ID, GateCheckID: c.ID,
			FlowID: c.FlowID, Amount: sp.amount, CreatedAt: c.CreatedAt}
		if err := s.store.InsertMandateUse(ctx, use); err != nil {
			return nil, err
		}
		m.Usage.Uses++
		m.Usage.WindowCount++
		m.Usage.WindowSum += sp.amount
		c.MandateID = &m.ID
		if m.Status() == models.MandateExhausted {
			// The detail names no check: the entry is on the timeline of
			// every flow that used the mandate, and the check may be
			// another flow's.
			if err := s.mandateStep(ctx, m, by, events.MandateExhausted, "exhausted",
				"mandate "+m.ID+" for "+m.Action+" has no budget left in its window", c.CreatedAt); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	return nil, errSpent
}

// create writes a mandate, its audit entry and mandate.granted in one
// transaction. An approval grants one mandate: a second for it writes
// nothing, and *m becomes the first.
func (s *Service) create(ctx context.Context, by models.Actor, m *models.Mandate) error {
	m.ID, m.CreatedAt = ids.New(ids.Mandate), models.Now()
	m.Usage = models.MandateUsage{At: m.CreatedAt}
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		if err := s.store.InsertMandate(ctx, m); err != nil {
			return err
		}
		return s.mandateStep(ctx, m, by, events.MandateGranted, "granted", grantDetail(m), m.CreatedAt)
	})
	if errors.Is(err, models.ErrDuplicate) && m.ApprovalID != nil {
		first, err := s.store.MandateOfApproval(ctx, m.OrganizationID, *m.ApprovalID)
		if err != nil {
			return err
		}
		*m = *first
		return nil
	}
	return err
}

// revoke ends the organisation's mandate id at once, under its row lock,
// writing its audit entry and mandate.revoked. A mandate already ended
// (revoked or expired) stays as it was: revoking it is invalid_state and
// writes nothing, so the trail never records the end of something dead.
func (s *Service) revoke(ctx context.Context, by models.Actor, orgID, id string) (*models.Mandate, error) {
	var m *models.Mandate
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		now := models.Now()
		var err error
		if m, err = s.store.LockMandate(ctx, orgID, id, now); err != nil {
			return err
		}
		if m.Ended() {
			return ended(m)
		}
		m.RevokedAt, m.RevokedByID, m.RevokedBy = &now, &by.ID, &by.Name
		if err := s.store.SaveRevocation(ctx, m); err != nil {
			return err
		}
		return s.mandateStep(ctx, m, by, events.MandateRevoked, "revoked", "mandate "+m.ID+" for "+m.Action, now)
	})
	return m, err
}

// ended refuses to act on m, which has ended, saying when.
func ended(m *models.Mandate) error {
	if m.RevokedAt != nil {
		return apperr.New(apperr.InvalidState, "mandate %s was revoked at %s", m.ID, m.RevokedAt.Format(time.RFC3339))
	}
	return apperr.New(apperr.InvalidState, "mandate %s expired at %s", m.ID, m.ExpiresAt.Format(time.RFC3339))
}

// mandateStep writes a mandate's audit entry, numbered after its last
// (its steps after the grant run under the mandate's row lock), and its
// event, in ctx's transaction.
func (s *Service) mandateStep(ctx context.Context, m *models.Mandate, by models.Actor, kind, action, detail string, at time.Time) error {
	seq, err := s.store.NextSeq(ctx, m.OrganizationID, m.ID)
	if err != nil {
		return err
	}
	if err := s.store.Audit(ctx, models.MandateAudit(m, seq, action, detail, by, at)); err != nil {
		return err
	}
	data, err := json.Marshal(wire.NewMandate(m, s.issuer))
	if err != nil {
		return err
	}
	return s.store.Emit(ctx, &models.Event{OrganizationID: m.OrganizationID, Kind: kind,
		SubjectType: "mandate", SubjectID: m.ID, Data: data, CreatedAt: at})
}

// grantDetail is a grant's line in the audit trail.
func grantDetail(m *models.Mandate) string {
	d := "mandate for " + m.Action
	if m.Condition != "" {
		d += " where " + m.Condition
	}
	d += " until " + m.ExpiresAt.Format(time.RFC3339)
	if m.ApprovalID != nil {
		d += ", granted with approval " + *m.ApprovalID
	}
	return d
}
