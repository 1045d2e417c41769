package reporttemplates

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

func TestTemplates(t *testing.T) {
	var ids []string
	for _, tpl := range List() {
		ids = append(ids, tpl.ID)
		assert.NotEmpty(t, tpl.Name)
		assert.NotEmpty(t, tpl.Description)
		got, ok := Get(tpl.ID)
		require.True(t, ok)
		assert.Equal(t, tpl.Name, got.Name)
		require.Contains(t, tpl.Files, "index.html")
		require.Contains(t, tpl.Files, "style.css")
		checkPage(t, tpl.ID, tpl.Files["index.html"])
	}
	assert.Equal(t, []string{"tpl_weekly_status", "tpl_incident_review", "tpl_dashboard"}, ids)
	_, ok := Get("tpl_nope")
	assert.False(t, ok)
}

// checkPage: a titled page in a language, and nothing it loads or links
// comes from another origin.
func checkPage(t *testing.T, id string, page []byte) {
	z := html.NewTokenizer(bytes.NewReader(page))
	var lang, title bool
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, more := z.TagName()
		for more {
			var k, v []byte
			k, v, more = z.TagAttr()
			key, val := string(k), strings.TrimSpace(string(v))
			if key == "lang" && string(name) == "html" && val != "" {
				lang = true
			}
			if key == "src" || key == "href" || key == "action" {
				assert.False(t, strings.Contains(val, "//"), "%s: <%s %s=%q> leaves the report's origin", id, name, key, val)
			}
		}
		if string(name) == "title" {
			title = true
		}
	}
	assert.True(t, lang, "%s: <html lang>", id)
	assert.True(t, title, "%s: <title>", id)
}

func TestDashboardReadsItsDatasetRelatively(t *testing.T) {
	tpl, ok := Get("tpl_dashboard")
	require.True(t, ok)
	assert.Contains(t, string(tpl.Files["index.html"]), `fetch("_data/metrics"`)
	var example struct {
		KPIs   []map[string]any `json:"kpis"`
		Series []map[string]any `json:"series"`
	}
	require.NoError(t, json.Unmarshal(tpl.ExampleData["metrics"], &example))
	assert.NotEmpty(t, example.KPIs)
	assert.NotEmpty(t, example.Series)
}
