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
	u, ticket, err := s.store.CreateUpload(ctx, p.Organization.ID, p)
	if err != nil {
		return nil, "", err
	}
	return u, s.baseURL + UploadPath(ticket), nil
}

// UploadPath is where an upload's bytes are PUT; the ticket is the only
// credential, so it is random and kept only hashed.
func UploadPath(ticket string) string { return "/uploads/" + ticket }

// Receive stores the bytes of the upload the ticket names: one HTML file
// or one ZIP, at most MaxUpload bytes, streamed to the blob store.
func (s *Service) Receive(ctx context.Context, ticket, contentType string, body io.Reader) (*models.Upload, error) {
	u, err := s.store.UploadByTicket(ctx, ticket)
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
	if err := s.store.ClaimUpload(ctx, u.ID, blob, models.Now().Add(UploadTimeout+time.Minute)); err != nil {
		return nil, err
	}
	size, err := s.blobs.PutUpload(ctx, blob, body, MaxUpload)
	if err == nil && size == 0 {
		_ = s.blobs.DeleteUpload(context.WithoutCancel(ctx), blob)
		err = apperr.New(apperr.InvalidRequest, "the upload is empty: send the HTML file or the ZIP as the body")
	}
	if err != nil {
		// Empty, too large or cut off: the uploader may send it again.
		if rerr := s.store.ReleaseUpload(context.WithoutCancel(ctx), u.ID, blob); rerr != nil {
			s.log.WarnContext(ctx, "upload claim not released; it lapses by itself", "upload", u.ID, "error", rerr)
		}
		if errors.Is(err, blobstore.ErrTooLarge) {
			return nil, apperr.New(apperr.PayloadTooLarge, "an upload may be at most %d bytes", MaxUpload)
		}
		return nil, err
	}
	if err := s.store.MarkUploaded(ctx, u.ID, blob, mt, size); err != nil {
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
		old, err := s.store.ExpiredUploads(ctx, 100)
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
		if err := s.store.DeleteUploads(ctx, ids); err != nil {
			return n, err
		}
		n += int64(len(ids))
	}
}
