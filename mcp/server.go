// Package mcp is Assent as a Model Context Protocol server: the tools an
// agent calls to ask a person, wait safely and run only what was
// approved. Every tool is a thin client of the REST API through the Go SDK
// (sdk/go), so the API's authentication, scopes, body limits, rate limits
// and idempotency apply unchanged. Stdio (`assent mcp`) and streamable
// HTTP (`/mcp` on `assent serve` and `assent dev`) serve the same tools.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	assent "github.com/assent-hq/assent/sdk/go"
)

// ClientFor returns the API client a tool call uses: the process's for
// stdio, one carrying the HTTP request's bearer key for /mcp.
type ClientFor func(ctx context.Context, req *sdkmcp.CallToolRequest) (*assent.Client, error)

// Options configure the server.
type Options struct {
	// Version is the server's version as clients see it.
	Version string
	Logger  *slog.Logger
	Client  ClientFor
}

// Instructions tell the model what the server is for.
const Instructions = `Assent asks a person before an agent acts. Use request_approval before any action with side effects a person should agree to (payments, deletions, messages sent, deployments), then run the action only with approvedInput, never with the input you proposed. A result with status "pending" means nobody decided yet: call wait_for_decision with its requestId, as often as needed; pending is never a rejection. Use ask_human when you need information only a person has, request_review to have a published report reviewed, and check_action for actions the organisation registered with a policy. Once an action a decision token allowed has run, report how it ended with report_execution.`

// NewServer returns the MCP server with every tool.
func NewServer(o Options) *sdkmcp.Server {
	if o.Version == "" {
		o.Version = "dev"
	}
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "assent", Title: "Assent", Version: o.Version},
		&sdkmcp.ServerOptions{Instructions: Instructions, Logger: o.Logger})
	t := &tools{client: o.Client}
	t.register(s)
	return s
}

// toolError is what an API refusal becomes: a tool result with isError,
// its text naming the code and the field so a model can correct its call.
func toolError(err error) error {
	var e *assent.Error
	if !errors.As(err, &e) {
		return err
	}
	if e.Code == assent.CodeNetworkError && e.Status == 0 {
		// No answer came: nothing was refused, and a retry may succeed.
		msg := fmt.Sprintf("Assent could not be reached, so nothing was done: %s. Check that Assent runs at the address configured (ASSENT_BASE_URL), then call again", e.Message)
		return errors.New(msg) // the model reads it: a sentence, capital and all
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Assent refused the call: %s (code %s", e.Message, e.Code)
	if e.Status != 0 {
		fmt.Fprintf(&b, ", HTTP %d", e.Status)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ", field %s", e.Field)
	}
	b.WriteString(")")
	if len(e.Candidates) > 0 {
		fmt.Fprintf(&b, "; did you mean one of: %s", strings.Join(e.Candidates, ", "))
	}
	// receipt_exists and input_mismatch concern a receipt: the model needs
	// it to tell a report made before from one that did not match.
	if e.Receipt != nil {
		var r []byte
		if e.Code == assent.CodeReceiptExists {
			// The API names another's receipt by its id and times only.
			out := fromReceipt(e.Receipt)
			r, _ = json.Marshal(map[string]string{"receiptId": out.ReceiptID, "startedAt": out.StartedAt,
				"finishedAt": out.FinishedAt, "reportedAt": out.ReportedAt})
		} else {
			r, _ = json.Marshal(fromReceipt(e.Receipt))
		}
		fmt.Fprintf(&b, "; the receipt: %s", r)
	}
	return errors.New(b.String())
}
