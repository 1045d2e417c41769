// Package slackapi makes the Slack Web API clients Assent calls Slack
// with: slack-go over the SSRF-guarded outbound client, at an API address
// that tests and `assent dev` point at a fake.
package slackapi

import (
	"net/http"
	"strings"

	"github.com/slack-go/slack"
)

// DefaultURL is Slack's Web API.
const DefaultURL = slack.APIURL

// New returns a client for token that sends through c (the guarded
// outbound client) to the Web API at apiURL ("" is Slack's own).
func New(token string, c *http.Client, apiURL string) *slack.Client {
	return slack.New(token, slack.OptionHTTPClient(c), slack.OptionAPIURL(URL(apiURL)))
}

// URL is apiURL as slack-go takes it, ending in a slash; "" is Slack's.
func URL(apiURL string) string {
	if apiURL == "" {
		return DefaultURL
	}
	return strings.TrimSuffix(apiURL, "/") + "/"
}
