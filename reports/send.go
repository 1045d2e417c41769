package reports

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/wire"
	"github.com/assent-hq/assent/workflows"
)

// sendKind names report sends in search attributes and logs.
const sendKind = "report_send"

// SendInput emails a report's link to addresses with a covering note.
type SendInput struct {
	To   []string `json:"to" validate:"required,min=1,max=50,dive,required,email,max=320"`
	Note string   `json:"note" validate:"max=2000"`
}

// Sent answers a send: the send, whom it went to (guests admitted on
// the way), the grants it added and the report's audience now.
type Sent struct {
	ID         string                 `json:"id"`
	ReportID   string                 `json:"reportId"`
	Recipients []models.SendRecipient `json:"recipients"`
	Added      []wire.Grant           `json:"added"`
	Audience   []wire.Grant           `json:"audience"`
}

// Send emails each address a link to the report with the note. A member
// or admitted guest is granted access; an address the organisation has
// not seen becomes a guest, admitted by the sender. The sharing rules
// hold as for a share, and nothing is granted or sent when one refuses.
// The emails go out from a workflow (workflows.ReportSend), each once.
func (s *Service) Send(ctx context.Context, p models.Actor, idOrSlug string, in *SendInput, claim *models.Claim) (*Sent, error) {
	orgID, by := p.Organization.ID, p
	r, err := s.store.Reports().GetReport(ctx, orgID, idOrSlug)
	if err != nil {
		return nil, err
	}
	if err := mayChange(r, by); err != nil {
		return nil, err
	}
	var emails []string
	for _, e := range in.To {
		if e = models.NormalizeEmail(e); !slices.Contains(emails, e) {
			emails = append(emails, e)
		}
	}
	d, err := s.store.LookUp(ctx, orgID, emails)
	if err != nil {
		return nil, err
	}
	policy, err := s.policyFor(ctx, orgID)
	if err != nil {
		return nil, err
	}
	send := &models.ReportSend{Note: in.Note}
	for i, e := range emails {
		field := fmt.Sprintf("to[%d]", i)
		rc := models.SendRecipient{Email: e, Kind: models.ApproverGuest}
		for _, m := range d.Members(e) {
			if m.Email == e {
				if !m.Active {
					return nil, apperr.Field(apperr.InvalidRequest, field, "%s is a deactivated member of this organisation", e)
				}
				rc.PersonID, rc.Kind = m.ID, models.ApproverMember
			}
		}
		for _, g := range d.Guests(e) {
			if g.Email == e && rc.PersonID == "" {
				rc.PersonID = g.ID
			}
		}
		if err := policy.check(r, models.NewGrant{Kind: rc.Kind, SubjectID: rc.PersonID, Name: e}, by, field); err != nil {
			return nil, err
		}
		send.Recipients.V = append(send.Recipients.V, rc)
	}
	r, send, added, err := s.record(ctx, orgID, r.ID, send, r.Classification, by, claim)
	if err != nil {
		return nil, err
	}
	if !send.Started {
		if err := s.startSend(ctx, send); err != nil {
			s.log.Warn("start the workflow of a report send; the reconciler will", "send", send.ID, "error", err)
		}
	}
	all, err := s.store.Reports().Grants(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	return &Sent{ID: send.ID, ReportID: r.ID, Recipients: send.Recipients.V, Added: wire.NewGrants(added), Audience: wire.NewGrants(all)}, nil
}

// record makes send: in one transaction under the report's row lock it
// admits the addresses the organisation has not seen as guests, grants
// every recipient access (report.shared with those added), and records
// the send, bound to claim. A retry of a claimed send returns the send the
// first attempt made.
func (s *Service) record(ctx context.Context, orgID, reportID string, send *models.ReportSend, checkedAs string, by models.Actor,
	claim *models.Claim) (*models.Report, *models.ReportSend, []models.ReportGrant, error) {
	var r *models.Report
	var added []models.ReportGrant
	var earlier, joined string
	send.ID, send.OrganizationID, send.SentBy, send.SentByName = ids.New(ids.Send), orgID, by.ID, by.Name
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if r, err = s.store.LockReport(ctx, orgID, reportID); err != nil {
			return err
		}
		if err := stillClassified(r, checkedAs); err != nil {
			return err
		}
		if earlier, err = s.store.BindClaim(ctx, claim, send.ID); err != nil || earlier != "" {
			return err
		}
		s.store.Changed(ctx, r.ID)
		now := models.Now()
		send.ReportID, send.CreatedAt = r.ID, now
		var grants []models.NewGrant
		var admitted []string
		for i := range send.Recipients.V {
			rc := &send.Recipients.V[i]
			if rc.PersonID == "" {
				g := &models.Guest{OrganizationID: orgID, Email: rc.Email}
				if err := s.store.Reports().AdmitGuest(ctx, g); err != nil {
					if errors.Is(err, models.ErrDuplicate) {
						joined = rc.Email
					}
					return err
				}
				rc.PersonID, rc.Kind, rc.Admitted = g.ID, models.ApproverGuest, true
				admitted = append(admitted, rc.Email)
			}
			grants = append(grants, models.NewGrant{Kind: rc.Kind, SubjectID: rc.PersonID, Name: rc.Email})
		}
		if added, err = s.store.Reports().AddGrants(ctx, r, grants, by, now); err != nil {
			return err
		}
		if err := s.store.Reports().InsertSend(ctx, send); err != nil {
			return err
		}
		detail := fmt.Sprintf("sent to %d address(es)", len(send.Recipients.V))
		if len(admitted) > 0 {
			detail += "; admitted as guests by " + by.Name + ": " + strings.Join(admitted, ", ")
		}
		if err := s.store.ReportStep(ctx, r, "sent", detail, by, now); err != nil || len(added) == 0 {
			return err
		}
		return s.emitShared(ctx, r, added, now)
	})
	switch {
	case joined != "":
		return nil, nil, nil, apperr.New(apperr.Conflict, "%s joined the organisation meanwhile; send again", joined)
	case err != nil:
		return nil, nil, nil, err
	case earlier != "":
		prior, err := s.store.Reports().GetSend(ctx, orgID, earlier)
		if err != nil {
			return nil, nil, nil, err
		}
		r, err := s.store.Reports().GetReport(ctx, orgID, prior.ReportID)
		return r, prior, nil, err
	}
	return r, send, added, nil
}

func (s *Service) startSend(ctx context.Context, send *models.ReportSend) error {
	if s.temporal == nil {
		return apperr.New(apperr.Unavailable, "no workflow service is configured")
	}
	return requests.StartOnce(ctx, s.temporal, client.StartWorkflowOptions{
		ID:                    workflows.SendWorkflowID(send.ID),
		TypedSearchAttributes: requests.Attributes(send.OrganizationID, sendKind, "sending", nil),
	}, workflows.WorkflowReportSend, workflows.ReportSendInput{OrganizationID: send.OrganizationID, SendID: send.ID})
}

// Sends is the reconciler's registrar for report sends whose workflow a
// crash kept from starting.
func (s *Service) Sends() requests.Owned { return sendRegistrar{s} }

type sendRegistrar struct{ s *Service }

func (r sendRegistrar) Kind() string { return sendKind }

// StartUnowned starts the workflows of sends left without one.
func (r sendRegistrar) StartUnowned(ctx context.Context, olderThan time.Time, batch int) (int, error) {
	sends, err := r.s.store.Reports().UnstartedSends(ctx, olderThan, batch)
	if err != nil {
		return 0, err
	}
	for i := range sends {
		if err := r.s.startSend(ctx, &sends[i]); err != nil {
			return i, err
		}
	}
	return len(sends), nil
}
