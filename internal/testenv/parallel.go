package testenv

import (
	"flag"
	"strconv"
)

// DefaultParallel lets n of a package's parallel tests run at once unless
// -parallel says otherwise; call it from TestMain before m.Run. It is for
// packages whose tests mostly wait (on Temporal's round trips, on
// processes they start), which at go test's default of one per core keep
// the cores idle (docs/benchmarks.md measures the ones that use it).
func DefaultParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(err)
		}
	}
}
