package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/gin-gonic/gin"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/internal/buildinfo"
	"github.com/assent-hq/assent/mcp"
	assent "github.com/assent-hq/assent/sdk/go"
)

// mountMCP serves the MCP tools over streamable HTTP at /mcp, their REST
// calls served by e, the API, in this process.
func mountMCP(e *gin.Engine, log *slog.Logger, baseURL string) {
	h := gin.WrapH(mcp.Handler(mcp.HTTPOptions{API: e, BaseURL: baseURL, Version: buildinfo.Version(),
		ResourceMetadataURL: baseURL + api.ProtectedResourcePath + api.MCPPath,
		MaxBodyBytes:        api.ReportBodyLimit, Logger: log.With("component", "mcp")}))
	e.Any(api.MCPPath, h)
}

// runMCP serves the MCP tools over stdio, a client of the API at
// ASSENT_BASE_URL with the key in ASSENT_API_KEY.
func runMCP(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: assent mcp

Serves Assent's MCP tools over standard input and output, for an MCP
client that starts it. It calls the API at ASSENT_BASE_URL (default
`+assent.DefaultBaseURL+`) with the agent key in ASSENT_API_KEY.
`)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if os.Getenv("ASSENT_API_KEY") == "" {
		return errors.New("set ASSENT_API_KEY to an agent key (and ASSENT_BASE_URL to the instance's address)")
	}
	// The User-Agent names the Go SDK's version, a valid token; MCP
	// clients are told the binary's.
	c := assent.New("", "", assent.WithUserAgent("assent-mcp/"+assent.Version))
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := mcp.NewServer(mcp.Options{Version: buildinfo.Version(), Logger: log,
		Client: func(context.Context, *sdkmcp.CallToolRequest) (*assent.Client, error) { return c, nil }})
	err := s.Run(ctx, &sdkmcp.StdioTransport{})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
