package admin_test

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
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
)

// refused asserts err is an apperr with code, naming field (if any) and
// saying message.
func refused(t *testing.T, err error, code, field, message string) {
	t.Helper()
	e, ok := apperr.As(err)
	require.True(t, ok, "want %s, got %v", code, err)
	assert.Equal(t, code, e.Code)
	assert.Equal(t, field, e.Field)
	assert.Equal(t, message, e.Message)
}

// The service checks its input itself, whoever calls it, and leaves the
// rules that need a transaction to the store.
func TestServiceChecksInputAndCallsTheStore(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		svc := admin.New(store)

		_, err := svc.CreateOrganization(ctx, admin.NewOrganization{Plan: "gold"})
		refused(t, err, apperr.InvalidRequest, "name", "name is required")
		org, err := svc.CreateOrganization(ctx, admin.NewOrganization{Name: "Acme"})
		require.NoError(t, err)
		assert.Equal(t, models.PlanFree, org.Plan)
		_, err = svc.UpdateOrganization(ctx, org.ID, admin.ByAdministrator, admin.OrganizationPatch{MaxApprovalExpirySeconds: new(int64(59))})
		refused(t, err, apperr.InvalidRequest, "maxApprovalExpirySeconds", "maxApprovalExpirySeconds must be at least 60")
		_, err = svc.UpdateOrganization(ctx, org.ID, admin.ByAdministrator, admin.OrganizationPatch{Plan: new(models.PlanTeam)})
		refused(t, err, apperr.Forbidden, "plan", "the plan is set by the operator of this Assent instance (assent admin), not by the organisation")
		org, err = svc.UpdateOrganization(ctx, org.ID, admin.ByOperator, admin.OrganizationPatch{Plan: new(models.PlanTeam), GuestsMayApprove: new(true)})
		require.NoError(t, err)
		assert.Equal(t, models.PlanTeam, org.Plan)
		assert.True(t, org.GuestsMayApprove)
		assert.Equal(t, "Acme", org.Name)

		_, err = svc.CreateMember(ctx, org.ID, admin.Operator, admin.NewMember{Email: "not-an-address"})
		refused(t, err, apperr.InvalidRequest, "email", "email must be an email address")
		owner, err := svc.CreateMember(ctx, org.ID, admin.Operator, admin.NewMember{Email: "Olga@Example.com", Name: " Olga ", Role: models.RoleOwner})
		require.NoError(t, err)
		assert.Equal(t, "olga@example.com", owner.Email)
		assert.Equal(t, "Olga", owner.Name)
		adm, err := svc.CreateMember(ctx, org.ID, memberActor(org, owner), admin.NewMember{Email: "adam@example.com", Role: models.RoleAdmin})
		require.NoError(t, err)

		// Only owners hand out or take away ownership; nil (an admin key,
		// the shell) acts for the organisation.
		_, err = svc.CreateMember(ctx, org.ID, memberActor(org, adm), admin.NewMember{Email: "own@example.com", Role: models.RoleOwner})
		refused(t, err, apperr.Forbidden, "", "only an owner can make someone an owner or change an owner's role or state")
		_, err = svc.UpdateMember(ctx, org.ID, memberActor(org, adm), owner.ID, admin.MemberPatch{Active: new(false)})
		assert.True(t, apperr.Is(err, apperr.Forbidden), "%v", err)
		_, err = svc.UpdateMember(ctx, org.ID, memberActor(org, adm), adm.ID, admin.MemberPatch{Role: new(models.RoleOwner)})
		assert.True(t, apperr.Is(err, apperr.Forbidden), "%v", err)
		_, err = svc.UpdateMember(ctx, org.ID, memberActor(org, adm), "mem_nobody", admin.MemberPatch{Name: new("X")})
		assert.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
		_, err = svc.UpdateMember(ctx, org.ID, admin.Operator, adm.ID, admin.MemberPatch{Role: new("emperor")})
		refused(t, err, apperr.InvalidRequest, "role", "role must be one of: owner, admin, member")
		_, err = svc.UpdateMember(ctx, org.ID, admin.Operator, owner.ID, admin.MemberPatch{Role: new(models.RoleMember)})
		refused(t, err, apperr.InvalidState, "", "olga@example.com is the last active owner; make another member owner first")
		m, err := svc.UpdateMember(ctx, org.ID, memberActor(org, adm), adm.ID, admin.MemberPatch{Name: new(" Adam ")})
		require.NoError(t, err)
		assert.Equal(t, "Adam", m.Name)
		assert.Equal(t, models.RoleAdmin, m.Role)

		_, err = svc.CreateTeam(ctx, org.ID, admin.NewTeam{Name: "Ops", Kind: "tribe"})
		refused(t, err, apperr.InvalidRequest, "kind", "kind must be one of: team, group, workspace")
		_, err = svc.CreateTeam(ctx, org.ID, admin.NewTeam{Name: "Ops", Kind: models.TeamKindTeam, Members: []string{"nobody@example.com"}})
		refused(t, err, apperr.InvalidRequest, "members", "unknown members: nobody@example.com")
		team, err := svc.CreateTeam(ctx, org.ID, admin.NewTeam{Name: " Ops ", Kind: models.TeamKindTeam, Members: []string{owner.ID, "ADAM@example.com"}})
		require.NoError(t, err)
		assert.Equal(t, "Ops", team.Name)
		assert.Len(t, team.Members, 2)

		_, _, err = svc.CreateGuest(ctx, org.ID, admin.NewGuest{})
		refused(t, err, apperr.InvalidRequest, "email", "email is required")
		_, _, err = svc.CreateGuest(ctx, org.ID, admin.NewGuest{Email: "adam@example.com"})
		refused(t, err, apperr.Conflict, "email", "adam@example.com is a member, not a guest")
		g, created, err := svc.CreateGuest(ctx, org.ID, admin.NewGuest{Email: "gus@partner.example"})
		require.NoError(t, err)
		assert.True(t, created)
		again, created, err := svc.CreateGuest(ctx, org.ID, admin.NewGuest{Email: "GUS@partner.example"})
		require.NoError(t, err)
		assert.False(t, created)
		assert.Equal(t, g.ID, again.ID)

		_, err = svc.UpdateGuest(ctx, org.ID, g.ID, admin.GuestPatch{Name: new(strings.Repeat("x", 201))})
		refused(t, err, apperr.InvalidRequest, "name", "name must be at most 200 characters")
		renamed, err := svc.UpdateGuest(ctx, org.ID, g.ID, admin.GuestPatch{Name: new(" Gus ")})
		require.NoError(t, err)
		assert.Equal(t, "Gus", renamed.Name)
		_, err = svc.UpdateGuest(ctx, org.ID, "gst_nobody", admin.GuestPatch{Name: new("X")})
		assert.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
	})
}

