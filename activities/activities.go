package activities

import (
	"net/http"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
)

// Activities are the worker's side effects that belong to no request
// kind: deliveries, and held versions, schedules and sends of reports.
// Register them with RegisterActivity so each method is known by its
// name.
type Activities struct {
	Store *models.Store
	// BaseURL makes the page urls in event data.
	BaseURL string
	// HTTP sends deliveries: outbound.NewClient with the process's policy.
	HTTP *http.Client
	// Notify emails report sends' recipients.
	Notify *notify.Notifier
	// SlackAPIURL is Slack's Web API, where approval requests are posted
	// to an organisation's Slack channel; "" is Slack's own.
	SlackAPIURL string
}
