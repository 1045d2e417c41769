package main

// The demo organisation `assent dev` starts with, and its keys recorded in
// <data dir>/bootstrap.json.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/models"
)

// bootstrapFile is the bootstrap record inside the data dir.
const bootstrapFile = "bootstrap.json"

// demoPerson is a demo person with a token to act through the API.
type demoPerson struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	Token string `json:"token"`
}

// demoGroup is the demo team; Members holds emails.
type demoGroup struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Members []string `json:"members"`
}

// bootstrap is what bootstrap.json holds.
type bootstrap struct {
	BaseURL        string       `json:"baseUrl"`
	OrganizationID string       `json:"organizationId"`
	AgentKey       string       `json:"agentKey"`
	AdminKey       string       `json:"adminKey"`
	Members        []demoPerson `json:"members"`
	Teams          []demoGroup  `json:"teams"`
}

var demoMembers = []admin.NewMember{
	{Email: "owner@example.com", Name: "Olivia Owner", Role: models.RoleOwner},
	{Email: "admin@example.com", Name: "Adam Admin", Role: models.RoleAdmin},
	{Email: "mia@example.com", Name: "Mia Member", Role: models.RoleMember},
	{Email: "max@example.com", Name: "Max Member", Role: models.RoleMember},
	{Email: "maya@example.com", Name: "Maya Member", Role: models.RoleMember},
}

// loadBootstrap reads an earlier bootstrap from dataDir; os.ErrNotExist means none.
func loadBootstrap(dataDir string) (*bootstrap, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, bootstrapFile))
	if err != nil {
		return nil, err
	}
	var out bootstrap
	return &out, json.Unmarshal(b, &out)
}

// ensureBootstrap returns the existing bootstrap or creates the demo
// organisation through the admin service, as `assent admin` would. The
// file is written last, so an interrupted first start simply runs again.
// Its baseUrl follows the address this start listens on.
func ensureBootstrap(ctx context.Context, s *models.Store, a *admin.Service, dataDir, baseURL string) (b *bootstrap, created bool, err error) {
	if b, err := loadBootstrap(dataDir); err == nil {
		if b.BaseURL == baseURL {
			return b, false, nil
		}
		b.BaseURL = baseURL
		return b, false, writeBootstrap(dataDir, b)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	b, err = createDemo(ctx, s, a, baseURL)
	if err != nil {
		return nil, false, err
	}
	return b, true, writeBootstrap(dataDir, b)
}

func createDemo(ctx context.Context, s *models.Store, a *admin.Service, baseURL string) (*bootstrap, error) {
	org, err := a.CreateOrganization(ctx, admin.NewOrganization{Name: "Demo Organization", Plan: models.PlanTeam})
	if err != nil {
		return nil, err
	}
	b := &bootstrap{BaseURL: baseURL, OrganizationID: org.ID}
	for _, in := range demoMembers {
		m, err := a.CreateMember(ctx, org.ID, admin.Operator, in)
		if err != nil {
			return nil, err
		}
		_, token, err := a.MintMemberToken(ctx, org.ID, admin.Operator, nil, m.ID, admin.NewMemberToken{})
		if err != nil {
			return nil, err
		}
		b.Members = append(b.Members, demoPerson{ID: m.ID, Email: m.Email, Name: m.Name, Role: m.Role, Token: token})
	}
	team := admin.NewTeam{Name: "Operations", Kind: models.TeamKindTeam}
	for _, m := range b.Members[2:] {
		team.Members = append(team.Members, m.Email)
	}
	t, err := a.CreateTeam(ctx, org.ID, team)
	if err != nil {
		return nil, err
	}
	b.Teams = []demoGroup{{ID: t.ID, Name: t.Name, Kind: t.Kind, Members: team.Members}}
	// Only scopes an endpoint requires today: the demo key should not
	// suggest features that answer 404.
	if _, b.AgentKey, err = a.CreateKey(ctx, org.ID, admin.Operator, admin.NewKey{Name: "demo agent", Kind: models.KeyAgent, Scopes: scopes.Available()}); err != nil {
		return nil, err
	}
	if _, b.AdminKey, err = a.CreateKey(ctx, org.ID, admin.Operator, admin.NewKey{Name: "demo admin", Kind: models.KeyAdmin}); err != nil {
		return nil, err
	}
	return b, nil
}

// writeBootstrap stores b atomically, readable by the owner only: it holds keys.
func writeBootstrap(dataDir string, b *bootstrap) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dataDir, bootstrapFile+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dataDir, bootstrapFile))
}