func TestServiceIssuesKeysWithScopesThatFitTheKind(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		svc := admin.New(store)
		org, err := svc.CreateOrganization(ctx, admin.NewOrganization{Name: "Acme"})
		require.NoError(t, err)

		_, _, err = svc.CreateKey(ctx, org.ID, admin.Operator, admin.NewKey{Name: "bot", Kind: "root"})
		refused(t, err, apperr.InvalidRequest, "kind", "kind must be one of: agent, admin")
		_, _, err = svc.CreateKey(ctx, org.ID, admin.Operator, admin.NewKey{Name: "bot", Kind: models.KeyAgent})
		refused(t, err, apperr.InvalidRequest, "scopes", "an agent key needs at least one scope")
		_, _, err = svc.CreateKey(ctx, org.ID, admin.Operator, admin.NewKey{Name: "bot", Kind: models.KeyAgent, Scopes: []string{"root"}})
		e, ok := apperr.As(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, "scopes", e.Field)
		assert.Contains(t, e.Message, `unknown scope "root"`)
		_, _, err = svc.CreateKey(ctx, org.ID, admin.Operator, admin.NewKey{Name: "boss", Kind: models.KeyAdmin, Scopes: []string{"approvals:read"}})
		refused(t, err, apperr.InvalidRequest, "scopes", "admin keys manage the organisation and carry no scopes")

		k, secret, err := svc.CreateKey(ctx, org.ID, admin.Operator, admin.NewKey{Name: "bot", Kind: models.KeyAgent,
			Scopes: []string{"approvals:read", "approvals:write", "approvals:read"}})
		require.NoError(t, err)
		assert.Equal(t, models.StringList{"approvals:read", "approvals:write"}, k.Scopes)
		p, err := accounts.New(store).Authenticate(ctx, secret)
		require.NoError(t, err)
		assert.Equal(t, k.ID, p.Key.ID)

		k, _, err = svc.CreateKey(ctx, org.ID, admin.Operator, admin.NewKey{Name: "boss", Kind: models.KeyAdmin})
		require.NoError(t, err)
		assert.Equal(t, models.StringList{}, k.Scopes)

		// Each key issued is in the audit trail, naming who issued it.
		var entry models.AuditEntry
		require.NoError(t, db.Where("subject_type = ? AND subject_id = ?", "key", k.ID).Take(&entry).Error)
		assert.Equal(t, admin.Operator.ID, entry.ActorID)
		assert.Equal(t, "admin key boss, no scopes", entry.Detail)
	})
}

