package models

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// Delegation is a member's delegation while away: from From until Until,
// the requests that would ask the delegator ask the delegate instead
// (requests.StandIns). A member has at most one; setting another replaces
// it, and ending it deletes it. The rules (who may be named, chains,
// cycles) live in package delegations.
type Delegation struct {
	DelegatorID    string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	DelegateID     string    `gorm:"size:40;not null;index"`
	From           time.Time `gorm:"column:starts_at;not null"`
	Until          time.Time `gorm:"column:ends_at;not null"`
	Note           string    `gorm:"type:text;not null"`
	// StartedAt is when the requests already waiting on the delegator
	// were handed to the delegate; nil until then (the reconciler starts
	// a delegation whose From has come).
	StartedAt *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
	// Delegator and Delegate are filled in when read.
	Delegator *Member `gorm:"-"`
	Delegate  *Member `gorm:"-"`
}

// DelegatorName names the delegator as people read it.
func (d *Delegation) DelegatorName() string {
	if d.Delegator == nil {
		return d.DelegatorID
	}
	return d.Delegator.DisplayName()
}

// DelegateName names the delegate as people read it.
func (d *Delegation) DelegateName() string {
	if d.Delegate == nil {
		return d.DelegateID
	}
	return d.Delegate.DisplayName()
}

// ActiveAt reports whether the delegation holds at t.
func (d *Delegation) ActiveAt(t time.Time) bool { return !t.Before(d.From) && t.Before(d.Until) }

// LockOrganization holds the organisation's row for the rest of ctx's
// transaction: the writes that must see every other of their kind across
// it (delegations, which a cycle may join) queue on it.
func (s *core) LockOrganization(ctx context.Context, orgID string) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	err = st.tx.Clauses(lockForUpdate(st.tx)...).Where("id = ?", orgID).Take(&Organization{}).Error
	return notFound(err, "organization "+orgID)
}

// OtherDelegations are the organisation's delegations not yet over but
// delegatorID's, their members filled in.
func (s *DirectoryStore) OtherDelegations(ctx context.Context, orgID, delegatorID string) ([]Delegation, error) {
	return delegations(s.conn(ctx).Where("organization_id = ? AND delegator_id <> ? AND ends_at > ?", orgID, delegatorID, Now()))
}

// ReplaceDelegation writes d in place of its delegator's delegation, if
// any, in ctx's transaction, its members filled in.
func (s *DirectoryStore) ReplaceDelegation(ctx context.Context, d *Delegation) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	if err := st.tx.Where("organization_id = ? AND delegator_id = ?", d.OrganizationID, d.DelegatorID).Delete(&Delegation{}).Error; err != nil {
		return err
	}
	if err := st.tx.Create(d).Error; err != nil {
		return err
	}
	return fillDelegations(st.tx, d.OrganizationID, []*Delegation{d})
}

// DeleteDelegation deletes the member's delegation in ctx's transaction;
// deleted is false when there was none.
func (s *DirectoryStore) DeleteDelegation(ctx context.Context, orgID, delegatorID string) (deleted bool, err error) {
	st, err := inTx(ctx)
	if err != nil {
		return false, err
	}
	res := st.tx.Where("organization_id = ? AND delegator_id = ?", orgID, delegatorID).Delete(&Delegation{})
	return res.RowsAffected > 0, res.Error
}

// DelegationAudit is a step of a member's delegation on the delegator's
// trail, taken by the delegator.
func DelegationAudit(orgID string, delegator *Member, seq int, action, detail string, at time.Time) *AuditEntry {
	return &AuditEntry{OrganizationID: orgID, SubjectType: "delegation", SubjectID: delegator.ID, Seq: seq, Action: action,
		ActorID: delegator.ID, ActorName: delegator.DisplayName(), Detail: detail, At: at}
}

// Delegation is the member's delegation not yet over, or nil.
func (s *DirectoryStore) Delegation(ctx context.Context, orgID, delegatorID string) (*Delegation, error) {
	out, err := delegations(s.db.WithContext(ctx).Where("organization_id = ? AND delegator_id = ? AND ends_at > ?", orgID, delegatorID, Now()))
	if err != nil || len(out) == 0 {
		return nil, err
	}
	return &out[0], nil
}

