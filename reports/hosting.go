package reports

import (
	"context"
	"errors"
	"time"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/models"
)

// What a report's own origin (reportsite) asks: the report its host
// names, the origins its organisation allows, the version a request
// reads, the reader its cookie signs in, the ticket traded for that
// cookie, a dataset, and each view.

// ViewEventEvery is how seldom report.viewed fires for one viewer of one
// report; every view is recorded.
const ViewEventEvery = 30 * time.Minute

// AccessRequestEvery is how seldom one person's requests for access to
// one report reach its owner.
const AccessRequestEvery = 24 * time.Hour

// ErrReaderTicketInvalid is a ticket that is unknown, used, expired or
// for another report: the reader starts again from the app.
var ErrReaderTicketInvalid = errors.New("reader ticket invalid")

// ManifestFile is one file of a published version.
type ManifestFile = models.ManifestFile

// Hosted is the report whose origin key names, in any organisation (the
// host name is all a report's origin knows), and the other origins its
// organisation lets its reports reach.
func (s *Service) Hosted(ctx context.Context, key string) (*models.Report, []string, error) {
	return s.store.Reports().HostedReport(ctx, key)
}

// PublicBySlug is the report a visitor not signed in means by the app's
// address for slug (its url): the one report of this instance granted to
// the public at that slug. Slugs are unique within an organisation only,
// so when another organisation's public report has the same slug, or
// none is public, it is not found and the visitor signs in.
func (s *Service) PublicBySlug(ctx context.Context, slug string) (*models.Report, error) {
	found, err := s.store.Reports().PublicReportsBySlug(ctx, slug, 2)
	if err != nil {
		return nil, err
	}
	if len(found) != 1 {
		return nil, apperr.New(apperr.NotFound, "no one public report at %s", slug)
	}
	return &found[0], nil
}

// LiveVersion is r's live version; a report none of whose versions went
// live has none to read.
func (s *Service) LiveVersion(ctx context.Context, r *models.Report) (*models.ReportVersion, error) {
	if r.LiveVersion == nil {
		return nil, apperr.New(apperr.InvalidState, "report %s has no live version yet", r.Slug)
	}
	return s.store.Reports().GetVersionNumber(ctx, r, *r.LiveVersion)
}

// Served is the version of r a request reads: the live one (n is 0), or
// version n if it was published, never one held or declined.
func (s *Service) Served(ctx context.Context, r *models.Report, n int) (*models.ReportVersion, error) {
	if n == 0 {
		return s.LiveVersion(ctx, r)
	}
	v, err := s.store.Reports().GetVersionNumber(ctx, r, n)
	if err == nil && v.State != models.VersionPublished {
		return nil, apperr.New(apperr.NotFound, "version %d of report %s was not published", n, r.Slug)
	}
	return v, err
}

// Reader is the person a reader session's token signs in on report
// reportID's origin, or nil for none (absent, ended, or another report's).
// A reader session lives only as long as the app session it came from, so
// signing out of the app ends it too.
func (s *Service) Reader(ctx context.Context, token, reportID string) (*models.Person, error) {
	if token == "" {
		return nil, nil
	}
	sess, err := s.store.Reports().ReaderSessionOf(ctx, models.HashSecret(token), reportID)
	if err == nil {
		var p *models.Person
		if p, err = accounts.SessionPerson(ctx, s.store, sess); err == nil {
			return p, nil
		}
	}
	if apperr.Is(err, apperr.NotFound) || errors.Is(err, accounts.ErrSessionInvalid) {
		return nil, nil
	}
	return nil, err
}

// MayRead reports whether reader holds a grant to read r now; nil is
// nobody signed in, who reads only what is granted to the public.
func (s *Service) MayRead(ctx context.Context, r *models.Report, reader *models.Person) (bool, error) {
	return s.store.Reports().CanRead(ctx, r, reader)
}

// RedeemTicket trades a reader ticket the app issued for a reader session
// on report reportID's origin, once; it returns the session's token.
// A ticket that is unknown, used, expired or another report's is
// ErrReaderTicketInvalid.
func (s *Service) RedeemTicket(ctx context.Context, ticket, reportID string) (string, error) {
	token := models.NewToken()
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		now := models.Now()
		t, err := s.store.Reports().ReaderTicketByHash(ctx, models.HashSecret(ticket))
		if apperr.Is(err, apperr.NotFound) {
			return ErrReaderTicketInvalid
		}
		if err != nil {
			return err
		}
		if t.ReportID != reportID || !now.Before(t.ExpiresAt) {
			return ErrReaderTicketInvalid
		}
		used, err := s.store.Reports().MarkReaderTicketUsed(ctx, t.TicketHash, now)
		if err != nil {
			return err
		}
		if !used {
			return ErrReaderTicketInvalid
		}
		return s.store.Reports().InsertReaderSession(ctx, &models.ReaderSession{TokenHash: models.HashSecret(token), ReportID: reportID,
			SessionID: t.SessionID, CreatedAt: now})
	})
	return token, err
}

// HostedDataset is r's dataset name, as stored.
func (s *Service) HostedDataset(ctx context.Context, r *models.Report, name string) (*models.Dataset, error) {
	return s.store.Reports().GetDataset(ctx, r.OrganizationID, r.ID, name)
}

// RecordView records that reader (nil: a public reader) opened version of
// r, and tells webhooks (report.viewed) at most once per ViewEventEvery
// for one reader.
func (s *Service) RecordView(ctx context.Context, r *models.Report, version int, reader *models.Person) error {
	viewerID := ""
	if reader != nil {
		viewerID = reader.ID()
	}
	return s.store.Tx(ctx, func(ctx context.Context) error {
		now := models.Now()
		notify, err := s.store.Reports().ClaimViewNotice(ctx, r.ID, viewerID, ViewEventEvery, now)
		if err != nil {
			return err
		}
		v := &models.ReportView{OrganizationID: r.OrganizationID, ReportID: r.ID, ViewerID: viewerID, Version: version, Notified: notify, At: now}
		if err := s.store.Reports().InsertView(ctx, v); err != nil || !notify {
			return err
		}
		b, err := s.viewedData(r, reader, v)
		if err != nil {
			return err
		}
		return s.store.Emit(ctx, models.ReportEvent(r, events.ReportViewed, b, now))
	})
}
