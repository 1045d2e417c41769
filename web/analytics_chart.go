package web

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/assent-hq/assent/wire"
)

// viewsChart is a report's series drawn for its page: an inline SVG bar
// chart made here, so the page needs no script and loads nothing, with a
// title, a summary in words and the figures of the days with views.
type viewsChart struct {
	SVG     template.HTML
	Summary string
	Days    []wire.DayViews
}

// The chart's drawing box; the page's stylesheet scales it to the width.
// The tallest bar spans chartTop to chartBase: the scale's label sits
// above it, the dates below.
const (
	chartWidth  = 600
	chartHeight = 176
	chartTop    = 18
	chartBase   = 152
)

func newViewsChart(series []wire.DayViews) *viewsChart {
	c := &viewsChart{Summary: viewsSummary(series)}
	most := int64(1)
	for _, d := range series {
		most = max(most, d.Views)
		if d.Views > 0 {
			c.Days = append(c.Days, d)
		}
	}
	slot := float64(chartWidth) / float64(len(series))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="views-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-labelledby="views-chart-title views-chart-desc">`,
		chartWidth, chartHeight)
	fmt.Fprintf(&b, `<title id="views-chart-title">Views per day, last %d days (UTC)</title>`, len(series))
	fmt.Fprintf(&b, `<desc id="views-chart-desc">%s</desc>`, template.HTMLEscapeString(c.Summary))
	fmt.Fprintf(&b, `<line class="axis" x1="0" y1="%d" x2="%d" y2="%d"/>`, chartBase, chartWidth, chartBase)
	for i, d := range series {
		if d.Views == 0 {
			continue
		}
		h := float64(d.Views) / float64(most) * (chartBase - chartTop)
		fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %s, %s</title></rect>`,
			float64(i)*slot+slot*0.15, chartBase-h, slot*0.7, h, template.HTMLEscapeString(dayLabel(d.Date)),
			count(d.Views, "view"), count(d.Readers, "reader"))
	}
	if n := len(series); n > 0 {
		fmt.Fprintf(&b, `<text x="0" y="%d">%s</text>`, chartHeight-6, template.HTMLEscapeString(dayLabel(series[0].Date)))
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">today</text>`, chartWidth, chartHeight-6)
	}
	fmt.Fprintf(&b, `<text x="0" y="12">%s</text>`, count(most, "view"))
	b.WriteString(`</svg>`)
	c.SVG = template.HTML(b.String()) // every value written above is a number or escaped
	return c
}

// viewsSummary says in words what the chart shows.
func viewsSummary(series []wire.DayViews) string {
	var total int64
	busiest := wire.DayViews{}
	for _, d := range series {
		total += d.Views
		if d.Views > busiest.Views {
			busiest = d
		}
	}
	if total == 0 {
		return fmt.Sprintf("Nobody opened the report in the last %d days.", len(series))
	}
	today := series[len(series)-1].Views
	return fmt.Sprintf("%s in the last %d days, %d of them today; the busiest day was %s, with %s.",
		count(total, "view"), len(series), today, dayLabel(busiest.Date), count(busiest.Views, "view"))
}

// dayLabel writes a series date as people read it: 6 Jan.
func dayLabel(date string) string {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return date
	}
	return d.Format("2 Jan")
}

// count writes n of unit, plural unless one.
func count(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
