package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/wire"
)

// audienceRole resolves audiences: people (guests included), teams,
// everyone and the public.
var audienceRole = requests.Role{Field: "audience", Unknown: apperr.UnknownAudience, Ambiguous: apperr.AmbiguousAudience,
	Guests: true, Public: true}

// AudienceInput is an audience: plain-language phrases.
type AudienceInput struct {
	Audience []string `json:"audience" validate:"required,min=1,max=50,dive,required,max=320"`
}

// ResolveAudience says what each phrase of an audience means, or refuses
// the audience as a share would, before anything is granted.
func (s *Service) ResolveAudience(ctx context.Context, orgID string, in *AudienceInput) ([]requests.Match, error) {
	return requests.ResolveEach(ctx, s.store, orgID, in.Audience, audienceRole)
}

// grantsFor resolves audience into grants of r, refusing the whole
// audience when any phrase is unknown, ambiguous or forbidden by the
// sharing rules (the built-in ones, then the organisation's).
func (s *Service) grantsFor(ctx context.Context, r *models.Report, by models.Actor, audience []string) ([]models.NewGrant, error) {
	orgID := r.OrganizationID
	matches, err := requests.ResolveEach(ctx, s.store, orgID, audience, audienceRole)
	if err != nil {
		return nil, err
	}
	policy, err := s.policyFor(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := make([]models.NewGrant, len(matches))
	for i, m := range matches {
		name := m.Name
		if len(m.Members) == 1 && (m.Kind == models.ApproverMember || m.Kind == models.ApproverGuest) {
			name = m.Members[0].Email
		}
		if m.Kind == requests.KindEveryone || m.Kind == requests.KindPublic {
			name = m.Kind
		}
		out[i] = models.NewGrant{Kind: m.Kind, SubjectID: m.ID, Name: name}
		if err := policy.check(r, out[i], by, fmt.Sprintf("audience[%d]", i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sharingPolicy is every sharing rule a grant is held to: the built-in
// ones (mayGrant), then the organisation's enabled rules of kind sharing.
type sharingPolicy struct{ rules []rules.Rule }

func (s *Service) policyFor(ctx context.Context, orgID string) (*sharingPolicy, error) {
	stored, err := s.store.EnabledRules(ctx, orgID)
	if err != nil {
		return nil, err
	}
	p := &sharingPolicy{}
	for _, r := range stored {
		if r.Kind == rules.KindSharing {
			p.rules = append(p.rules, rules.Rule{Name: r.Name, Kind: r.Kind, Condition: r.Condition})
		}
	}
	return p, nil
}

// check refuses grant g of r made by by, naming field.
func (p *sharingPolicy) check(r *models.Report, g models.NewGrant, by models.Actor, field string) error {
	if err := mayGrant(r.Classification, by, g, field); err != nil {
		return err
	}
	rule, unevaluated := rules.Forbids(p.rules, reportInput(r), grantInput(g, by))
	if unevaluated != nil { // sharing fails closed
		return apperr.Field(apperr.SharingDenied, field, "sharing rule %q of this organisation could not be evaluated for this grant (%v), so it forbids sharing this report with %s",
			rule, unevaluated, g.Name)
	}
	if rule != "" {
		return apperr.Field(apperr.SharingDenied, field, "sharing rule %q of this organisation forbids sharing this report with %s", rule, g.Name)
	}
	return nil
}

// reportInput is a report as sharing rules see it (the API's fields).
func reportInput(r *models.Report) map[string]any {
	w := wire.NewReport(r, nil, "")
	return map[string]any{"id": w.ID, "title": w.Title, "slug": w.Slug, "classification": w.Classification, "living": w.Living,
		"owner": map[string]any{"type": w.Owner.Type, "id": w.Owner.ID, "name": w.Owner.Name}}
}

// grantInput is a grant as sharing rules see it.
func grantInput(g models.NewGrant, by models.Actor) map[string]any {
	byType := "key"
	if by.IsPerson {
		byType = "member"
	}
	return map[string]any{"kind": g.Kind, "id": g.SubjectID, "name": g.Name,
		"by": map[string]any{"type": byType, "id": by.ID, "name": by.Name}}
}

// mayGrant holds grant g to the sharing rules: an agent key never makes a
// report public, a confidential report is never public, a restricted one
// goes only to people named one by one, and neither reaches an address
// the organisation has not admitted (a send would make it a guest).
func mayGrant(class string, by models.Actor, g models.NewGrant, field string) error {
	kind := g.Kind
	person := kind == models.ApproverMember || kind == models.ApproverGuest
	switch {
	case kind == models.ApproverGuest && g.SubjectID == "" && (class == models.ClassConfidential || class == models.ClassRestricted):
		return apperr.Field(apperr.SharingDenied, field,
			"sharing rule \"%s reports go only to people the organisation knows\": %s is not a member or admitted guest; an administrator admits guests", class, g.Name)
	case kind == models.GrantPublic && !by.IsPerson:
		return apperr.Field(apperr.PublicSharingDenied, field,
			"an agent key can never share a report with the public; a person may, from the report's page")
	case kind == models.GrantPublic && class == models.ClassConfidential:
		return apperr.Field(apperr.SharingDenied, field,
			"sharing rule \"confidential reports are never public\": this report is confidential")
	case !person && class == models.ClassRestricted:
		return apperr.Field(apperr.SharingDenied, field,
			"sharing rule \"restricted reports go only to named people\": this report is restricted, so it cannot be shared with %s", kindPhrase(kind))
	}
	return nil
}

func kindPhrase(kind string) string {
	switch kind {
	case models.GrantPublic:
		return "the public"
	case models.GrantEveryone:
		return "everyone"
	}
	return "a " + kind
}

// mayChange refuses a change to who reads r from someone who does not
// manage it, or to an archived report.
func mayChange(r *models.Report, by models.Actor) error {
	if !Manages(r, by) {
		return apperr.New(apperr.Forbidden, "only the report's owner or an administrator may change who reads %s", r.Slug)
	}
	if r.Archived {
		return apperr.New(apperr.InvalidState, "report %s is archived; restore it first", r.Slug)
	}
	return nil
}

// Share grants an audience access to a report; grants it already has are
// kept as they are.
func (s *Service) Share(ctx context.Context, orgID string, by models.Actor, idOrSlug string, in *AudienceInput) (*wire.Sharing, error) {
	if err := validate.Struct(in); err != nil {
		return nil, err
	}
	r, err := s.store.Reports().GetReport(ctx, orgID, idOrSlug)
	if err != nil {
		return nil, err
	}
	if err := mayChange(r, by); err != nil {
		return nil, err
	}
	grants, err := s.grantsFor(ctx, r, by, in.Audience)
	if err != nil {
		return nil, err
	}
	r, added, err := s.share(ctx, orgID, r.ID, grants, r.Classification, by)
	if err != nil {
		return nil, err
	}
	out, err := s.sharing(ctx, r)
	if err == nil {
		list := wire.NewGrants(added)
		out.Added = &list
	}
	return out, err
}

// Unshare removes every grant an audience matches: by the phrase the
// grant is listed under, or by whom the phrase resolves to. The owner's
// own access is not a grant and cannot be removed.
func (s *Service) Unshare(ctx context.Context, orgID string, by models.Actor, idOrSlug string, in *AudienceInput) (*wire.Sharing, error) {
	if err := validate.Struct(in); err != nil {
		return nil, err
	}
	r, err := s.store.Reports().GetReport(ctx, orgID, idOrSlug)
	if err != nil {
		return nil, err
	}
	if !Manages(r, by) {
		return nil, mayChange(r, by)
	}
	// Phrases that name a grant directly need no resolving: a grant to
	// someone since deactivated can still be removed.
	var resolve []string
	for _, phrase := range in.Audience {
		if !slices.ContainsFunc(r.Audience, func(n string) bool { return strings.EqualFold(n, strings.TrimSpace(phrase)) }) {
			resolve = append(resolve, phrase)
		}
	}
	var matches []requests.Match
	if len(resolve) > 0 {
		if matches, err = requests.ResolveEach(ctx, s.store, orgID, resolve, audienceRole); err != nil {
			return nil, err
		}
	}
	for _, m := range matches {
		if r.OwnerPerson && m.ID == r.OwnerID {
			return nil, apperr.Field(apperr.InvalidState, "audience",
				"%q is the report's owner, whose access cannot be removed", m.Phrase)
		}
	}
	r, removed, err := s.removeGrants(ctx, orgID, r.ID, SettingsInput{}, func(_ *models.Report, have []models.ReportGrant) ([]models.ReportGrant, error) {
		var out []models.ReportGrant
		for _, g := range have {
			hit := slices.ContainsFunc(in.Audience, func(p string) bool { return strings.EqualFold(g.Name, strings.TrimSpace(p)) })
			hit = hit || slices.ContainsFunc(matches, func(m requests.Match) bool { return m.Kind == g.Kind && m.ID == g.SubjectID })
			if hit {
				out = append(out, g)
			}
		}
		return out, nil
	}, by)
	if err != nil {
		return nil, err
	}
	out, err := s.sharing(ctx, r)
	if err == nil {
		list := wire.NewGrants(removed)
		out.Removed = &list
	}
	return out, err
}

// sharing is whom r is shared with now.
func (s *Service) sharing(ctx context.Context, r *models.Report) (*wire.Sharing, error) {
	all, err := s.store.Reports().Grants(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	return &wire.Sharing{ReportID: r.ID, Audience: wire.NewGrants(all)}, nil
}

// Audience lists whom a report is shared with.
func (s *Service) Audience(ctx context.Context, orgID, idOrSlug string) (*models.Report, []models.ReportGrant, error) {
	r, err := s.store.Reports().GetReport(ctx, orgID, idOrSlug)
	if err != nil {
		return nil, nil, err
	}
	gs, err := s.store.Reports().Grants(ctx, r.ID)
	return r, gs, err
}

// emitShared writes report.shared with the grants added to r, in ctx's
// transaction.
func (s *Service) emitShared(ctx context.Context, r *models.Report, added []models.ReportGrant, at time.Time) error {
	b, err := json.Marshal(wire.ReportShared{Report: wire.NewReport(r, nil, s.baseURL), Added: wire.NewGrants(added)})
	if err != nil {
		return err
	}
	return s.store.Emit(ctx, models.ReportEvent(r, events.ReportShared, b, at))
}

// share adds grants to one of the organisation's reports, under its row
// lock, and writes report.shared with those added (none when every grant
// was already there). The grants were checked against the sharing rules
// of the report classified checkedAs; a reclassification since refuses.
func (s *Service) share(ctx context.Context, orgID, reportID string, grants []models.NewGrant, checkedAs string, by models.Actor) (*models.Report, []models.ReportGrant, error) {
	var r *models.Report
	var added []models.ReportGrant
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if r, err = s.store.LockReport(ctx, orgID, reportID); err != nil {
			return err
		}
		s.store.Changed(ctx, r.ID)
		if err := stillClassified(r, checkedAs); err != nil {
			return err
		}
		now := models.Now()
		if added, err = s.store.Reports().AddGrants(ctx, r, grants, by, now); err != nil || len(added) == 0 {
			return err
		}
		if err := s.store.ReportStep(ctx, r, "shared", models.GrantNames(added), by, now); err != nil {
			return err
		}
		return s.emitShared(ctx, r, added, now)
	})
	if err != nil {
		return nil, nil, err
	}
	return r, added, nil
}

// stillClassified refuses a change checked against r classified
// checkedAs, when r has been reclassified since.
func stillClassified(r *models.Report, checkedAs string) error {
	if r.Classification != checkedAs {
		return apperr.New(apperr.InvalidState, "report %s was reclassified %s while this was checked; send it again", r.Slug, r.Classification)
	}
	return nil
}

// removeGrants applies set to the report, under its row lock, then
// removes the grants pick chooses: always when set is empty (an unshare),
// otherwise only when the classification changes. The step is audited
// with what changed.
func (s *Service) removeGrants(ctx context.Context, orgID, reportID string, set SettingsInput,
	pick func(*models.Report, []models.ReportGrant) ([]models.ReportGrant, error), by models.Actor) (*models.Report, []models.ReportGrant, error) {
	var r *models.Report
	var removed []models.ReportGrant
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if r, err = s.store.LockReport(ctx, orgID, reportID); err != nil {
			return err
		}
		s.store.Changed(ctx, r.ID)
		unshare := set.Classification == nil && set.ShowViewers == nil
		reclassified := set.Classification != nil && *set.Classification != r.Classification
		viewers := set.ShowViewers != nil && *set.ShowViewers != r.ShowViewers
		if !unshare && !reclassified && !viewers {
			return nil // nothing changes
		}
		action, details := "unshared", []string{}
		if viewers {
			r.ShowViewers = *set.ShowViewers
			action = "viewers hidden"
			if r.ShowViewers {
				action = "viewers shown"
			}
		}
		if reclassified {
			details = append(details, r.Classification+" → "+*set.Classification)
			if viewers {
				details = append(details, action)
			}
			action = "reclassified"
			r.Classification = *set.Classification
		}
		if unshare || reclassified {
			have, err := s.store.Reports().Grants(ctx, r.ID)
			if err != nil {
				return err
			}
			if removed, err = pick(r, have); err != nil || (len(removed) == 0 && unshare) {
				return err
			}
		}
		if len(removed) > 0 {
			if err := s.store.Reports().DeleteGrants(ctx, r, removed); err != nil {
				return err
			}
			details = append(details, "removed "+models.GrantNames(removed))
		}
		return s.store.ReportStep(ctx, r, action, strings.Join(details, "; "), by, models.Now())
	})
	if err != nil {
		return nil, nil, err
	}
	return r, removed, nil
}

// viewedData is report.viewed's data.
func (s *Service) viewedData(r *models.Report, viewer *models.Person, v *models.ReportView) ([]byte, error) {
	out := wire.ReportViewed{Report: wire.NewReport(r, nil, s.baseURL), Version: v.Version, ViewedAt: wiretime.New(v.At)}
	if viewer != nil {
		ref := viewer.Ref()
		out.Viewer = &ref
	}
	return json.Marshal(out)
}

// RequestAccess records that the person who acts asks to read r and tells
// its owner's webhooks (access.requested); it reports whether the request
// is new, not a repeat within a day.
func (s *Service) RequestAccess(ctx context.Context, r *models.Report, who models.Actor) (bool, error) {
	person, err := accounts.ActingPerson(who, "asking for access")
	if err != nil {
		return false, err
	}
	fresh := false
	err = s.store.Tx(ctx, func(ctx context.Context) error {
		now := models.Now()
		claimed, err := s.store.Reports().ClaimAccessRequest(ctx, r.ID, person.ID(), AccessRequestEvery, now)
		if err != nil || !claimed {
			return err
		}
		b, err := json.Marshal(wire.AccessRequested{Report: wire.NewReport(r, nil, s.baseURL), Person: person.Ref()})
		if err != nil {
			return err
		}
		fresh = true
		return s.store.Emit(ctx, models.ReportEvent(r, events.AccessRequested, b, now))
	})
	return fresh, err
}

// SettingsInput changes a report's sharing settings: its classification,
// whether readership analytics name its readers, or both.
type SettingsInput struct {
	Classification *string `json:"classification" validate:"omitempty,oneof=public internal confidential restricted"`
	ShowViewers    *bool   `json:"showViewers"`
}

// UpdateSettings changes a report's sharing settings. A new
// classification removes, in the same step, every grant the sharing rules
// would not allow at the new level; it returns the report and the grants
// removed.
func (s *Service) UpdateSettings(ctx context.Context, orgID string, by models.Actor, idOrSlug string, in *SettingsInput) (*models.Report, []models.ReportGrant, error) {
	if err := validate.Struct(in); err != nil {
		return nil, nil, err
	}
	if in.Classification == nil && in.ShowViewers == nil {
		return nil, nil, apperr.Field(apperr.InvalidRequest, "classification, showViewers", "send classification, showViewers or both")
	}
	r, err := s.store.Reports().GetReport(ctx, orgID, idOrSlug)
	if err != nil {
		return nil, nil, err
	}
	if !Manages(r, by) {
		return nil, nil, mayChange(r, by)
	}
	if in.Classification != nil {
		if err := s.aboveSource(ctx, r, *in.Classification, by); err != nil {
			return nil, nil, err
		}
	}
	policy, err := s.policyFor(ctx, orgID)
	if err != nil {
		return nil, nil, err
	}
	return s.removeGrants(ctx, orgID, r.ID, *in, func(r *models.Report, have []models.ReportGrant) ([]models.ReportGrant, error) {
		var broken []models.ReportGrant
		for _, g := range have {
			granter := models.Actor{ID: g.GrantedBy, Name: g.GrantedByName, IsPerson: !ids.HasPrefix(g.GrantedBy, ids.Key)}
			if policy.check(r, models.NewGrant{Kind: g.Kind, SubjectID: g.SubjectID, Name: g.Name}, granter, "") != nil {
				broken = append(broken, g)
			}
		}
		return broken, nil
	}, by)
}

// classRank orders the classifications from the least to the most
// guarded.
var classRank = map[string]int{models.ClassPublic: 0, models.ClassInternal: 1, models.ClassConfidential: 2, models.ClassRestricted: 3}

// aboveSource refuses to classify a copy below the report it was copied
// from, unless by manages that report too: a copy must not be a way
// around its source's sharing rules.
func (s *Service) aboveSource(ctx context.Context, r *models.Report, class string, by models.Actor) error {
	if r.CopiedFromID == nil {
		return nil
	}
	src, err := s.store.Reports().GetReport(ctx, r.OrganizationID, *r.CopiedFromID)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if classRank[class] >= classRank[src.Classification] || Manages(src, by) {
		return nil
	}
	return apperr.Field(apperr.SharingDenied, "classification",
		"report %s is a copy of %s, which is %s: only that report's owner or an administrator may classify the copy lower", r.Slug, src.Slug, src.Classification)
}
