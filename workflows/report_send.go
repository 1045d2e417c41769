package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// ReportSendInput names a report send whose emails go out.
type ReportSendInput struct {
	OrganizationID string
	SendID         string
}

// ReportSend is the workflow of one report send: it records that it took
// the send up, then emails every recipient on the delivery schedule (each
// email once; a retry sends only those not yet sent).
func ReportSend(ctx workflow.Context, in ReportSendInput) error {
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, persistOptions), ActivityStartSend, in).Get(ctx, nil); err != nil {
		return err
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, emailOptions), ActivityEmailSend, in).Get(ctx, nil)
}
