package crashtest

import (
	"fmt"
	"html"
	"strings"
)

// plotSoak draws the soak's samples as an SVG: one panel per measure,
// one line per process or database, minutes along the bottom.
func plotSoak(samples []soakSample) []byte {
	type series struct {
		name string
		at   func(soakSample) float64
	}
	of := func(names []string, m func(soakSample) map[string]float64) []series {
		var out []series
		for _, n := range names {
			out = append(out, series{n, func(x soakSample) float64 { return m(x)[n] }})
		}
		return out
	}
	ints := func(m map[string]int) map[string]float64 {
		out := map[string]float64{}
		for k, v := range m {
			out[k] = float64(v)
		}
		return out
	}
	temporal := []string{"temporal-history", "temporal-matching", "temporal-frontend"}
	panels := []struct {
		title  string
		series []series
	}{
		{"Resident memory (MB)", of(append(append([]string{}, assentProcesses...), temporal...), func(x soakSample) map[string]float64 { return x.RSSMB })},
		{"Goroutines", of(assentProcesses, func(x soakSample) map[string]float64 { return ints(x.Goroutines) })},
		{"Open files", of(append(append([]string{}, assentProcesses...), temporal...), func(x soakSample) map[string]float64 { return ints(x.OpenFiles) })},
		{"Reads through the proxy (ms)", []series{{"GET p50", func(x soakSample) float64 { return x.GetP50 }},
			{"GET p95", func(x soakSample) float64 { return x.GetP95 }}, {"list p50", func(x soakSample) float64 { return x.ListP50 }}}},
		{"PostgreSQL: databases (MB) and connections", append(of([]string{"assent", "temporal", "temporal_visibility"},
			func(x soakSample) map[string]float64 { return x.DatabaseMB }), series{"connections", func(x soakSample) float64 { return float64(x.Connections) }})},
	}
	colours := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}
	const width, plotW, panelH, plotH, left = 900, 640, 200, 150, 60
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n",
		width, panelH*len(panels)+30)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	last := 0.0
	if len(samples) > 0 {
		last = max(samples[len(samples)-1].Minutes, 1e-9)
	}
	for p, panel := range panels {
		top := p*panelH + 20
		hi := 0.0
		for _, s := range panel.series {
			for _, x := range samples {
				hi = max(hi, s.at(x))
			}
		}
		hi = max(hi*1.1, 1e-9)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, top-6, html.EscapeString(panel.title))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, top, plotW, plotH)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%.0f</text><text x="%d" y="%d" text-anchor="end">0</text>`+"\n",
			left-4, top+10, hi, left-4, top+plotH)
		fmt.Fprintf(&b, `<text x="%d" y="%d">0</text><text x="%d" y="%d" text-anchor="end">%.0f min</text>`+"\n",
			left, top+plotH+14, left+plotW, top+plotH+14, last)
		for i, s := range panel.series {
			colour := colours[i%len(colours)]
			var pts []string
			for _, x := range samples {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", left+x.Minutes/last*plotW, float64(top+plotH)-s.at(x)/hi*plotH))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", colour, strings.Join(pts, " "))
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">%s</text>`+"\n", left+plotW+10, top+12+i*14, colour, html.EscapeString(s.name))
		}
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}
