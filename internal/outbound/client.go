// Package outbound is the one HTTP client for requests Assent sends to
// addresses it was given: webhook deliveries, callbacks, Send test, Slack
// and Teams. Its dialer enforces a netguard.Policy at connect time, it
// ignores proxy settings from the environment, and it never follows a
// redirect.
package outbound

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"code.dny.dev/ssrf"

	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/tracing"
)

// Timeout bounds one attempt (ten seconds).
const Timeout = 10 * time.Second

// NewClient returns a client that only reaches addresses p admits.
func NewClient(p *netguard.Policy) *http.Client { return NewClientWithin(p, Timeout) }

// NewClientWithin is NewClient for receivers that take longer than
// Timeout to answer (a language model): an attempt may take timeout.
func NewClientWithin(p *netguard.Policy, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: p.Control}
	return &http.Client{
		Timeout: timeout,
		// Traced around the guarded transport, whose dialer stays the check.
		Transport: tracing.Transport(&http.Transport{
			Proxy:                 nil, // a proxy would dial for us and bypass the check
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: timeout,
		}),
		// A redirect is the receiver's answer, not an instruction.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Outcome is how one attempt ended.
type Outcome struct {
	// StatusCode is 0 when no response arrived.
	StatusCode int
	Latency    time.Duration
	// Err says why the attempt failed; nil for any 2xx.
	Err error
	// Retryable is whether a later attempt may succeed: false for a 4xx
	// other than 408 and 429, and for a redirect.
	Retryable bool
}

// Post sends body to url with headers and classifies the result. The
// receiver's body is read (to reuse the connection) but never kept.
func Post(ctx context.Context, c *http.Client, target string, body []byte, headers http.Header) Outcome {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return Outcome{Err: fmt.Errorf("bad receiver address: %w", err)}
	}
	for k, v := range headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Assent-Webhooks/1")
	start := time.Now()
	resp, err := c.Do(req)
	latency := time.Since(start)
	if err != nil {
		return Outcome{Latency: latency, Err: describe(err), Retryable: true}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return classify(resp.StatusCode, latency)
}

// classify applies the delivery rules (docs/webhooks.md) to a status code.
func classify(status int, latency time.Duration) Outcome {
	o := Outcome{StatusCode: status, Latency: latency}
	switch {
	case status >= 200 && status < 300:
	case status >= 300 && status < 400:
		o.Err = fmt.Errorf("the receiver answered %d (a redirect, which is not followed)", status)
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500:
		o.Err, o.Retryable = fmt.Errorf("the receiver answered %d", status), true
	default:
		o.Err = fmt.Errorf("the receiver answered %d", status)
	}
	return o
}

// describe keeps a transport error short and free of the URL, which for
// Slack and Teams is a credential.
func describe(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	switch {
	case errors.Is(err, ssrf.ErrProhibitedIP):
		return errors.New("the receiver's address is a private or reserved address")
	case errors.Is(err, ssrf.ErrProhibitedPort):
		return errors.New("the receiver's port is not allowed (only 443)")
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return errors.New("the receiver did not answer within the time allowed")
	}
	return fmt.Errorf("could not reach the receiver: %v", err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
