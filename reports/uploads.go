package reports

import (
	"context"
	"errors"
	"io"
	"mime"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/bundle"
	"github.com/assent-hq/assent/models"
)

// MaxUpload bounds an upload's bytes.
const MaxUpload = bundle.MaxArchiveBytes

// UploadTimeout is how long an upload's bytes may take to arrive: 100 MB
// at about 120 KB/s. Holding a connection longer needs a valid ticket;
// the PUT's claim on the upload outlasts it.
const UploadTimeout = 15 * time.Minute

// CreateUpload issues an upload ticket: its id names it in a publish, its
// secret ticket (in the URL it returns) lets one PUT send the bytes.
func (s *Service) CreateUpload(ctx context.Context, p models.Actor) (*models.Upload, string, error) {
	u, ticket, err := s.store.Reports().CreateUpload(ctx, p.Organization.ID, p)
	if err != nil {
		return nil, "", err
	}
	return u, s.baseURL + UploadPath(ticket), nil
}

// UploadPath is where an upload's bytes are PUT; the ticket is the only
// credential, so it is random and kept only hashed.
func UploadPath(ticket string) string { return "/uploads/" + ticket }

// errTicketGone answers a PUT whose ticket names no upload that may still
// receive its bytes.
var errTicketGone = apperr.New(apperr.UploadNotFound, "this upload URL is unknown, has expired or was already published")

// uploadGone is the one answer for an upload a publish names that is
// unknown, of another organisation, expired or consumed.
func uploadGone(id string) error {
	return apperr.Field(apperr.UploadNotFound, "uploadId", "upload %s does not exist, has expired or was already published", id)
}

// usable says whether u may still be used: neither used up by a publish
// nor expired.
func usable(u *models.Upload) bool { return u.ConsumedAt == nil && !models.Now().After(u.ExpiresAt) }

// unclaimable says why the upload ticket names was not claimed: used up,
// given its content already, or being sent by another PUT.
func (s *Service) unclaimable(ctx context.Context, ticket string) error {
	u, err := s.store.Reports().UploadByTicket(ctx, ticket)
	switch {
	case apperr.Is(err, apperr.NotFound) || (err == nil && u.ConsumedAt != nil):
		return errTicketGone
	case err != nil:
		return err
	case u.UploadedAt != nil:
		return apperr.New(apperr.InvalidState, "this upload already has its content; ask for a new upload URL to send other content")
	}
	return apperr.New(apperr.InvalidState, "another PUT is sending this upload's content now; if it fails, send it again")
}

// published is the organisation's upload id as a publish reads it: not
// used up, not expired, with its content.
func (s *Service) published(ctx context.Context, orgID, id string) (*models.Upload, error) {
	u, err := s.store.Reports().GetUpload(ctx, orgID, id)
	if apperr.Is(err, apperr.NotFound) || (err == nil && !usable(u)) {
		return nil, uploadGone(id)
	}
	if err != nil {
		return nil, err
	}
	if u.UploadedAt == nil {
		return nil, apperr.Field(apperr.InvalidState, "uploadId", "upload %s has no content yet: PUT the file to its uploadUrl first", id)
	}
	return u, nil
}

// Receive stores the bytes of the upload the ticket names: one HTML file
// or one ZIP, at most MaxUpload bytes, streamed to the blob store.
func (s *Service) Receive(ctx context.Context, ticket, contentType string, body io.Reader) (*models.Upload, error) {
	u, err := s.store.Reports().UploadByTicket(ctx, ticket)
	if apperr.Is(err, apperr.NotFound) || (err == nil && !usable(u)) {
		return nil, errTicketGone
	}
	if err != nil {
		return nil, err
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || (mt != TypeHTML && mt != TypeZIP) {
		return nil, apperr.New(apperr.UnsupportedMedia, "send one HTML file as text/html or a ZIP as application/zip")
	}
	// The upload is claimed before a byte of the body is read: a second
	// PUT, racing or late, is refused at once instead of streaming its
	// 100 MB to lose.
	blob := u.ID + "-" + models.RandomToken(10)
	claimed, err := s.store.Reports().ClaimUpload(ctx, u.ID, blob, models.Now().Add(UploadTimeout+time.Minute))
	if err != nil {
		return nil, err
	}
	if !claimed {
		return nil, s.unclaimable(ctx, ticket)
	}
	size, err := s.blobs.PutUpload(ctx, blob, body, MaxUpload)
	if err == nil && size == 0 {
		_ = s.blobs.DeleteUpload(context.WithoutCancel(ctx), blob)
		err = apperr.New(apperr.InvalidRequest, "the upload is empty: send the HTML file or the ZIP as the body")
	}
	if err != nil {
		// Empty, too large or cut off: the uploader may send it again.
		if rerr := s.store.Reports().ReleaseUpload(context.WithoutCancel(ctx), u.ID, blob); rerr != nil {
			s.log.WarnContext(ctx, "upload claim not released; it lapses by itself", "upload", u.ID, "error", rerr)
		}
		if errors.Is(err, blobstore.ErrTooLarge) {
			return nil, apperr.New(apperr.PayloadTooLarge, "an upload may be at most %d bytes", MaxUpload)
		}
		return nil, err
	}
	stored, err := s.store.Reports().MarkUploaded(ctx, u.ID, blob, mt, size)
	if err == nil && !stored {
		err = apperr.New(apperr.InvalidState, "this PUT's claim on the upload lapsed before its content was stored; send it again")
	}
	if err != nil {
		_ = s.blobs.DeleteUpload(context.WithoutCancel(ctx), blob) // the claim lapsed and another PUT took it
		return nil, err
	}
	u.Blob, u.ContentType, u.Size = blob, mt, size
	return u, nil
}

// PurgeUploads forgets expired uploads with their bytes; it returns how
// many went.
func (s *Service) PurgeUploads(ctx context.Context) (int64, error) {
	var n int64
	for {
		old, err := s.store.Reports().ExpiredUploads(ctx, 100)
		if err != nil || len(old) == 0 {
			return n, err
		}
		ids := make([]string, 0, len(old))
		for _, u := range old {
			if u.Blob != "" {
				if err := s.blobs.DeleteUpload(ctx, u.Blob); err != nil {
					return n, err
				}
			}
			ids = append(ids, u.ID)
		}
		if err := s.store.Reports().DeleteUploads(ctx, ids); err != nil {
			return n, err
		}
		n += int64(len(ids))
	}
}
