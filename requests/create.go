package requests

import (
	"context"

	"github.com/assent-hq/assent/flows"
	"github.com/assent-hq/assent/models"
)

// Creatable are one kind's records as a create writes them, and as a
// failed start takes them back (models.Requests).
type Creatable[T any] interface {
	Base(rec *T) *models.RequestBase
	Name(rec *T)
	Insert(ctx context.Context, rec *T) error
	DeleteUnstarted(ctx context.Context, orgID, id string) (bool, error)
}

// Claims are what a create's transaction checks and binds beside the
// record (models.Store).
type Claims interface {
	Tx(ctx context.Context, fn func(ctx context.Context) error) error
	flows.Getter
	BindClaim(ctx context.Context, c *models.Claim, id string) (earlier string, err error)
	UnbindClaims(ctx context.Context, orgID, id string) error
}

// Insert writes a new request's record bound to claim (when not nil), in
// one transaction, so that a retry after a crash at any point finds the
// same record. The flow it names must be open. When an earlier attempt of
// the claimed request already made a record, nothing is written and that
// record's id is returned.
func Insert[T any](ctx context.Context, s Claims, recs Creatable[T], rec *T, claim *models.Claim) (earlier string, err error) {
	recs.Name(rec)
	b := recs.Base(rec)
	err = s.Tx(ctx, func(ctx context.Context) error {
		if err := flows.RequireOpen(ctx, s, b.OrganizationID, b.FlowID); err != nil {
			return err
		}
		if earlier, err = s.BindClaim(ctx, claim, b.ID); err != nil || earlier != "" {
			return err
		}
		return recs.Insert(ctx, rec)
	})
	return earlier, err
}

// TakeBack removes a record whose workflow has written nothing yet, and
// frees the claim that made it, so that a failed create leaves nothing
// behind and a retry with the same key creates afresh. It reports whether
// it removed the record: one whose workflow has written its first step
// since stays, and so does its claim.
func TakeBack[T any](ctx context.Context, s Claims, recs Creatable[T], orgID, id string) (removed bool, err error) {
	err = s.Tx(ctx, func(ctx context.Context) error {
		if removed, err = recs.DeleteUnstarted(ctx, orgID, id); err != nil || !removed {
			return err
		}
		return s.UnbindClaims(ctx, orgID, id)
	})
	return removed && err == nil, err
}
