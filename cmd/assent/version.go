package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/assent-hq/assent/internal/buildinfo"
)

// runVersion prints the binary's version, commit and Go release; --json
// prints them as one object.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("assent version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print {version, commit, commitTime, modified, goVersion} as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("assent version takes only flags; got %q", fs.Arg(0))
	}
	info := buildinfo.Get()
	if *asJSON {
		return json.NewEncoder(stdout).Encode(info)
	}
	_, err := fmt.Fprintln(stdout, info)
	return err
}