func TestServiceSavesOnlyRulesThatPassCheck(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		svc := admin.New(store)
		org, err := svc.CreateOrganization(ctx, admin.NewOrganization{Name: "Acme"})
		require.NoError(t, err)

		_, err = svc.CreateRule(ctx, org.ID, admin.NewRule{Name: "big", Kind: "approval", RequiredApprovals: 21})
		refused(t, err, apperr.InvalidRequest, "requiredApprovals", "requiredApprovals must be at most 20")
		_, err = svc.CreateRule(ctx, org.ID, admin.NewRule{Name: "big", Kind: "approval"})
		refused(t, err, apperr.InvalidRequest, "requiredApprovals", "an approval rule needs requiredApprovals, from 2 to 20")

		r, err := svc.CreateRule(ctx, org.ID, admin.NewRule{Name: " big ", Kind: "approval", RequiredApprovals: 2,
			Condition: `request.risk == "high"`})
		require.NoError(t, err)
		assert.Equal(t, "big", r.Name)
		assert.True(t, r.Enabled)
		assert.NotEmpty(t, r.ID)
		_, err = svc.CreateRule(ctx, org.ID, admin.NewRule{Name: "big", Kind: "restricted", Fields: []string{"x"}})
		refused(t, err, apperr.Conflict, "name", `a rule named "big" already exists`)

		r, err = svc.CreateRule(ctx, org.ID, admin.NewRule{Name: "hide", Kind: "restricted", Fields: []string{"iban"}, Enabled: new(false)})
		require.NoError(t, err)
		assert.False(t, r.Enabled)
		enabled, err := store.EnabledRules(ctx, org.ID)
		require.NoError(t, err)
		require.Len(t, enabled, 1)
		assert.Equal(t, "big", enabled[0].Name)
	})
}

// Check requires what each kind needs and a condition that compiles.
func TestNewRuleCheck(t *testing.T) {
	for name, tc := range map[string]struct {
		in           admin.NewRule
		field, words string
	}{
		"approval without a count":        {admin.NewRule{Kind: "approval"}, "requiredApprovals", "an approval rule needs requiredApprovals"},
		"ethics without a principle":      {admin.NewRule{Kind: "ethics", Concern: "c"}, "principle", "needs the principle"},
		"ethics without a concern":        {admin.NewRule{Kind: "ethics", Principle: "p"}, "concern", "needs the concern"},
		"restricted without fields":       {admin.NewRule{Kind: "restricted"}, "fields", "needs the fields it hides"},
		"a count on another kind":         {admin.NewRule{Kind: "restricted", Fields: []string{"x"}, RequiredApprovals: 2}, "requiredApprovals", "belongs to approval rules"},
		"a condition that does not parse": {admin.NewRule{Kind: "approval", RequiredApprovals: 2, Condition: "request.risk =="}, "condition", ""},
		"a condition that is not a bool":  {admin.NewRule{Kind: "approval", RequiredApprovals: 2, Condition: `request.risk`}, "condition", ""},
		"approval":                        {admin.NewRule{Kind: "approval", RequiredApprovals: 2, Condition: `request.risk == "high"`}, "", ""},
		"ethics":                          {admin.NewRule{Kind: "ethics", Principle: "p", Concern: "c"}, "", ""},
		"restricted":                      {admin.NewRule{Kind: "restricted", Fields: []string{"x"}}, "", ""},
		"restricted path":                 {admin.NewRule{Kind: "restricted", Fields: []string{"ssn", "customer.ssn"}}, "", ""},
		"a path that can never match":     {admin.NewRule{Kind: "restricted", Fields: []string{"ssn", "customer."}}, "fields[1]", "can never match"},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.in.Check()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			e, ok := apperr.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, apperr.InvalidRequest, e.Code)
			assert.Equal(t, tc.field, e.Field)
			assert.Contains(t, e.Message, tc.words)
		})
	}
}

