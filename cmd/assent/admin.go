package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/logging"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

const adminUsage = `usage: assent admin <resource> <action> [flags]

  org create --name N [--plan free|team|enterprise]
  org list
  org update [--org ID] [--name N] [--plan P] [--guests-may-approve true|false] [--max-expiry-seconds S]
  member add [--org ID] --email E [--name N] [--role owner|admin|member]
  member list [--org ID]
  member update [--org ID] --id MEM [--name N] [--role R] [--active true|false]
  team create [--org ID] --name N --kind team|group|workspace [--members a@x,mem_…]
  team list [--org ID]
  guest add [--org ID] --email E [--name N]
  guest list [--org ID]
  guest remove [--org ID] --email E | --id GST   (ends their sessions and links, takes them off pending requests; needs Temporal)
  key create [--org ID] --name N --kind agent|admin [--scopes approvals:read,…]
  key list [--org ID]
  key revoke [--org ID] --id KEY
  token create [--org ID] --member MEM
  rotate-secret-key   re-seal every stored secret under the first key of ASSENT_SECRET_KEY

--org may be left out when the database holds exactly one organisation.
Database flags (--database-url, --data-dir) work as for the other commands.
`

// runAdmin manages the directory from the shell and prints JSON. It goes
// through the same admin service as the admin API, acting for the whole
// organisation like an admin key.
func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cmd string
	switch {
	case len(args) >= 1 && args[0] == "rotate-secret-key":
		cmd, args = args[0], args[1:]
	case len(args) < 2:
		fmt.Fprint(stderr, adminUsage)
		return fmt.Errorf("admin needs a resource and an action")
	default:
		cmd, args = args[0]+" "+args[1], args[2:]
	}
	fs := flag.NewFlagSet("assent admin "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config.Config
	cfg.Register(fs)
	f := map[string]*string{}
	for _, name := range []string{"org", "name", "plan", "guests-may-approve", "max-expiry-seconds", "email", "role",
		"id", "active", "kind", "members", "scopes", "member"} {
		f[name] = fs.String(name, "", "")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })

	db, err := models.Open(cfg.Database())
	if err != nil {
		return err
	}
	defer models.Close(db)
	if err := models.RequireMigrated(db); err != nil {
		return err
	}
	keys, err := cfg.SecretKeys(config.KeyOrDataDir)
	if err != nil {
		return err
	}
	s := models.NewStore(db, keys)
	svc := admin.New(s, nil)

	org := func() (string, error) {
		if *f["org"] != "" {
			return *f["org"], nil
		}
		orgs, err := s.ListOrganizations(ctx)
		if err != nil {
			return "", err
		}
		if len(orgs) != 1 {
			return "", fmt.Errorf("--org is required: the database holds %d organisations", len(orgs))
		}
		return orgs[0].ID, nil
	}
	optional := func(name string) *string {
		if !set[name] {
			return nil
		}
		return f[name]
	}
	optionalBool := func(name string) (*bool, error) {
		if !set[name] {
			return nil, nil
		}
		switch *f[name] {
		case "true":
			v := true
			return &v, nil
		case "false":
			v := false
			return &v, nil
		}
		return nil, fmt.Errorf("--%s must be true or false", name)
	}
	list := func(name string) []string {
		if *f[name] == "" {
			return nil
		}
		parts := strings.Split(*f[name], ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}

	var out any
	err = func() error {
		switch cmd {
		case "org create":
			in := admin.NewOrganization{Name: *f["name"], Plan: *f["plan"]}
			o, err := svc.CreateOrganization(ctx, in)
			if err == nil {
				out = wire.NewOrganization(o)
			}
			return err
		case "org list":
			orgs, err := s.ListOrganizations(ctx)
			out = wire.All(orgs, wire.NewOrganization)
			return err
		case "org update":
			id, err := org()
			if err != nil {
				return err
			}
			guests, err := optionalBool("guests-may-approve")
			if err != nil {
				return err
			}
			in := admin.OrganizationPatch{Name: optional("name"), Plan: optional("plan"), GuestsMayApprove: guests}
			if set["max-expiry-seconds"] {
				var n int64
				if _, err := fmt.Sscan(*f["max-expiry-seconds"], &n); err != nil {
					return fmt.Errorf("--max-expiry-seconds must be an integer")
				}
				in.MaxApprovalExpirySeconds = &n
			}
			o, err := svc.UpdateOrganization(ctx, id, admin.ByOperator, in)
			if err == nil {
				out = wire.NewOrganization(o)
			}
			return err
		case "member add":
			id, err := org()
			if err != nil {
				return err
			}
			in := admin.NewMember{Email: *f["email"], Name: *f["name"], Role: *f["role"]}
			m, err := svc.CreateMember(ctx, id, nil, in)
			if err == nil {
				out = wire.NewMember(m)
			}
			return err
		case "member list":
			id, err := org()
			if err != nil {
				return err
			}
			rows, err := pageAll(func(p models.Page) ([]models.Member, string, error) { return s.ListMembers(ctx, id, p) })
			out = wire.All(rows, wire.NewMember)
			return err
		case "member update":
			id, err := org()
			if err != nil {
				return err
			}
			active, err := optionalBool("active")
			if err != nil {
				return err
			}
			in := admin.MemberPatch{Name: optional("name"), Role: optional("role"), Active: active}
			m, err := svc.UpdateMember(ctx, id, nil, *f["id"], in)
			if err == nil {
				out = wire.NewMember(m)
			}
			return err
		case "team create":
			id, err := org()
			if err != nil {
				return err
			}
			in := admin.NewTeam{Name: *f["name"], Kind: *f["kind"], Members: list("members")}
			t, err := svc.CreateTeam(ctx, id, in)
			if err == nil {
				out = wire.NewTeam(t)
			}
			return err
		case "team list":
			id, err := org()
			if err != nil {
				return err
			}
			rows, err := pageAll(func(p models.Page) ([]models.Team, string, error) { return s.ListTeams(ctx, id, p) })
			out = wire.All(rows, wire.NewTeam)
			return err
		case "guest add":
			id, err := org()
			if err != nil {
				return err
			}
			in := admin.NewGuest{Email: *f["email"], Name: *f["name"]}
			g, _, err := svc.CreateGuest(ctx, id, in)
			if err == nil {
				out = wire.NewGuest(g)
			}
			return err
		case "guest list":
			id, err := org()
			if err != nil {
				return err
			}
			rows, err := pageAll(func(p models.Page) ([]models.Guest, string, error) { return s.ListGuests(ctx, id, p) })
			out = wire.All(rows, wire.NewGuest)
			return err
		case "guest remove":
			id, err := org()
			if err != nil {
				return err
			}
			guest, err := guestRef(ctx, s, id, *f["id"], *f["email"])
			if err != nil {
				return err
			}
			// Pending requests change through their workflows.
			tc, err := dialTemporal(ctx, &cfg, logging.New(stderr, slog.LevelWarn), keys)
			if err != nil {
				return err
			}
			defer tc.Close()
			a := approvals.New(approvals.Deps{Store: s, Temporal: tc, Logger: logging.New(stderr, slog.LevelWarn)})
			if err := admin.New(s, a).RemoveGuest(ctx, id, guest, admin.Operator); err != nil {
				return err
			}
			out = map[string]any{"id": guest, "removed": true}
			return nil
		case "key create":
			id, err := org()
			if err != nil {
				return err
			}
			in := admin.NewKey{Name: *f["name"], Kind: *f["kind"], Scopes: list("scopes")}
			k, secret, err := svc.CreateKey(ctx, id, in)
			if err == nil {
				out = struct {
					wire.Key
					Secret string `json:"key"`
				}{wire.NewKey(k), secret}
			}
			return err
		case "key list":
			id, err := org()
			if err != nil {
				return err
			}
			rows, err := pageAll(func(p models.Page) ([]models.APIKey, string, error) { return s.ListKeys(ctx, id, p) })
			out = wire.All(rows, wire.NewKey)
			return err
		case "key revoke":
			id, err := org()
			if err != nil {
				return err
			}
			k, err := s.RevokeKey(ctx, id, *f["id"])
			if err == nil {
				out = wire.NewKey(k)
			}
			return err
		case "rotate-secret-key":
			n, err := s.ResealSecrets(ctx)
			if err == nil {
				out = map[string]any{"currentKeyId": keys.CurrentID(), "resealed": n}
			}
			return err
		case "token create":
			id, err := org()
			if err != nil {
				return err
			}
			k, secret, err := s.CreateMemberToken(ctx, id, *f["member"])
			if err == nil {
				out = map[string]string{"id": k.ID, "token": secret}
			}
			return err
		}
		fmt.Fprint(stderr, adminUsage)
		return fmt.Errorf("unknown admin command %q", cmd)
	}()
	if err != nil {
		if e, ok := apperr.As(err); ok {
			b, _ := json.Marshal(map[string]any{"error": e})
			fmt.Fprintln(stdout, string(b))
		}
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// guestRef is the id of the guest named by exactly one of id and email.
// An id is taken as given, so a removal cut short can be finished by id.
func guestRef(ctx context.Context, s *models.Store, orgID, id, email string) (string, error) {
	switch {
	case (id == "") == (email == ""):
		return "", fmt.Errorf("give exactly one of --id and --email")
	case id != "":
		return id, nil
	}
	g, err := s.GuestByEmail(ctx, orgID, email)
	if err != nil {
		return "", err
	}
	return g.ID, nil
}

func pageAll[T any](fetch func(models.Page) ([]T, string, error)) ([]T, error) {
	var all []T
	p := models.Page{Limit: 200}
	for {
		rows, next, err := fetch(p)
		if err != nil {
			return nil, err
		}
		all = append(all, rows...)
		if next == "" {
			return all, nil
		}
		p.Cursor = next
	}
}
