// Package reporttemplates holds the built-in report templates, embedded in
// the binary: polished starting points that an agent copies into a report
// of its own (POST /api/v1/reports/{templateId}/copy) and fills in.
//
// Each template is one folder: index.html, its style.css and, for the
// dashboard, its script. A copy carries exactly that folder, so the
// folders share nothing and a template can change its look without
// touching the others. Nothing is loaded from elsewhere (no fonts, scripts
// or images) and every URL is relative, since a report is served from an
// origin of its own and the publish scan holds one that names another.
// Scripts are files rather than inline, so that a strict
// Content-Security-Policy on that origin still runs them.
//
// Placeholders are in square brackets ("[Team name]"), realistic enough to
// show what belongs there; a comment at the top of each index.html tells
// the agent how to fill it in.
package reporttemplates

import (
	"embed"
	"encoding/json"
	"io/fs"
)

// files are the templates' folders: their pages, stylesheets and scripts.
// Only these patterns are embedded, so example datasets and anything else
// kept beside a template stay out of the copies.
//
//go:embed */index.html */*.css */*.js
var files embed.FS

// examples are the example datasets, kept apart from files so that a copy
// does not publish them as pages of the report.
//
//go:embed dashboard/example-metrics.json
var examples embed.FS

// Template is one built-in report template.
type Template struct {
	// ID is stable across releases, since agents keep it to copy from
	// ("tpl_" and a name).
	ID string
	// Name and Description are shown in the list of templates.
	Name, Description string
	// Files are rooted at the template's folder: index.html at the root,
	// with the files it links to beside it.
	Files fs.FS
	// ExampleData are the datasets the template reads at _data/<name>,
	// by name, each with an example of the JSON it expects; nil for a
	// template that reads none.
	ExampleData map[string]json.RawMessage
}

// definition is a template's metadata and where its files are embedded.
type definition struct {
	id, name, description string
	folder                string
	// examples maps a dataset's name to its example's path in examples.
	examples map[string]string
}

// definitions in the order List returns them.
var definitions = []definition{
	{
		id:   "tpl_weekly_status",
		name: "Weekly status report",
		description: "A team's week at a glance: summary, highlights, progress by workstream " +
			"with on track, at risk and blocked badges, risks and asks, and the plan for next week.",
		folder: "weekly-status",
	},
	{
		id:   "tpl_incident_review",
		name: "Incident review",
		description: "A blameless post-incident review: impact, duration and severity, a timeline, " +
			"root cause and contributing factors, what went well and badly, and action items " +
			"with owners and due dates.",
		folder: "incident-review",
	},
	{
		id:   "tpl_dashboard",
		name: "Live dashboard",
		description: "Key figures and a trend chart drawn from the report's dataset \"metrics\" each " +
			"time the page opens: update the dataset, not the report.",
		folder:   "dashboard",
		examples: map[string]string{"metrics": "dashboard/example-metrics.json"},
	},
}

// List returns the built-in templates in a stable order.
func List() []Template {
	out := make([]Template, len(definitions))
	for i, d := range definitions {
		out[i] = d.template()
	}
	return out
}

// Get returns the built-in template with the given id, and false when
// there is none.
func Get(id string) (Template, bool) {
	for _, d := range definitions {
		if d.id == id {
			return d.template(), true
		}
	}
	return Template{}, false
}

// template builds a fresh Template on each call, so a caller changing its
// ExampleData changes nobody else's.
func (d definition) template() Template {
	t := Template{ID: d.id, Name: d.name, Description: d.description, Files: must(fs.Sub(files, d.folder))}
	if len(d.examples) > 0 {
		t.ExampleData = make(map[string]json.RawMessage, len(d.examples))
		for name, path := range d.examples {
			t.ExampleData[name] = must(fs.ReadFile(examples, path))
		}
	}
	return t
}

// must panics on an error reading the embedded files, which can only be a
// mistake in this package (a folder or example renamed), caught by its
// tests.
func must[T any](v T, err error) T {
	if err != nil {
		panic("reporttemplates: " + err.Error())
	}
	return v
}
