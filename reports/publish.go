package reports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/bundle"
	"github.com/assent-hq/assent/internal/publishscan"
	"github.com/assent-hq/assent/models"
)

// Upload content types a PUT may send.
const (
	TypeHTML = "text/html"
	TypeZIP  = "application/zip"
)

// prepare reads a publish's content, scans every file and, unless the
// scan declines the version, stores the files: a secret the scan declines
// is never kept. The Publication says what the version becomes.
func (s *Service) prepare(ctx context.Context, p models.Actor, src *Source, summary string) (models.Publication, error) {
	pub := models.Publication{ChangeSummary: summary, By: p}
	var files []bundle.File
	var err error
	switch {
	case src.Content != nil:
		files, err = bundle.Single(*src.Content)
	case src.Files != nil:
		files, err = bundle.Inline(*src.Files)
	default:
		var u *models.Upload
		if u, err = s.published(ctx, p.Organization.ID, *src.UploadID); err != nil {
			return pub, err
		}
		pub.UploadID = u.ID
		if u.ContentType == TypeZIP {
			return s.prepareZIP(ctx, pub, u)
		}
		files, err = s.uploadedHTML(ctx, u)
	}
	if err != nil {
		return pub, err
	}
	return s.fromFiles(ctx, pub, files)
}

// fromFiles scans files held in memory and stores them unless declined.
func (s *Service) fromFiles(ctx context.Context, pub models.Publication, files []bundle.File) (models.Publication, error) {
	var sc scan
	for _, f := range files {
		if err := s.scanFile(ctx, &sc, f); err != nil {
			return pub, err
		}
	}
	sc.into(&pub)
	s.store.Metrics().Scanned(sc.took)
	if pub.State != models.VersionDeclined {
		for _, f := range files {
			if _, err := s.blobs.Put(ctx, f.Content); err != nil {
				return pub, fmt.Errorf("store %s: %w", f.Path, err)
			}
		}
	}
	return pub, nil
}

func (s *Service) uploadedHTML(ctx context.Context, u *models.Upload) ([]bundle.File, error) {
	r, err := s.blobs.OpenUpload(ctx, u.Blob)
	if err != nil {
		return nil, s.missingUpload(u, err)
	}
	defer r.Close()
	return bundle.HTML(r)
}

// prepareZIP reads a ZIP upload twice from a temporary file, one entry at
// a time: first to scan and list it, then, unless declined, to store its
// files. Memory holds one entry, never the archive unpacked.
func (s *Service) prepareZIP(ctx context.Context, pub models.Publication, u *models.Upload) (models.Publication, error) {
	r, err := s.blobs.OpenUpload(ctx, u.Blob)
	if err != nil {
		return pub, s.missingUpload(u, err)
	}
	tmp, err := os.CreateTemp(s.tempDir, "assent-upload-*.zip")
	if err != nil {
		r.Close()
		return pub, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	size, err := io.Copy(tmp, r)
	r.Close()
	if err != nil {
		return pub, err
	}
	var sc scan
	err = bundle.ReadZip(tmp, size, func(f bundle.File) error { return s.scanFile(ctx, &sc, f) })
	if err != nil {
		return pub, err
	}
	sc.into(&pub)
	s.store.Metrics().Scanned(sc.took)
	if pub.State != models.VersionDeclined {
		err = bundle.ReadZip(tmp, size, func(f bundle.File) error {
			_, err := s.blobs.Put(ctx, f.Content)
			return err
		})
		if err != nil {
			return pub, err
		}
	}
	return pub, nil
}

// missingUpload explains an upload whose bytes the blob store lost.
func (s *Service) missingUpload(u *models.Upload, err error) error {
	if errors.Is(err, blobstore.ErrNotFound) {
		s.log.Error("an upload's content is missing from the blob store", "upload", u.ID)
		return apperr.Field(apperr.UploadNotFound, "uploadId", "the content of upload %s is gone; upload it again", u.ID)
	}
	return err
}

// scan is what the publish scan made of a version's files so far.
type scan struct {
	files    []models.ManifestFile
	findings []publishscan.Finding
	// took is the time the scan took, for the metrics.
	took time.Duration
}

// scanFile scans one file and lists it in the manifest.
func (s *Service) scanFile(ctx context.Context, sc *scan, f bundle.File) error {
	start := time.Now()
	found, err := s.scanner.Scan(ctx, []publishscan.File{{Path: f.Path, Content: f.Content}})
	sc.took += time.Since(start)
	if err != nil {
		return fmt.Errorf("scan %s: %w", f.Path, err)
	}
	sc.findings = append(sc.findings, found...)
	sc.files = append(sc.files, models.ManifestFile{Path: f.Path, SHA256: blobstore.Sum(f.Content), Size: int64(len(f.Content))})
	return nil
}

// into sets the version's files, findings and state: a high-confidence
// secret declines it, any other finding holds it.
func (sc *scan) into(pub *models.Publication) {
	slices.SortFunc(sc.files, func(a, b models.ManifestFile) int { return strings.Compare(a.Path, b.Path) })
	pub.Files, pub.Findings = sc.files, sc.findings
	switch publishscan.Outcome(sc.findings) {
	case "declined":
		pub.State = models.VersionDeclined
	case "held":
		pub.State = models.VersionHeld
	default:
		pub.State = models.VersionPublished
	}
}