// DelegationsTo lists the delegations not yet over that name delegateID,
// the soonest first.
func (s *DirectoryStore) DelegationsTo(ctx context.Context, orgID, delegateID string) ([]Delegation, error) {
	return delegations(s.db.WithContext(ctx).Where("organization_id = ? AND delegate_id = ? AND ends_at > ?", orgID, delegateID, Now()))
}

// ActiveDelegations are the delegations holding at t whose delegate is an
// active member, by delegator, their members filled in (from the
// process's copy under SeenSettings).
func (s *DirectoryStore) ActiveDelegations(ctx context.Context, orgID string, t time.Time) (map[string]Delegation, error) {
	list, err := s.settings.delegations.get(ctx, orgID, func() ([]Delegation, error) {
		// Those not over now, so the copy serves any t until one is.
		now := Now()
		if t.Before(now) {
			now = t
		}
		db := s.db.WithContext(ctx)
		return delegations(db.Where("organization_id = ? AND ends_at > ?", orgID, now).
			Where("delegate_id IN (?)", db.Model(&Member{}).Select("id").Where("organization_id = ? AND active", orgID)))
	})
	return holding(list, t), err
}

// UnstartedDelegations lists delegations holding at now whose waiting
// requests were not yet handed to their delegate, at most limit.
func (s *DirectoryStore) UnstartedDelegations(ctx context.Context, now time.Time, limit int) ([]Delegation, error) {
	var out []Delegation
	err := s.db.WithContext(ctx).Where("started_at IS NULL AND starts_at <= ? AND ends_at > ?", now, now).
		Order("starts_at").Limit(limit).Find(&out).Error
	return out, err
}

// MarkDelegationStarted records that d's waiting requests were handed to
// its delegate, unless d was replaced meanwhile.
func (s *DirectoryStore) MarkDelegationStarted(ctx context.Context, d *Delegation) error {
	now := Now()
	return s.db.WithContext(ctx).Model(&Delegation{}).
		Where("organization_id = ? AND delegator_id = ? AND delegate_id = ? AND starts_at = ? AND started_at IS NULL",
			d.OrganizationID, d.DelegatorID, d.DelegateID, d.From).
		Update("started_at", now).Error
}

// Waiting lists the open requests still waiting on a person (asked, and
// not yet acted), by kind (events.RequestApproval, …); a kind with none is
// absent.
type Waiting map[string][]string

// WaitingOn lists the open requests of each kind waiting on personID.
func (s *DirectoryStore) WaitingOn(ctx context.Context, orgID, personID string) (Waiting, error) {
	return waitingOnPerson(s.conn(ctx), orgID, personID)
}

// waitingOnPerson lists the open requests of every kind waiting on
// personID, oldest first, with one query.
func waitingOnPerson(tx *gorm.DB, orgID, personID string) (Waiting, error) {
	var rows []struct{ Kind, RequestID string }
	out := Waiting{}
	if err := tx.Model(&RequestPerson{}).Select("kind, request_id").
		Where(personWaiting, orgID, personID).
		Order("request_id").Find(&rows).Error; err != nil {
		return out, err
	}
	for _, r := range rows {
		out[r.Kind] = append(out[r.Kind], r.RequestID)
	}
	return out, nil
}

// delegations runs q over delegations, the soonest first, with their
// members.
func delegations(q *gorm.DB) ([]Delegation, error) {
	var out []Delegation
	if err := q.Order("starts_at").Order("delegator_id").Find(&out).Error; err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}
	ptrs := make([]*Delegation, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	return out, fillDelegations(q.Session(&gorm.Session{NewDB: true}), out[0].OrganizationID, ptrs)
}

// fillDelegations reads the members of ds.
func fillDelegations(tx *gorm.DB, orgID string, ds []*Delegation) error {
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.DelegatorID, d.DelegateID)
	}
	var members []Member
	if err := tx.Where("organization_id = ? AND id IN ?", orgID, ids).Find(&members).Error; err != nil {
		return err
	}
	byID := map[string]*Member{}
	for i := range members {
		byID[members[i].ID] = &members[i]
	}
	for _, d := range ds {
		d.Delegator, d.Delegate = byID[d.DelegatorID], byID[d.DelegateID]
	}
	return nil
}
