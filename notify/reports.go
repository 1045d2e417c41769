package notify

import (
	"context"

	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/models"
)

// sendMail is the data of the email a report send makes to one address.
type sendMail struct {
	Organization, SentBy, Title, Note, PageURL string
	Guest                                      bool
}

// ReportSend emails each recipient of a report send its link with the
// covering note, each once.
func (n *Notifier) ReportSend(ctx context.Context, orgID, sendID string) error {
	send, err := n.Store.GetSend(ctx, orgID, sendID)
	if err != nil {
		return err
	}
	r, err := n.Store.GetReport(ctx, orgID, send.ReportID)
	if err != nil {
		return err
	}
	org, err := n.Store.GetOrganization(ctx, orgID)
	if err != nil {
		return err
	}
	for _, rc := range send.Recipients.V {
		data := sendMail{Organization: org.Name, SentBy: send.SentByName, Title: r.Title, Note: send.Note,
			PageURL: n.BaseURL + paths.Report(r.Slug), Guest: rc.Kind == models.ApproverGuest}
		err := n.Once(ctx, orgID, "report-send/"+send.ID+"/"+rc.PersonID, func() (Draft, error) {
			msg, err := reportEmails.Render("report_send", rc.Email, send.SentByName+" shared "+r.Title+" with you", data)
			return Draft{Msg: msg}, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
