package requests

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agnivade/levenshtein"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// The phrases that name no one in the directory.
const (
	// Everyone is every active member of the organisation.
	Everyone = "everyone"
	// Public is anyone with the link, signed in or not (audiences only).
	Public = "public"
)

// Role is what the people a request names are asked to do (approve,
// respond, review, read). It names the request field that lists them and
// the errors a refused reference gets.
type Role struct {
	// Field is the request field holding the references, e.g. "approvers".
	Field string
	// Unknown is the error code for references that match nobody able to
	// act; Ambiguous for one that matches more than one person or team.
	Unknown, Ambiguous string
	// Guests admits guests; without it a guest is refused and
	// GuestRefusal says why.
	Guests       bool
	GuestRefusal string
	// Public admits `public`, anyone with the link (audiences only).
	Public bool
}

// Match is what one reference means: a member, a guest, a team (group,
// workspace), everyone or the public, with the people it stands for now.
type Match struct {
	Phrase  string             `json:"phrase"`
	Kind    string             `json:"kind"`
	ID      string             `json:"id,omitempty"`
	Name    string             `json:"name"`
	Members []models.PersonRef `json:"members"`
}

// Kinds of match besides people (models.ApproverMember, ApproverGuest)
// and teams (their own kind).
const (
	KindEveryone = Everyone
	KindPublic   = Public
)

// Directory is what resolving people reads: the organisation's people,
// teams and groups, and who stands in for whom.
type Directory interface {
	LookUp(ctx context.Context, orgID string, refs []string) (*models.Directory, error)
	Entries(ctx context.Context, orgID string) ([]models.Entry, error)
	ActiveMembers(ctx context.Context, orgID string, roles ...string) ([]models.PersonRef, error)
	ActiveDelegations(ctx context.Context, orgID string, t time.Time) (map[string]models.Delegation, error)
	People(ctx context.Context, orgID string, personIDs []string) ([]*models.Person, error)
}

// Resolve turns references into the ids of the people they name, each
// once, in order (see ResolveEach). Teams are expanded now, once: later
// changes to a team do not change who was asked.
func Resolve(ctx context.Context, store Directory, orgID string, refs []string, role Role) ([]string, error) {
	people, err := resolveNamed(ctx, store, orgID, refs, role)
	return IDsOf(people), err
}

// ResolveVia is Resolve with who each person is, as the directory has
// them, and how they were named: every reference that reached them (a
// team and the person by email, say), in order. A person away is
// replaced by who stands in for them on the request h describes
// (StandIns). The people named are read once, with the references; only
// who stands in for someone is read again.
func ResolveVia(ctx context.Context, store Directory, orgID string, refs []string, role Role, h Handover) ([]models.PersonRef, error) {
	named, err := resolveNamed(ctx, store, orgID, refs, role)
	if err != nil {
		return nil, err
	}
	return WithStandIns(ctx, store, orgID, named, role.Field, h)
}

// WithStandIns is named with each person away replaced by who stands in
// for them on the request h describes (StandIns); only those are read
// from the directory.
func WithStandIns(ctx context.Context, store Directory, orgID string, named []models.PersonRef, field string, h Handover) ([]models.PersonRef, error) {
	ids, via, err := StandIns(ctx, store, orgID, IDsOf(named), AskedVia(named), field, h)
	if err != nil {
		return nil, err
	}
	known := make(map[string]models.PersonRef, len(named))
	for _, p := range named {
		known[p.ID] = p
	}
	var standIns []string
	for _, id := range ids {
		if _, ok := known[id]; !ok {
			standIns = append(standIns, id)
		}
	}
	if len(standIns) > 0 {
		people, err := store.People(ctx, orgID, standIns)
		if err != nil {
			return nil, err
		}
		for _, p := range people {
			known[p.ID()] = p.DirectoryRef()
		}
	}
	out := make([]models.PersonRef, len(ids))
	for i, id := range ids {
		p, ok := known[id]
		if !ok {
			p = models.PersonRef{ID: id, Kind: models.ApproverMember} // gone since; the id stays
		}
		p.Via = via[id]
		out[i] = p
	}
	return out, nil
}

