package main

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
)

// goals are issue 40's bounds on reads with the backlog, in ms at p99.
var goals = map[string]string{
	"GET one approval":                  "p99 within 20 % of empty",
	"GET one collection":                "p99 within 20 % of empty",
	"inbox, every kind (50)":            "p99 ≤ 20 ms",
	"inbox, approvals, first page (50)": "p99 ≤ 20 ms",
	"inbox, collections (50)":           "p99 ≤ 20 ms",
	"approvals list, pending (50)":      "p99 ≤ 20 ms",
	"collections list (50)":             "p99 ≤ 20 ms",
	"admin: members (50)":               "p99 ≤ 20 ms",
	"admin: webhook deliveries (50)":    "p99 ≤ 20 ms",
}

// report writes the run as the Markdown docs/benchmarks.md keeps.
func (l *load) report() string {
	st, e, b := l.st, l.st.Empty, l.st.Backlog
	var w strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&w, format+"\n", a...) }
	if st.Filled < l.o.count {
		p("**The fill stopped at %d of the %d requests asked for (--fill-for).**", st.Filled, l.o.count)
	}
	p("Backlog: %d open requests (%d approvals, %d collections) of %d people; the hot person is asked in one in ten.",
		st.Filled, len(st.Approvals), len(st.Collections), len(st.People))
	p("Fill: %.0f s, %.0f creates/s with %d clients; this run's receiver took %d webhook deliveries and %d callbacks.",
		st.FillSeconds, float64(st.Filled)/st.FillSeconds, st.FillClients, b.Webhooks, b.Callbacks)
	p("Reads: %d per measure at %d clients, and %d one at a time (%q), through the proxy to two `serve`; machine: %d cores.",
		l.o.samples, l.o.clients, l.o.oneClientSamples(), oneClient, runtime.NumCPU())
	p("")
	p("| Read | empty (%d) p50 / p99 ms | backlog (%d) p50 / p99 ms | p99 ratio | goal |", e.Requests, b.Requests)
	p("|---|---|---|---|---|")
	for _, n := range slices.Sorted(maps.Keys(b.Reads)) {
		eb, bb := e.Reads[n], b.Reads[n]
		goal := goals[strings.TrimSuffix(n, oneClient)]
		if goal == "" {
			goal = "p99 ≤ 50 ms"
		}
		ratio := "–"
		if eb.P99 > 0 {
			ratio = fmt.Sprintf("%.2f", bb.P99/eb.P99)
		}
		p("| %s | %.1f / %.1f | %.1f / %.1f | %s | %s |", n, eb.P50, eb.P99, bb.P50, bb.P99, ratio, goal)
	}
	p("")
	p("| Process | resident MB, empty | resident MB, backlog | peak MB | goal |")
	p("|---|---|---|---|---|")
	for _, n := range slices.Sorted(maps.Keys(b.RSS)) {
		p("| %s | %.0f | %.0f | %.0f | ≤ 512 |", n, e.RSS[n].NowMB, b.RSS[n].NowMB, b.RSS[n].PeakMB)
	}
	if r := b.Restart; r != nil && l.o.asIs {
		p("")
		p("Worker restart (both killed with SIGKILL, measured as is: no probe through the workers' backlog): ready in %.1f s. Both workers' CPU in each 10 s after ready (%% of one core): %s; resident MB a minute later: %s.",
			r.ReadyS, floats(r.CPU, "%.0f"), floats(r.RSSMB, "%.0f"))
	} else if r != nil {
		p("")
		p("Worker restart (both killed with SIGKILL): ready in %.1f s; a request created and decided after the kill had its callback %.1f s after the kill (decision → callback %.0f ms, %.0f ms before the kill). Both workers' CPU in each 10 s after ready (%% of one core): %s; resident MB a minute later: %s. Goal: steady within a minute.",
			r.ReadyS, r.ProbeAfterS, r.ProbeAfterMS, r.ProbeBeforeMS, floats(r.CPU, "%.0f"), floats(r.RSSMB, "%.0f"))
	}
	if r := b.Restart; r != nil && r.RateBefore >= 1 { // only with work left to do
		p("")
		steady := "not within the minute"
		for i, rate := range r.Rate {
			if rate >= 0.9*r.RateBefore {
				steady = fmt.Sprintf("%d s after ready", 10*(i+1))
				break
			}
		}
		p("The workers' throughput (requests taken up, events fanned out and deliveries ended, a second): %.1f in the 30 s before the kill; in each 10 s after ready: %s. Back to 90 %% of before (steady): %s.",
			r.RateBefore, floats(r.Rate, "%.1f"), steady)
	}
	if len(b.Plans) > 0 {
		p("")
		p("Plans (EXPLAIN on PostgreSQL with the backlog, the service's own SQL):")
		for _, n := range slices.Sorted(maps.Keys(b.Plans)) {
			p("")
			p("%s:", n)
			p("```")
			p("%s", strings.TrimSpace(b.Plans[n]))
			p("```")
		}
	}
	return w.String()
}

func floats(fs []float64, format string) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = fmt.Sprintf(format, f)
	}
	return strings.Join(s, ", ")
}
