package reports

import (
	"context"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// Reading a report in the app: what a person may open, the tickets that
// sign them in on a report's own origin, and who hears of a request for
// access.

// ReadableList is the reports the person who acts may read, newest
// first, at most limit.
func (s *Service) ReadableList(ctx context.Context, who models.Actor, limit int) ([]models.Report, error) {
	person, err := accounts.ActingPerson(who, "reading the reports shared with you")
	if err != nil {
		return nil, err
	}
	return s.store.Reports().ReadableReports(ctx, person, limit)
}

// Grants are who may read report id.
func (s *Service) Grants(ctx context.Context, reportID string) ([]models.ReportGrant, error) {
	return s.store.Reports().Grants(ctx, reportID)
}

// ByKey is the report of who's organisation whose origin is named by key;
// another organisation's is not found.
func (s *Service) ByKey(ctx context.Context, who models.Actor, key string) (*models.Report, error) {
	r, err := s.store.Reports().ReportByKey(ctx, key)
	if err == nil && r.OrganizationID != who.OrgID() {
		err = apperr.New(apperr.NotFound, "report not found")
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ReaderTicket is a single-use ticket that signs the holder of app session
// sessionID in on r's origin alone.
func (s *Service) ReaderTicket(ctx context.Context, r *models.Report, sessionID string) (string, error) {
	token := models.NewToken()
	t := &models.ReaderTicket{TicketHash: models.HashSecret(token), ReportID: r.ID, SessionID: sessionID,
		ExpiresAt: models.Now().Add(models.ReaderTicketLifetime)}
	return token, s.store.Reports().InsertReaderTicket(ctx, t)
}

// Sharers are the addresses of who can share r, told of a request for
// access: its owner when a person who is still active owns it, else the
// organisation's active owners and administrators.
func (s *Service) Sharers(ctx context.Context, r *models.Report) ([]string, error) {
	if r.OwnerPerson {
		if m, err := s.store.GetMember(ctx, r.OrganizationID, r.OwnerID); err == nil && m.Active {
			return []string{m.Email}, nil
		}
	}
	ids, err := s.store.ActiveMemberIDs(ctx, r.OrganizationID, models.RoleOwner, models.RoleAdmin)
	if err != nil {
		return nil, err
	}
	var to []string
	for _, id := range ids {
		if m, err := s.store.GetMember(ctx, r.OrganizationID, id); err == nil {
			to = append(to, m.Email)
		}
	}
	return to, nil
}