// ResolveNamed is ResolveVia without the hand-over: the people as named,
// for people asked later (an escalation), whose stand-ins are read when
// they are asked.
func ResolveNamed(ctx context.Context, store Directory, orgID string, refs []string, role Role) ([]string, map[string][]models.Via, error) {
	people, err := resolveNamed(ctx, store, orgID, refs, role)
	if err != nil {
		return nil, nil, err
	}
	return IDsOf(people), AskedVia(people), nil
}

// resolveNamed is each person refs name once, in order, as the directory
// has them, with every reference that reached them.
func resolveNamed(ctx context.Context, store Directory, orgID string, refs []string, role Role) ([]models.PersonRef, error) {
	matches, err := ResolveEach(ctx, store, orgID, refs, role)
	if err != nil {
		return nil, err
	}
	var out []models.PersonRef
	at := map[string]int{}
	for _, m := range matches {
		for _, p := range m.Members {
			i, ok := at[p.ID]
			if !ok {
				i, p.Via = len(out), nil
				at[p.ID] = i
				out = append(out, p)
			}
			out[i].Via = append(out[i].Via, models.Via{Field: role.Field, Kind: m.Kind, ID: m.ID, Name: m.Name})
		}
	}
	return out, nil
}

// IDsOf are the ids of people, in order.
func IDsOf(people []models.PersonRef) []string {
	out := make([]string, len(people))
	for i, p := range people {
		out[i] = p.ID
	}
	return out
}

// MaxDelegationHops is how far a chain of delegations is followed: A away
// to B, B to C, C to D asks D; D's own delegation is not followed.
const MaxDelegationHops = 3

// StandIns is the one place a delegation changes who a request asks: each
// of ids away now (an active delegation to an active member) is replaced
// by who stands in for them on the request h describes (Handover.StandIn),
// who is reached through a Via of kind models.ViaDelegation naming the
// person away. Like teams, this is resolved once, when the people are
// asked; ids keep their order.
func StandIns(ctx context.Context, store Directory, orgID string, ids []string, via map[string][]models.Via, field string, h Handover) ([]string, map[string][]models.Via, error) {
	away, err := store.ActiveDelegations(ctx, orgID, models.Now())
	if err != nil || len(away) == 0 {
		return ids, via, err
	}
	var out []string
	outVia := map[string][]models.Via{}
	for _, id := range ids {
		to, err := h.StandIn(ctx, away, id)
		if err != nil {
			return nil, nil, err
		}
		if !slices.Contains(out, to) {
			out = append(out, to)
		}
		if to == id {
			outVia[id] = append(outVia[id], via[id]...)
			continue
		}
		d := away[id]
		outVia[to] = append(outVia[to], models.Via{Field: field, Kind: models.ViaDelegation, ID: id, Name: d.DelegatorName()})
	}
	return out, outVia, nil
}

// Handover is what one request allows of handing it to who stands in for
// someone away: never to its requester, who may not decide their own
// approval and would only be asking themselves on the other kinds, and,
// with May, only to whom May admits.
type Handover struct {
	// Requester is who made the request: a member id, or an agent key's.
	Requester string
	// May, when set, says whether a person may take the request (a
	// review's delegate must be able to read its report).
	May func(ctx context.Context, personID string) (bool, error)
}

// StandIn is who stands in for id on the request, given the delegations
// holding now (by delegator): the end of id's Chain, short of the first
// person the request may not go to (its requester, or one May refuses),
// where the chain stops and whoever comes before them stays asked. It is
// id when they are not away, or are the requester, who is not away from a
// request they make.
func (h Handover) StandIn(ctx context.Context, away map[string]models.Delegation, id string) (string, error) {
	to := id
	if id == h.Requester {
		return to, nil
	}
	for _, next := range Chain(away, id) {
		if next == h.Requester {
			break
		}
		if h.May != nil {
			ok, err := h.May(ctx, next)
			if err != nil {
				return "", err
			}
			if !ok {
				break
			}
		}
		to = next
	}
	return to, nil
}