// askedSpy records what RemoveGuest asks of one kind's workflows.
type askedSpy struct {
	kind  string
	calls []string
	by    models.Actor
}

func (a *askedSpy) Kind() string { return a.kind }

func (a *askedSpy) RemoveAsked(_ context.Context, orgID string, by models.Actor, personID, personName string, ids []string) error {
	a.by = by
	for _, id := range ids {
		a.calls = append(a.calls, orgID+" "+personID+" "+personName+" "+id)
	}
	return nil
}

// RemoveGuest removes the guest in the store, then takes them off the
// pending requests they could decide, through the workflows; another
// organisation's guest is not found.
func TestRemoveGuestTakesThemOffPendingRequests(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		spy := &askedSpy{kind: events.RequestApproval}
		svc := admin.New(store, spy)
		org, err := svc.CreateOrganization(ctx, admin.NewOrganization{Name: "Acme"})
		require.NoError(t, err)
		other, err := svc.CreateOrganization(ctx, admin.NewOrganization{Name: "Other"})
		require.NoError(t, err)
		g, _, err := svc.CreateGuest(ctx, org.ID, admin.NewGuest{Email: "gus@partner.example"})
		require.NoError(t, err)
		idle, _, err := svc.CreateGuest(ctx, org.ID, admin.NewGuest{Email: "ida@partner.example"})
		require.NoError(t, err)
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
			ExpiresAt: models.Now().Add(time.Hour), Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow, ApproverIDs: []string{g.ID},
			RequiredApprovals: 1}
		_, err = requests.Insert(ctx, store, approvals.Records(store), a, nil)
		require.NoError(t, err)

		refused(t, svc.RemoveGuest(ctx, other.ID, g.ID, admin.Operator), apperr.NotFound, "", "guest "+g.ID+" not found")
		require.NoError(t, svc.RemoveGuest(ctx, org.ID, g.ID, admin.Operator))
		assert.Equal(t, []string{org.ID + " " + g.ID + " gus@partner.example " + a.ID}, spy.calls)
		assert.Equal(t, admin.Operator, spy.by)

		// Without workflows, a guest on no pending request is still removed.
		bare := admin.New(store)
		require.NoError(t, bare.RemoveGuest(ctx, org.ID, idle.ID, admin.Operator))
		refused(t, bare.RemoveGuest(ctx, org.ID, idle.ID, admin.Operator), apperr.NotFound, "", "guest "+idle.ID+" not found")
	})
}

