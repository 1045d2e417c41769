package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/logging"
	"github.com/assent-hq/assent/internal/payloadcodec"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// adminFlag is one of a command's own flags; every one is a string, read
// by the command's run.
type adminFlag struct{ name, usage string }

// adminCommand is one `assent admin` command: what `--help` shows about it
// and what it does. run returns what is printed as JSON.
type adminCommand struct {
	name, summary string
	flags         []adminFlag
	// temporal offers the Temporal connection flags, for commands that
	// change pending requests through their workflows.
	temporal bool
	run      func(r *adminRun) (any, error)
}

// The flags several commands share. A command names a person the one
// way, by email or id (adminRun.person); --members lists either too.
var (
	orgFlag    = adminFlag{"org", "the organisation's `id` (org_…); may be left out when the database holds exactly one"}
	memberFlag = adminFlag{"member", "the member, by `email` or id (mem_…, required)"}
	guestFlag  = adminFlag{"guest", "the guest, by `email` or id (gst_…, required)"}
	// Lists print the API's {data, nextCursor}: every row, unless
	// --limit asks for a page.
	limitFlag  = adminFlag{"limit", "at most this many `rows` (1 to 200), with nextCursor for the rest; default every row"}
	cursorFlag = adminFlag{"cursor", "the `cursor` a previous page's nextCursor gave"}
)

// listFlags are a paged list's flags.
var listFlags = []adminFlag{orgFlag, limitFlag, cursorFlag}