// Delegate is who stands in for id on the request, as the workflows'
// addDelegate Update asks them; false when nobody does (id is not away, or
// the request may go to none of their chain).
func (h Handover) Delegate(ctx context.Context, away map[string]models.Delegation, id string) (workflows.AddDelegateRequest, bool, error) {
	to, err := h.StandIn(ctx, away, id)
	if err != nil || to == id {
		return workflows.AddDelegateRequest{}, false, err
	}
	d := away[id]
	r := workflows.AddDelegateRequest{DelegatorID: id, DelegatorName: d.DelegatorName(), DelegateID: to, DelegateName: to}
	for _, d := range away {
		if d.DelegateID == to {
			r.DelegateName = d.DelegateName()
			break
		}
	}
	return r, true, nil
}

// Chain is who stands in for id in turn, given the delegations holding
// now (by delegator): id's delegate, theirs, and so on, at most
// MaxDelegationHops on and never back to id; empty when id is not away.
func Chain(away map[string]models.Delegation, id string) []string {
	var out []string
	for at := id; len(out) < MaxDelegationHops; {
		d, ok := away[at]
		if !ok || d.DelegateID == id {
			break
		}
		at = d.DelegateID
		out = append(out, at)
	}
	return out
}

// ResolveEach says what each reference means: members by email, id or
// display name, teams, groups and workspaces by name or id (names in any
// case), `everyone`, admitted guests where the role admits them, and
// `public` where it admits that. Every reference that matches nobody is
// refused in one error, with the closest names as candidates; one that
// matches more than one person or team is refused with all of them.
// Nothing is ever guessed.
func ResolveEach(ctx context.Context, store Directory, orgID string, refs []string, role Role) ([]Match, error) {
	d, err := store.LookUp(ctx, orgID, refs)
	if err != nil {
		return nil, err
	}
	var out []Match
	var unknown, suggest []string
	for i, ref := range refs {
		ref = strings.TrimSpace(ref)
		members, guests, teams := d.Members(ref), d.Guests(ref), d.Teams(ref)
		named := len(members) + len(guests) + len(teams)
		if (ref == Everyone || (ref == Public && role.Public)) && named > 0 {
			e := apperr.Field(role.Ambiguous, fmt.Sprintf("%s[%d]", role.Field, i),
				"%q means %s, and also names someone or a team here; use their email or id to name them", ref, ref)
			e.Candidates = append([]string{ref}, candidates(members, guests, teams)...)
			return nil, e
		}
		switch {
		case ref == Everyone:
			all, err := store.ActiveMembers(ctx, orgID)
			if err != nil {
				return nil, err
			}
			out = append(out, Match{Phrase: ref, Kind: KindEveryone, Name: "Everyone", Members: all})
			continue
		case ref == Public && role.Public:
			out = append(out, Match{Phrase: ref, Kind: KindPublic, Name: "Anyone with the link", Members: []models.PersonRef{}})
			continue
		}
		if named > 1 {
			e := apperr.Field(role.Ambiguous, fmt.Sprintf("%s[%d]", role.Field, i),
				"%q matches more than one person or team; use an email or id to say which", ref)
			e.Candidates = candidates(members, guests, teams)
			return nil, e
		}
		switch {
		case len(members) == 1 && !members[0].Active:
			unknown = append(unknown, ref+" (inactive)")
		case len(members) == 1:
			m := members[0]
			out = append(out, Match{Phrase: ref, Kind: models.ApproverMember, ID: m.ID, Name: m.DisplayName(),
				Members: []models.PersonRef{{ID: m.ID, Name: m.Name, Email: m.Email, Kind: models.ApproverMember}}})
		case len(guests) == 1 && !role.Guests:
			unknown = append(unknown, ref+" ("+role.GuestRefusal+")")
		case len(guests) == 1:
			g := guests[0]
			name := g.Name
			if name == "" {
				name = g.Email
			}
			out = append(out, Match{Phrase: ref, Kind: models.ApproverGuest, ID: g.ID, Name: name,
				Members: []models.PersonRef{{ID: g.ID, Name: g.Name, Email: g.Email, Kind: models.ApproverGuest}}})
		case len(teams) == 1:
			t := teams[0]
			m := Match{Phrase: ref, Kind: t.Kind, ID: t.ID, Name: t.Name, Members: []models.PersonRef{}}
			for _, tm := range t.Members {
				if tm.Active {
					m.Members = append(m.Members, models.PersonRef{ID: tm.ID, Name: tm.Name, Email: tm.Email, Kind: models.ApproverMember})
				}
			}
			if len(m.Members) == 0 {
				unknown = append(unknown, ref+" (a "+t.Kind+" with no active members)")
				continue
			}
			out = append(out, m)
		default:
			unknown = append(unknown, ref)
			suggest = append(suggest, ref)
		}
	}
	if len(unknown) == 0 {
		return out, nil
	}
	e := apperr.Field(role.Unknown, role.Field, "not an active member, admitted guest or team: %s", strings.Join(unknown, "; "))
	if len(suggest) > 0 {
		entries, err := store.Entries(ctx, orgID)
		if err != nil {
			return nil, err
		}
		for _, ref := range suggest {
			for _, c := range closest(ref, entries, role.Guests) {
				if !slices.Contains(e.Candidates, c) {
					e.Candidates = append(e.Candidates, c)
				}
			}
		}
	}
	return nil, e
}

