package reports

import (
	"context"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/models"
)

// Who may do what with a report, each rule in one place for the API, the
// pages and every other path:
//   - Manages: change it (publish, roll back, archive, datasets, schedules,
//     who reads it and its settings, send it);
//   - Readable: read its content (owning it or a grant);
//   - Visible: see its record and versions (titles, owner, scan
//     findings), which whoever reads or manages it may.
//
// The organisation is checked by every query; an agent key reads and
// changes its organisation's reports by its scopes.

// Manages reports whether by may change r: an agent key with the scope,
// the member who owns r, or an owner or administrator of the
// organisation. Other members only read what is shared with them.
func Manages(r *models.Report, by models.Actor) bool {
	return !by.IsPerson || by.Administrator || (r.OwnerPerson && r.OwnerID == by.ID)
}

// mayManage refuses by unless it manages r.
func mayManage(r *models.Report, by models.Actor) error {
	if !Manages(r, by) {
		return apperr.New(apperr.Forbidden, "only the report's owner or an administrator may change report %s", r.Slug)
	}
	return nil
}

// managed returns the organisation's report idOrSlug when by may change
// it.
func (s *Service) managed(ctx context.Context, orgID string, by models.Actor, idOrSlug string) (*models.Report, error) {
	r, err := s.store.Reports().GetReport(ctx, orgID, idOrSlug)
	if err != nil {
		return nil, err
	}
	return r, mayManage(r, by)
}

// Readable returns who's organisation's report when a person may read it
// (403 otherwise); for an agent key any, by its scope.
func (s *Service) Readable(ctx context.Context, who models.Actor, idOrSlug string) (*models.Report, error) {
	r, err := s.store.Reports().GetReport(ctx, who.OrgID(), idOrSlug)
	if err != nil {
		return nil, err
	}
	return r, s.mayRead(ctx, r, who)
}

func (s *Service) mayRead(ctx context.Context, r *models.Report, who models.Actor) error {
	if who.Person == nil {
		return nil
	}
	ok, err := s.store.Reports().CanRead(ctx, r, who.Person)
	if err == nil && !ok {
		err = apperr.New(apperr.Forbidden, "report %s is not shared with you", r.Slug)
	}
	return err
}

// Visible returns who's organisation's report when a person reads or
// manages it (403 otherwise); for an agent key any, by its scope.
func (s *Service) Visible(ctx context.Context, who models.Actor, idOrSlug string) (*models.Report, error) {
	r, err := s.store.Reports().GetReport(ctx, who.OrgID(), idOrSlug)
	if err != nil {
		return nil, err
	}
	return r, s.mayView(ctx, r, who)
}

// VisibleOf keeps, in order, the reports of rs who may see (Visible's
// rule): what lists them beside something else (a flow's members) shows no
// other's title.
func (s *Service) VisibleOf(ctx context.Context, who models.Actor, rs []models.Report) ([]models.Report, error) {
	var out []models.Report
	if who.Person == nil && !who.HasScope(scopes.ReportsRead) {
		return out, nil // a key reads reports by its scope, as the routes hold it
	}
	for i := range rs {
		err := s.mayView(ctx, &rs[i], who)
		if apperr.Is(err, apperr.Forbidden) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rs[i])
	}
	return out, nil
}

func (s *Service) mayView(ctx context.Context, r *models.Report, who models.Actor) error {
	if who.Person == nil || Manages(r, who) {
		return nil
	}
	return s.mayRead(ctx, r, who)
}
