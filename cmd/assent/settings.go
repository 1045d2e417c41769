package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
)

// The configuration flags each subcommand reads; `assent <command> -h`
// lists these alone. Every setting is still read from its environment
// variable, so one environment serves every command.
var (
	// databaseSettings: every command that opens the database, whose
	// default SQLite file (and dev's secret key) is in the data dir.
	databaseSettings = []string{"database-url", "data-dir", "log-level"}
	// temporalSettings reach a Temporal frontend as a client.
	temporalSettings = []string{"temporal-address", "temporal-namespace", "temporal-tls-ca", "temporal-tls-cert", "temporal-tls-key", "temporal-tls-server-name"}
	// embeddedTemporalSettings run the embedded Temporal server.
	embeddedTemporalSettings = []string{"temporal-namespace", "temporal-port", "temporal-ui-port", "temporal-ui-write-actions"}
	smtpSettings             = []string{"smtp-host", "smtp-port", "smtp-username", "smtp-from", "smtp-tls"}
	// pagesSettings serve the API and the pages.
	pagesSettings = []string{"http-addr", "base-url", "reports-domain", "blob-url", "oidc-issuer", "oidc-client-id", "oidc-label",
		"operators", "temporal-ui-url", "trusted-proxies", "slack-api-url", "long-polls-per-key", "long-polls", "receiver-networks", "metrics-addr"}

	commandSettings = map[string][]string{
		"dev":      slices.Concat(databaseSettings, pagesSettings, embeddedTemporalSettings),
		"serve":    slices.Concat(databaseSettings, pagesSettings, temporalSettings, smtpSettings),
		"worker":   slices.Concat(databaseSettings, []string{"base-url", "slack-api-url", "receiver-networks", "worker-http-addr", "metrics-addr"}, temporalSettings, smtpSettings),
		"migrate":  databaseSettings,
		"temporal": slices.Concat([]string{"data-dir", "log-level"}, embeddedTemporalSettings),
	}
)

// offer puts the settings named, registered in all, on fs, each once.
func offer(fs, all *flag.FlagSet, names []string) {
	for _, name := range names {
		if fs.Lookup(name) != nil {
			continue
		}
		f := all.Lookup(name)
		if f == nil {
			panic("no configuration flag --" + name)
		}
		fs.Var(f.Value, f.Name, f.Usage)
	}
}

// printSettings writes fs's flags, each described, without their current
// values (printFlag).
func printSettings(w io.Writer, command string, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: assent %s [flags]\n\nsettings (each also read from the environment variable named):\n", command)
	fs.VisitAll(func(f *flag.Flag) { printFlag(w, f) })
}
