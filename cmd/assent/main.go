// Command assent is the whole service in one binary: `assent dev` for a
// laptop, `assent serve`, `assent worker` and `assent migrate` for
// production, `assent temporal` for a local Temporal server and
// `assent admin` for the shell.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: assent <command> [flags]

commands:
  dev       everything in one process: embedded Temporal with its UI, SQLite, API, pages, worker, dev mailbox
  serve     the API and pages (stateless; run several)
  worker    the Temporal worker (run several)
  migrate   apply database migrations
  temporal  only the embedded Temporal server and its UI
  mcp       Assent's MCP tools over stdio, a client of the API at ASSENT_BASE_URL with ASSENT_API_KEY
  admin     manage organisations, members, teams, guests and keys; prints JSON
  evidence verify FILE (--url URL | --keys KEYS)   check an evidence export: its entries, digest and signature by a key the instance publishes
  healthcheck URL   exit 0 when URL answers 200 (for container health checks)
  version   print the version, commit and Go release (--json for machines); also --version

Run "assent <command> -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// -h has printed the command's flags: not a failure.
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "assent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "dev":
		return runDev(ctx, rest, stdout, stderr)
	case "serve":
		return runServe(ctx, rest, stderr)
	case "worker":
		return runWorker(ctx, rest, stderr)
	case "migrate":
		return runMigrate(ctx, rest, stdout, stderr)
	case "temporal":
		return runTemporal(ctx, rest, stdout, stderr)
	case "mcp":
		return runMCP(ctx, rest, stderr)
	case "admin":
		return runAdmin(ctx, rest, stdout, stderr)
	case "evidence":
		return runEvidence(ctx, rest, stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, rest)
	case "version", "--version":
		return runVersion(rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
