// Package reporttemplates holds the built-in report templates, embedded
// in the binary: starting points an agent copies into a report of its own
// and fills in. Each is self-contained (nothing is loaded from another
// origin) and shares one stylesheet.
package reporttemplates

import (
	"embed"
	"encoding/json"
	"io/fs"
	"path"
)

//go:embed style.css */index.html dashboard/example-metrics.json
var files embed.FS

// Template is one built-in report template.
type Template struct {
	ID, Name, Description string
	// Files are the template's files by path: index.html and style.css
	// at the root.
	Files map[string][]byte
	// ExampleData are datasets the template reads, by name, with example
	// contents.
	ExampleData map[string]json.RawMessage
}

// templates in the order they are listed.
var templates = []Template{
	{ID: "tpl_weekly_status", Name: "Weekly status report",
		Description: "Summary, highlights, progress by workstream with on-track, at-risk and blocked badges, risks and asks, and next week."},
	{ID: "tpl_incident_review", Name: "Incident review",
		Description: "A blameless post-incident review: impact, duration and severity, timeline, root cause, contributing factors, what went well and badly, and action items."},
	{ID: "tpl_dashboard", Name: "Live dashboard",
		Description: "Key figures and a trend chart drawn from the report's dataset `metrics`, read live each time the page opens; update the dataset, not the report."},
}

var folders = map[string]string{"tpl_weekly_status": "weekly-status", "tpl_incident_review": "incident-review", "tpl_dashboard": "dashboard"}

func init() {
	style := must(fs.ReadFile(files, "style.css"))
	for i := range templates {
		t := &templates[i]
		folder := folders[t.ID]
		t.Files = map[string][]byte{"index.html": must(fs.ReadFile(files, path.Join(folder, "index.html"))), "style.css": style}
	}
	templates[2].ExampleData = map[string]json.RawMessage{"metrics": must(fs.ReadFile(files, "dashboard/example-metrics.json"))}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err) // the files are embedded: a missing one is a build mistake
	}
	return b
}

// List returns the templates in a stable order.
func List() []Template { return append([]Template(nil), templates...) }

// Get returns the template with id.
func Get(id string) (Template, bool) {
	for _, t := range templates {
		if t.ID == id {
			return t, true
		}
	}
	return Template{}, false
}