// RemoveGuest takes a guest off the open reviews waiting on them, through
// the review workflows; where none run it says so rather than leave them a
// reviewer, and a call where they do finishes it.
func TestRemoveGuestTakesThemOffOpenReviews(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		bare := admin.New(store)
		org, err := bare.CreateOrganization(ctx, admin.NewOrganization{Name: "Acme"})
		require.NoError(t, err)
		g, _, err := bare.CreateGuest(ctx, org.ID, admin.NewGuest{Email: "gus@partner.example"})
		require.NoError(t, err)
		r := &reviews.Review{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Check",
			ExpiresAt: models.Now().Add(time.Hour), Requester: "key_test", RequestedBy: "agent"}, ReportID: "rpt_1", VersionID: "ver_1", Version: 1,
			Reviewers: []string{g.Email}, ReviewerIDs: []string{g.ID}, RequiredApprovals: 1,
		}
		_, err = requests.Insert(ctx, store, reviews.Records(store), r, nil)
		require.NoError(t, err)

		refused(t, bare.RemoveGuest(ctx, org.ID, g.ID, admin.Operator), apperr.Unavailable, "", "the guest was removed, but the requests still waiting on them cannot be changed here; retry where workflows run")
		spy := &askedSpy{kind: events.RequestReview}
		require.NoError(t, admin.New(store, spy).RemoveGuest(ctx, org.ID, g.ID, admin.Operator))
		assert.Equal(t, []string{org.ID + " " + g.ID + " " + g.ID + " " + r.ID}, spy.calls,
			"the guest record is gone by then: the timeline names them by id")
		assert.Equal(t, admin.Operator, spy.by)
	})
}

// memberActor is m acting on the pages.
func memberActor(org *models.Organization, m *models.Member) models.Actor {
	return (&models.Person{Organization: org, Member: m}).Actor()
}

// TestLastOwnerCannotBeRemoved: the last active owner can be neither
// deactivated nor demoted, and two owners demoting each other at once
// leave one owner; a member who is not an owner changes no owner.
func TestLastOwnerCannotBeRemoved(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		svc := admin.New(store)
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		owner, err := store.CreateMember(ctx, org.ID, "o@example.com", "", models.RoleOwner)
		require.NoError(t, err)
		_, err = svc.UpdateMember(ctx, org.ID, admin.Operator, owner.ID, admin.MemberPatch{Active: new(false)})
		refused(t, err, apperr.InvalidState, "", "o@example.com is the last active owner; make another member owner first")

		second, err := store.CreateMember(ctx, org.ID, "o2@example.com", "", models.RoleOwner)
		require.NoError(t, err)
		_, err = svc.UpdateMember(ctx, org.ID, admin.Operator, owner.ID, admin.MemberPatch{Active: new(false)})
		require.NoError(t, err)
		_, err = svc.UpdateMember(ctx, org.ID, admin.Operator, second.ID, admin.MemberPatch{Role: new(models.RoleMember)})
		refused(t, err, apperr.InvalidState, "", "o2@example.com is the last active owner; make another member owner first")

		plain, err := store.CreateMember(ctx, org.ID, "m@example.com", "", models.RoleAdmin)
		require.NoError(t, err)
		_, err = svc.UpdateMember(ctx, org.ID, memberActor(org, plain), second.ID, admin.MemberPatch{Name: new("Olga")})
		assert.True(t, apperr.Is(err, apperr.Forbidden), "%v", err)

		// Two owners, each demoting the other at once, four rounds.
		_, err = svc.UpdateMember(ctx, org.ID, admin.Operator, owner.ID, admin.MemberPatch{Active: new(true)})
		require.NoError(t, err)
		for range 4 {
			a, b := owner, second
			results := make([]error, 2)
			var wg sync.WaitGroup
			wg.Go(func() {
				_, results[0] = svc.UpdateMember(ctx, org.ID, memberActor(org, a), b.ID, admin.MemberPatch{Role: new(models.RoleMember)})
			})
			wg.Go(func() {
				_, results[1] = svc.UpdateMember(ctx, org.ID, memberActor(org, b), a.ID, admin.MemberPatch{Role: new(models.RoleMember)})
			})
			wg.Wait()
			var owners int64
			require.NoError(t, db.Model(&models.Member{}).Where("organization_id = ? AND role = ? AND active", org.ID, models.RoleOwner).Count(&owners).Error)
			assert.EqualValues(t, 1, owners, "%v", results)
			for _, m := range []*models.Member{a, b} {
				_, err := svc.UpdateMember(ctx, org.ID, admin.Operator, m.ID, admin.MemberPatch{Role: new(models.RoleOwner)})
				require.NoError(t, err)
			}
		}
	})
}
