package main

import (
	"flag"
	"fmt"
	"io"
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
