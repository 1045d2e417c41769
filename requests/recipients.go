package requests

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// Everyone is the reference for every active member.
const Everyone = "everyone"

// Role is what the people a request names are asked to do (approve,
// respond, review, read). It names the request field that lists them and
// the errors a refused reference gets.
type Role struct {
	// Field is the request field holding the references, e.g. "approvers".
	Field string
	// Unknown is the error code for references that match nobody able to
	// act; Ambiguous for one that names both a person and a team.
	Unknown, Ambiguous string
	// Guests admits guests; without it a guest is refused and
	// GuestRefusal says why.
	Guests       bool
	GuestRefusal string
}

// Resolve turns references into the ids of the people they name, each
// once, in order: members by email or id, teams, groups and workspaces by
// name or id (expanded now, once: later changes to a team do not change
// who was asked), `everyone`, and admitted guests where the role admits
// them. Every reference that matches nobody is refused in one error;
// one that names a person and a team is refused with both as candidates.
func Resolve(ctx context.Context, store *models.Store, orgID string, refs []string, role Role) ([]string, error) {
	d, err := store.LookUp(ctx, orgID, refs)
	if err != nil {
		return nil, err
	}
	var out, unknown []string
	add := func(ids ...string) {
		for _, id := range ids {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	for i, ref := range refs {
		ref = strings.TrimSpace(ref)
		if ref == Everyone {
			all, err := store.ActiveMemberIDs(ctx, orgID)
			if err != nil {
				return nil, err
			}
			add(all...)
			continue
		}
		member, guest, team := d.Member(ref), d.Guest(ref), d.Team(ref)
		if (member != nil || guest != nil) && team != nil {
			var person string
			if member != nil {
				person = fmt.Sprintf("member %s (%s)", member.Email, member.ID)
			} else {
				person = fmt.Sprintf("guest %s (%s)", guest.Email, guest.ID)
			}
			e := apperr.Field(role.Ambiguous, fmt.Sprintf("%s[%d]", role.Field, i),
				"%q names both a person and a %s; use an id to say which", ref, team.Kind)
			e.Candidates = []string{person, fmt.Sprintf("%s %s (%s)", team.Kind, team.Name, team.ID)}
			return nil, e
		}
		switch {
		case member != nil && !member.Active:
			unknown = append(unknown, ref+" (inactive)")
		case member != nil:
			add(member.ID)
		case guest != nil && !role.Guests:
			unknown = append(unknown, ref+" ("+role.GuestRefusal+")")
		case guest != nil:
			add(guest.ID)
		case team != nil:
			active := 0
			for _, m := range team.Members {
				if m.Active {
					add(m.ID)
					active++
				}
			}
			if active == 0 {
				unknown = append(unknown, ref+" (a "+team.Kind+" with no active members)")
			}
		default:
			unknown = append(unknown, ref)
		}
	}
	if len(unknown) > 0 {
		return nil, apperr.Field(role.Unknown, role.Field, "not an active member or admitted guest: %s", strings.Join(unknown, "; "))
	}
	return out, nil
}
