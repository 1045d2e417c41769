package reports

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/bundle"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/reporttemplates"
	"github.com/assent-hq/assent/models"
)

// CopyInput names the copy; both default from what is copied.
type CopyInput struct {
	Title *string `json:"title" validate:"omitempty,notblank,max=200" nullable:"true"`
	Slug  *string `json:"slug" validate:"omitempty,max=200" nullable:"true"`
}

// Copy makes a new report from a report's live version, or from a
// built-in template when from is a template id, without audience or
// comments: the caller owns the copy. A report is copied only by whoever
// may read it; the copy keeps its classification, which only those who
// manage the source may lower (UpdateSettings), and the source's audit
// trail records the copy. A report's live version is copied as it is (it
// passed the scan or was released); a template is scanned like any
// publish.
func (s *Service) Copy(ctx context.Context, p models.Actor, from string, in *CopyInput, claim *models.Claim) (*models.Report, *models.ReportVersion, error) {
	if r, v, err := s.store.Reports().ClaimedVersion(ctx, claim); err != nil || r != nil {
		return r, v, err
	}
	nr := models.NewReport{OrganizationID: p.Organization.ID, Classification: models.ClassInternal}
	pub := models.Publication{By: p, State: models.VersionPublished}
	if ids.HasPrefix(from, ids.Template) {
		t, ok := reporttemplates.Get(from)
		if !ok {
			return nil, nil, apperr.New(apperr.NotFound, "template %s not found; GET /api/v1/templates lists them", from)
		}
		nr.Title, pub.ChangeSummary = t.Name, "From the template "+t.Name
		files, err := templateFiles(t)
		if err != nil {
			return nil, nil, err
		}
		if pub, err = s.fromFiles(ctx, pub, files); err != nil {
			return nil, nil, err
		}
	} else {
		// Copying is reading: the copy's owner may share it anew.
		src, err := s.Readable(ctx, p, from)
		if err != nil {
			return nil, nil, err
		}
		live, err := s.LiveVersion(ctx, src)
		if err != nil {
			return nil, nil, err
		}
		nr.Title, nr.Living, nr.Classification, nr.CopiedFrom = "Copy of "+src.Title, src.Living, src.Classification, src
		if len(nr.Title) > 200 {
			nr.Title = strings.TrimSpace(nr.Title[:200])
		}
		pub.Files, pub.ChangeSummary = live.Files.V, fmt.Sprintf("Copied from %s, version %d", src.Slug, live.Version)
	}
	if in.Title != nil {
		nr.Title = strings.TrimSpace(*in.Title)
	}
	if err := setSlug(&nr, in.Slug); err != nil {
		return nil, nil, err
	}
	r, v, err := s.versions().Create(ctx, nr, pub, claim)
	if err != nil {
		return nil, nil, err
	}
	s.hold(ctx, v)
	return r, v, nil
}

// Templates lists the built-in templates.
func (s *Service) Templates() []reporttemplates.Template { return reporttemplates.List() }

// templateFiles reads a template's files, in path order.
func templateFiles(t reporttemplates.Template) ([]bundle.File, error) {
	var files []bundle.File
	err := fs.WalkDir(t.Files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(t.Files, path)
		files = append(files, bundle.File{Path: path, Content: b})
		return err
	})
	return files, err
}
