package reports

import (
	"context"
	"encoding/json"
	"regexp"

	"github.com/assent-hq/assent/decisions"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// datasetName is what a dataset may be called: it is a path segment of
// the report's own origin (_data/<name>).
var datasetName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// PutDataset stores body, a JSON document kept byte for byte, as the
// report's dataset name; it reports whether the dataset is new.
func (s *Service) PutDataset(ctx context.Context, orgID string, by models.Actor, idOrSlug, name string, body []byte) (*models.Dataset, bool, error) {
	if _, err := s.managed(ctx, orgID, by, idOrSlug); err != nil {
		return nil, false, err
	}
	if !datasetName.MatchString(name) {
		return nil, false, apperr.Field(apperr.InvalidRequest, "name", "a dataset's name is 1 to 64 lowercase letters, digits, - or _")
	}
	if len(body) == 0 || !json.Valid(body) {
		return nil, false, apperr.New(apperr.InvalidRequest, "a dataset is one JSON document: send it as the request body")
	}
	// Keys differing only by case would mean one field to some readers
	// and two to others; numbers stay as written.
	if err := decisions.DistinctKeys("", body); err != nil {
		return nil, false, err
	}
	return s.putDataset(ctx, orgID, idOrSlug, name, body)
}

// putDataset stores data as the report's dataset name, replacing one of
// that name, and reports whether it was new. A new one beyond
// models.MaxDatasets is refused; the report's row is locked so two new
// ones cannot both take the last place.
func (s *Service) putDataset(ctx context.Context, orgID, idOrSlug, name string, data []byte) (*models.Dataset, bool, error) {
	var d *models.Dataset
	created := false
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		r, err := s.store.LockReport(ctx, orgID, idOrSlug)
		if err != nil {
			return err
		}
		if d, err = s.store.Reports().ReplaceDataset(ctx, r, name, data); err != nil || d != nil {
			return err
		}
		n, err := s.store.Reports().CountDatasets(ctx, r)
		if err != nil {
			return err
		}
		if n >= models.MaxDatasets {
			return apperr.Field(apperr.LimitReached, "name", "report %s already has %d datasets, the most it may have; delete one first", r.Slug, models.MaxDatasets)
		}
		d = &models.Dataset{ReportID: r.ID, Name: name, OrganizationID: orgID, Data: data, Bytes: len(data)}
		created = true
		return s.store.Reports().InsertDataset(ctx, d)
	})
	return d, created, err
}

// Dataset returns one of the report's datasets. A person (a member
// token) reads it only where they may read the report.
func (s *Service) Dataset(ctx context.Context, p models.Actor, idOrSlug, name string) (*models.Dataset, error) {
	if _, err := s.Readable(ctx, p, idOrSlug); err != nil {
		return nil, err
	}
	return s.store.Reports().GetDataset(ctx, p.Organization.ID, idOrSlug, name)
}

// Datasets lists the report's datasets without their data, to those who
// may read them.
func (s *Service) Datasets(ctx context.Context, p models.Actor, idOrSlug string) ([]models.Dataset, error) {
	if _, err := s.Readable(ctx, p, idOrSlug); err != nil {
		return nil, err
	}
	return s.store.Reports().ListDatasets(ctx, p.Organization.ID, idOrSlug)
}

// DeleteDataset removes one of the report's datasets.
func (s *Service) DeleteDataset(ctx context.Context, orgID string, by models.Actor, idOrSlug, name string) error {
	if _, err := s.managed(ctx, orgID, by, idOrSlug); err != nil {
		return err
	}
	return s.store.Reports().DeleteDataset(ctx, orgID, idOrSlug, name)
}
