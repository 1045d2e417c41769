package activities

import (
	"net/http"

	"github.com/assent-hq/assent/requests"
)

// Activities are the worker's side effects that belong to no request
// kind: deliveries, and held versions, schedules and sends of reports.
// Register them with RegisterActivity so each method is known by its
// name. They reach what every kind's activities reach (the store, the base
// URL, the notifier for report sends' emails), and others' servers.
type Activities struct {
	requests.ActivityEnv
	// HTTP sends deliveries: outbound.NewClient with the process's policy.
	HTTP *http.Client
	// SlackAPIURL is Slack's Web API, where approval requests are posted
	// to an organisation's Slack channel; "" is Slack's own.
	SlackAPIURL string
}
