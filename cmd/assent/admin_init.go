package main

import (
	"fmt"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// initialized is what `assent admin init` prints: the secrets are shown
// this once.
type initialized struct {
	Organization wire.Organization `json:"organization"`
	Owner        wire.Member       `json:"owner"`
	// OwnerToken lets the owner call the API as themselves (deciding,
	// for one) before email or single sign-on is set up.
	OwnerToken string `json:"ownerToken"`
	AgentKey   string `json:"agentKey"`
	AdminKey   string `json:"adminKey"`
}

// initInstance makes a new instance usable in one command: its first
// organisation, an owner, and the keys an agent and an administrator call
// the API with. It refuses once any organisation exists, so running it
// twice makes nothing twice.
func initInstance(r *adminRun) (any, error) {
	orgs, err := r.store.ListOrganizations(r.ctx)
	if err != nil {
		return nil, err
	}
	if len(orgs) > 0 {
		return nil, fmt.Errorf("the database already holds %d organisation(s); init makes the first only: use admin org create, member add and key create", len(orgs))
	}
	newOrg := admin.NewOrganization{Name: r.str("name"), Plan: r.str("plan")}
	owner := admin.NewMember{Email: r.str("owner-email"), Name: r.str("owner-name"), Role: models.RoleOwner}
	// Checked before anything is made, so a mistyped address leaves no
	// organisation behind to refuse the next try.
	if r.str("owner-email") == "" {
		return nil, fmt.Errorf("--owner-email is required")
	}
	if err := validate.Struct(&newOrg); err != nil {
		return nil, err
	}
	if err := validate.Struct(&owner); err != nil {
		return nil, err
	}

	org, err := r.svc.CreateOrganization(r.ctx, newOrg)
	if err != nil {
		return nil, err
	}
	m, err := r.svc.CreateMember(r.ctx, org.ID, admin.Operator, owner)
	if err != nil {
		return nil, err
	}
	out := initialized{Organization: wire.NewOrganization(org), Owner: wire.NewMember(m)}
	if _, out.OwnerToken, err = r.svc.MintMemberToken(r.ctx, org.ID, admin.Operator, nil, m.ID, admin.NewMemberToken{}); err != nil {
		return nil, err
	}
	if _, out.AgentKey, err = r.svc.CreateKey(r.ctx, org.ID, admin.Operator, admin.NewKey{Name: "agent", Kind: models.KeyAgent, Scopes: scopes.Available()}); err != nil {
		return nil, err
	}
	if _, out.AdminKey, err = r.svc.CreateKey(r.ctx, org.ID, admin.Operator, admin.NewKey{Name: "admin", Kind: models.KeyAdmin}); err != nil {
		return nil, err
	}
	return out, nil
}