var adminCommands = []adminCommand{
	{name: "init", summary: "make the first organisation, its owner, an agent key and an admin key at once; refused once an organisation exists",
		flags: []adminFlag{{"name", "the organisation's `name` (required)"}, {"owner-email", "the owner's email `address` (required)"},
			{"owner-name", "the owner's `name`"}, {"plan", "the `plan`: free, team or enterprise (default free)"}},
		run: initInstance},
	{name: "org create", summary: "make an organisation (a tenant)",
		flags: []adminFlag{{"name", "the organisation's `name` (required)"}, {"plan", "the `plan`: free, team or enterprise (default free)"}},
		run: func(r *adminRun) (any, error) {
			o, err := r.svc.CreateOrganization(r.ctx, admin.NewOrganization{Name: r.str("name"), Plan: r.str("plan")})
			return ret(o, err, wire.NewOrganization)
		}},
	{name: "org list", summary: "list every organisation",
		run: func(r *adminRun) (any, error) {
			orgs, err := r.store.ListOrganizations(r.ctx)
			return listed(orgs, "", err, wire.NewOrganization)
		}},
	{name: "org update", summary: "change an organisation's name, plan or settings",
		flags: []adminFlag{orgFlag, {"name", "a new `name`"}, {"plan", "the `plan`: free, team or enterprise"},
			{"guests-may-approve", "`true|false`: whether guests may decide requests"},
			{"members-may-grant-mandates", "`true|false`: whether every member may grant standing mandates (else owners and administrators)"},
			{"max-expiry-seconds", "the longest a request may wait, in `seconds` (60 to 31536000); also the expiry of a request made without one"},
			{"decision-token-ttl-seconds", "how long an approval's decision token holds after the decision, in `seconds` (60 to 2592000)"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			in := admin.OrganizationPatch{Name: r.optional("name"), Plan: r.optional("plan")}
			if in.GuestsMayApprove, err = r.optionalBool("guests-may-approve"); err != nil {
				return nil, err
			}
			if in.MembersMayGrantMandates, err = r.optionalBool("members-may-grant-mandates"); err != nil {
				return nil, err
			}
			if r.set["max-expiry-seconds"] {
				var n int64
				if _, err := fmt.Sscan(r.str("max-expiry-seconds"), &n); err != nil {
					return nil, fmt.Errorf("--max-expiry-seconds must be an integer")
				}
				in.MaxApprovalExpirySeconds = &n
			}
			if r.set["decision-token-ttl-seconds"] {
				var n int64
				if _, err := fmt.Sscan(r.str("decision-token-ttl-seconds"), &n); err != nil {
					return nil, fmt.Errorf("--decision-token-ttl-seconds must be an integer")
				}
				in.DecisionTokenTTLSeconds = &n
			}
			o, err := r.svc.UpdateOrganization(r.ctx, id, admin.ByOperator, in)
			return ret(o, err, wire.NewOrganization)
		}},
	{name: "member add", summary: "add a person to an organisation",
		flags: []adminFlag{orgFlag, {"email", "their email `address` (required)"}, {"name", "their `name`"},
			{"role", "the `role`: owner, admin or member (default member)"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			m, err := r.svc.CreateMember(r.ctx, id, admin.Operator, admin.NewMember{Email: r.str("email"), Name: r.str("name"), Role: r.str("role")})
			return ret(m, err, wire.NewMember)
		}},
	{name: "member list", summary: "list an organisation's members",
		flags: listFlags,
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			rows, next, err := pageOf(r, func(p models.Page) ([]models.Member, string, error) { return r.svc.ListMembers(r.ctx, id, p) })
			return listed(rows, next, err, wire.NewMember)
		}},
	{name: "member update", summary: "rename a member, change their role or (de)activate them",
		flags: []adminFlag{orgFlag, memberFlag, {"name", "a new `name`"},
			{"role", "the `role`: owner, admin or member"}, {"active", "`true|false`: false ends their sessions and tokens, true lets them back in"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			member, err := r.person(memberFlag.name, ids.Member, id)
			if err != nil {
				return nil, err
			}
			active, err := r.optionalBool("active")
			if err != nil {
				return nil, err
			}
			m, err := r.svc.UpdateMember(r.ctx, id, admin.Operator, member, admin.MemberPatch{Name: r.optional("name"), Role: r.optional("role"), Active: active})
			return ret(m, err, wire.NewMember)
		}},
	{name: "team create", summary: "make a team, group or workspace of members",
		flags: []adminFlag{orgFlag, {"name", "the team's `name` (required)"}, {"kind", "the `kind`: team, group or workspace (required)"},
			{"members", "a comma-separated `list` of member emails or ids"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			t, err := r.svc.CreateTeam(r.ctx, id, admin.NewTeam{Name: r.str("name"), Kind: r.str("kind"), Members: r.list("members")})
			return ret(t, err, wire.NewTeam)
		}},
	{name: "team list", summary: "list teams, groups and workspaces with their members",
		flags: listFlags,
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			rows, next, err := pageOf(r, func(p models.Page) ([]models.Team, string, error) { return r.svc.ListTeams(r.ctx, id, p) })
			return listed(rows, next, err, wire.NewTeam)
		}},
	{name: "team update", summary: "rename a team or replace its members; requests already made are unchanged",
		flags: []adminFlag{orgFlag, {"id", "the team's `id` (team_…, required)"}, {"name", "a new `name`"},
			{"members", "a comma-separated `list` of member emails or ids that replaces the team's; empty leaves it with none"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			in := admin.TeamPatch{Name: r.optional("name")}
			if r.set["members"] {
				members := append([]string{}, r.list("members")...)
				in.Members = &members
			}
			t, err := r.svc.UpdateTeam(r.ctx, id, r.str("id"), in)
			return ret(t, err, wire.NewTeam)
		}},
	{name: "team remove", summary: "remove a team; requests already made keep the people it stood for",
		flags: []adminFlag{orgFlag, {"id", "the team's `id` (team_…, required)"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			if err := r.svc.DeleteTeam(r.ctx, id, r.str("id")); err != nil {
				return nil, err
			}
			return map[string]any{"id": r.str("id"), "removed": true}, nil
		}},
	{name: "guest add", summary: "admit an address that is not a member, to answer what is sent to it",
		flags: []adminFlag{orgFlag, {"email", "their email `address` (required)"}, {"name", "their `name`"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			g, _, err := r.svc.CreateGuest(r.ctx, id, admin.NewGuest{Email: r.str("email"), Name: r.str("name")})
			return ret(g, err, wire.NewGuest)
		}},
	{name: "guest list", summary: "list admitted guests",
		flags: listFlags,
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			rows, next, err := pageOf(r, func(p models.Page) ([]models.Guest, string, error) { return r.svc.ListGuests(r.ctx, id, p) })
			return listed(rows, next, err, wire.NewGuest)
		}},
	{name: "guest update", summary: "rename a guest; requests already made are unchanged",
		flags: []adminFlag{orgFlag, guestFlag, {"name", "a new `name`"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			guest, err := r.person(guestFlag.name, ids.Guest, id)
			if err != nil {
				return nil, err
			}
			g, err := r.svc.UpdateGuest(r.ctx, id, guest, admin.GuestPatch{Name: r.optional("name")})
			return ret(g, err, wire.NewGuest)
		}},
	{name: "guest remove", summary: "remove a guest: ends their sessions and links, takes them off the approvals, requests for information and reviews waiting on them (needs Temporal)",
		flags: []adminFlag{orgFlag, guestFlag}, temporal: true,
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			guest, err := r.person(guestFlag.name, ids.Guest, id)
			if err != nil {
				return nil, err
			}
			// Pending requests change through their workflows.
			tc, err := dialTemporal(r.ctx, r.cfg, r.log(), r.keys, nil)
			if err != nil {
				return nil, err
			}
			defer tc.Close()
			// Another instance's namespace holds workflows this key cannot
			// read: refuse it, as serve and worker do.
			if err := payloadcodec.CheckMarker(r.ctx, tc, r.cfg.TemporalNamespace, r.keys); err != nil {
				return nil, err
			}
			if err := r.services(tc).Admin.RemoveGuest(r.ctx, id, guest, admin.Operator); err != nil {
				return nil, err
			}
			return map[string]any{"id": guest, "removed": true}, nil
		}},
	{name: "key create", summary: "issue an API key; its secret is printed this once",
		flags: []adminFlag{orgFlag, {"name", "a `name` to know the key by (required)"}, {"kind", "the `kind`: agent or admin (required)"},
			{"scopes", "a comma-separated `list` of an agent key's scopes, e.g. approvals:read,approvals:write"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			k, secret, err := r.svc.CreateKey(r.ctx, id, admin.Operator, admin.NewKey{Name: r.str("name"), Kind: r.str("kind"), Scopes: r.list("scopes")})
			if err != nil {
				return nil, err
			}
			return struct {
				wire.Key
				Secret string `json:"key"`
			}{wire.NewKey(k), secret}, nil
		}},
	{name: "key list", summary: "list API keys (without their secrets)",
		flags: listFlags,
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			rows, next, err := pageOf(r, func(p models.Page) ([]models.APIKey, string, error) { return r.svc.ListKeys(r.ctx, id, p) })
			return listed(rows, next, err, wire.NewKey)
		}},
	{name: "key revoke", summary: "revoke an API key; requests signed with it fail at once",
		flags: []adminFlag{orgFlag, {"id", "the key's `id` (key_…, required)"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			k, err := r.svc.RevokeKey(r.ctx, id, admin.Operator, r.str("id"))
			return ret(k, err, wire.NewKey)
		}},
	{name: "token create", summary: "issue a member token, with which a person calls the API as themselves; audited",
		flags: []adminFlag{orgFlag, memberFlag, {"scopes", "comma-separated `scopes` (default: every scope)"}},
		run: func(r *adminRun) (any, error) {
			id, err := r.org()
			if err != nil {
				return nil, err
			}
			member, err := r.person(memberFlag.name, ids.Member, id)
			if err != nil {
				return nil, err
			}
			k, secret, err := r.svc.MintMemberToken(r.ctx, id, admin.Operator, nil, member, admin.NewMemberToken{Scopes: r.list("scopes")})
			if err != nil {
				return nil, err
			}
			return map[string]string{"id": k.ID, "token": secret}, nil
		}},
	{name: "rotate-secret-key", summary: "re-seal every stored secret under the first key of ASSENT_SECRET_KEY",
		run: func(r *adminRun) (any, error) {
			n, err := r.store.ResealSecrets(r.ctx)
			if err != nil {
				return nil, err
			}
			return map[string]any{"currentKeyId": r.keys.CurrentID(), "resealed": n}, nil
		}},
	{name: "rotate-evidence-key", summary: "sign evidence exports with a new key from now on; the old one stays published to check older exports",
		run: func(r *adminRun) (any, error) {
			k, err := r.store.RotateEvidenceKey(r.ctx)
			if err != nil {
				return nil, err
			}
			return map[string]any{"evidenceKeyId": k.ID}, nil
		}},
	{name: "rotate-decision-key", summary: "sign decision tokens with a new key from now on; the old one stays published to check tokens it signed",
		run: func(r *adminRun) (any, error) {
			k, err := r.store.RotateSigningKey(r.ctx, models.DecisionFamily)
			if err != nil {
				return nil, err
			}
			return map[string]any{"decisionKeyId": k.ID}, nil
		}},
}

// ret is v on the wire, or err.
func ret[T, W any](v *T, err error, toWire func(*T) W) (any, error) {
	if err != nil {
		return nil, err
	}
	return toWire(v), nil
}

// adminUsage lists the commands with their summaries.
func adminUsage(w io.Writer) {
	fmt.Fprint(w, "usage: assent admin <command> [flags]\n\ncommands:\n")
	for _, c := range adminCommands {
		fmt.Fprintf(w, "  %-18s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run "assent admin <command> --help" for a command's flags.
Every command prints JSON; --org may be left out when the database holds exactly one organisation.
`)
}

// findAdminCommand is the command args start with ("team update",
// "rotate-secret-key") and the arguments after its name.
func findAdminCommand(args []string) (*adminCommand, []string) {
	for n := min(2, len(args)); n > 0; n-- {
		name := strings.Join(args[:n], " ")
		for i := range adminCommands {
			if adminCommands[i].name == name {
				return &adminCommands[i], args[n:]
			}
		}
	}
	return nil, nil
}

// runAdmin manages the directory from the shell and prints JSON. It goes
// through the same admin service as the admin API, acting for the whole
// organisation like an admin key.
func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
		adminUsage(stdout)
		return nil
	}
	cmd, rest := findAdminCommand(args)
	if cmd == nil {
		adminUsage(stderr)
		if len(args) == 0 {
			return fmt.Errorf("admin needs a command")
		}
		return fmt.Errorf("unknown admin command %q; the commands are listed above", strings.Join(args[:min(2, len(args))], " "))
	}
	r, err := cmd.parse(ctx, rest, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}

	db, err := models.Open(r.cfg.Database())
	if err != nil {
		return err
	}
	defer models.Close(db)
	if err := models.RequireMigrated(db); err != nil {
		return err
	}
	if r.keys, err = r.cfg.SecretKeys(config.KeyOrDataDir); err != nil {
		return err
	}
	r.store = models.NewStore(db, r.keys)
	r.svc = r.services(nil).Admin

	out, err := cmd.run(r)
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

// parse reads the command's own flags and the configuration flags it
// uses; --help prints just those and returns flag.ErrHelp.
func (c *adminCommand) parse(ctx context.Context, args []string, stdout, stderr io.Writer) (*adminRun, error) {
	r := &adminRun{ctx: ctx, stderr: stderr, cfg: &config.Config{}, values: map[string]*string{}, set: map[string]bool{}}
	// The configuration registers all its flags (and reads the
	// environment); the command offers only those it uses.
	all := flag.NewFlagSet("", flag.ContinueOnError)
	r.cfg.Register(all)
	// Every admin command opens the database; only some reach Temporal.
	settings := config.Flags("admin")
	if !c.temporal {
		settings = slices.DeleteFunc(settings, func(f string) bool { return strings.HasPrefix(f, "temporal-") })
	}

	fs := flag.NewFlagSet("assent admin "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, f := range c.flags {
		r.values[f.name] = fs.String(f.name, "", f.usage)
	}
	offer(fs, all, settings)
	// Help goes to stdout; after a mistake, to stderr below the error.
	fs.Usage = func() {}
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "usage: assent admin %s [flags]\n\n%s\n", c.name, c.summary)
		if len(c.flags) > 0 {
			fmt.Fprint(w, "\nflags:\n")
			for _, f := range c.flags {
				printFlag(w, fs.Lookup(f.name))
			}
		}
		fmt.Fprint(w, "\nsettings (each also read from the environment variable named):\n")
		for _, name := range settings {
			printFlag(w, fs.Lookup(name))
		}
	}
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("assent admin %s takes only flags; got %q", c.name, fs.Arg(0))
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage(stdout)
		return nil, err
	case err != nil:
		usage(stderr)
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) { r.set[f.Name] = true })
	return r, nil
}

// printFlag writes one flag and its description. Unlike
// flag.PrintDefaults it shows no current value: a database URL read from
// the environment may hold a password.
func printFlag(w io.Writer, f *flag.Flag) {
	arg, usage := flag.UnquoteUsage(f)
	fmt.Fprintf(w, "  --%s %s\n      %s\n", f.Name, arg, usage)
}

// adminRun is what a command's run works with: its flags and the store.
type adminRun struct {
	ctx    context.Context
	stderr io.Writer
	cfg    *config.Config
	keys   *secretkey.Ring
	store  *models.Store
	svc    *admin.Service
	values map[string]*string
	// set holds the flags given on the command line.
	set map[string]bool
}

// log is the commands' logger: warnings and errors, on stderr.
func (r *adminRun) log() *slog.Logger { return logging.New(r.stderr, slog.LevelWarn) }

// services are the domain services over the command's store; tc is nil
// for a command that changes no request, which then needs no Temporal.
func (r *adminRun) services(tc client.Client) *app.Services {
	return app.Build(app.Deps{Store: r.store, Temporal: tc, Logger: r.log()})
}

func (r *adminRun) str(name string) string { return *r.values[name] }

// optional is the flag's value when given, nil otherwise.
func (r *adminRun) optional(name string) *string {
	if !r.set[name] {
		return nil
	}
	return r.values[name]
}

func (r *adminRun) optionalBool(name string) (*bool, error) {
	if !r.set[name] {
		return nil, nil
	}
	switch r.str(name) {
	case "true":
		return new(true), nil
	case "false":
		return new(false), nil
	}
	return nil, fmt.Errorf("--%s must be true or false", name)
}

// list splits a comma-separated flag; empty is nil.
func (r *adminRun) list(name string) []string {
	if r.str(name) == "" {
		return nil
	}
	parts := strings.Split(r.str(name), ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// org is --org, or the only organisation there is.
func (r *adminRun) org() (string, error) {
	if id := r.str("org"); id != "" {
		return id, nil
	}
	orgs, err := r.store.ListOrganizations(r.ctx)
	if err != nil {
		return "", err
	}
	if len(orgs) != 1 {
		return "", fmt.Errorf("--org is required: the database holds %d organisations", len(orgs))
	}
	return orgs[0].ID, nil
}

// person is the id of the member or guest (prefix ids.Member or
// ids.Guest) the flag called name names: every command names a person
// this one way, by email or id. An id is taken as given, so a guest's
// removal cut short can be finished by id; the service says when it
// names no one.
func (r *adminRun) person(name, prefix, orgID string) (string, error) {
	ref := strings.TrimSpace(r.str(name))
	kind := map[string]string{ids.Member: "member", ids.Guest: "guest"}[prefix]
	switch {
	case ref == "":
		return "", fmt.Errorf("--%s is required: the %s's email or id (%s_…)", name, kind, prefix)
	case ids.HasPrefix(ref, prefix):
		return ref, nil
	case !strings.Contains(ref, "@"):
		return "", fmt.Errorf("--%s %q is neither an email nor a %s's id (%s_…)", name, ref, kind, prefix)
	}
	d, err := r.store.LookUp(r.ctx, orgID, []string{ref})
	if err != nil {
		return "", err
	}
	email := models.NormalizeEmail(ref)
	if prefix == ids.Member {
		for _, m := range d.Members(ref) {
			if m.Email == email {
				return m.ID, nil
			}
		}
	} else {
		for _, g := range d.Guests(ref) {
			if g.Email == email {
				return g.ID, nil
			}
		}
	}
	return "", apperr.Field(apperr.NotFound, name, "no %s of this organisation has the email %s", kind, email)
}

// pageOf is one page of a list when --limit is given (from --cursor),
// else every row.
func pageOf[T any](r *adminRun, fetch func(models.Page) ([]T, string, error)) ([]T, string, error) {
	if !r.set[limitFlag.name] {
		if r.str(cursorFlag.name) != "" {
			return nil, "", fmt.Errorf("--cursor goes with --limit")
		}
		rows, err := pageAll(fetch)
		return rows, "", err
	}
	n, err := strconv.Atoi(r.str(limitFlag.name))
	if err != nil || n < 1 || n > 200 {
		return nil, "", fmt.Errorf("--limit must be an integer from 1 to 200")
	}
	return fetch(models.Page{Limit: n, Cursor: r.str(cursorFlag.name)})
}

// listed is rows on the wire in the API's list envelope, or err.
func listed[S, T any](rows []S, next string, err error, toWire func(*S) T) (any, error) {
	if err != nil {
		return nil, err
	}
	return wire.NewList(rows, next, toWire), nil
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