// candidates names every match of an ambiguous reference.
func candidates(members []*models.Member, guests []*models.Guest, teams []*models.Team) []string {
	var out []string
	for _, m := range members {
		out = append(out, describe(models.Entry{Kind: models.ApproverMember, ID: m.ID, Name: m.Name, Email: m.Email}))
	}
	for _, g := range guests {
		out = append(out, describe(models.Entry{Kind: models.ApproverGuest, ID: g.ID, Name: g.Name, Email: g.Email}))
	}
	for _, t := range teams {
		out = append(out, describe(models.Entry{Kind: t.Kind, ID: t.ID, Name: t.Name}))
	}
	return out
}

// describe names a candidate so that its id can be sent back: "member
// Dana Lee <dana@example.com> (mem_…)", "team Ops (team_…)".
func describe(e models.Entry) string {
	switch {
	case e.Email == "":
		return fmt.Sprintf("%s %s (%s)", e.Kind, e.Name, e.ID)
	case e.Name == "":
		return fmt.Sprintf("%s %s (%s)", e.Kind, e.Email, e.ID)
	default:
		return fmt.Sprintf("%s %s <%s> (%s)", e.Kind, e.Name, e.Email, e.ID)
	}
}

// MaxCandidates bounds the suggestions for one reference.
const MaxCandidates = 5

// DescribePerson names a person as a candidate, as describe does.
func DescribePerson(p *models.Person) string {
	if p.Guest != nil {
		return describe(models.Entry{Kind: models.ApproverGuest, ID: p.Guest.ID, Name: p.Guest.Name, Email: p.Guest.Email})
	}
	return describe(models.Entry{Kind: models.ApproverMember, ID: p.Member.ID, Name: p.Member.Name, Email: p.Member.Email})
}

// closest are the entries ref most likely meant: a name, email or
// address part within a few edits of it (a near-miss spelling), or a
// name with a word starting with it; nearest first.
func closest(ref string, entries []models.Entry, guests bool) []string {
	ref = strings.ToLower(strings.Join(strings.Fields(ref), " "))
	if ref == "" {
		return nil
	}
	limit := max(1, len(ref)/3)
	type scored struct {
		entry models.Entry
		dist  int
	}
	var found []scored
	for _, e := range entries {
		if e.Kind == models.ApproverGuest && !guests {
			continue
		}
		name := strings.ToLower(e.Name)
		local, _, _ := strings.Cut(e.Email, "@")
		best := limit + 1
		for _, s := range []string{name, e.Email, local} {
			if s != "" {
				best = min(best, levenshtein.ComputeDistance(ref, s))
			}
		}
		if best > limit && len(ref) >= 3 {
			for _, word := range strings.Fields(name) {
				if strings.HasPrefix(word, ref) {
					best = limit
				}
			}
		}
		if best <= limit {
			found = append(found, scored{e, best})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return cmp.Compare(a.dist, b.dist) })
	var out []string
	for _, s := range found[:min(len(found), MaxCandidates)] {
		out = append(out, describe(s.entry))
	}
	return out
}
