package observability

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prometheus/prometheus/model/rulefmt"
)

// The rules load as Prometheus loads them (rulefmt checks each expression
// and template), and every alert says how bad it is and what to do.
func TestRulesLoad(t *testing.T) {
	groups, errs := rulefmt.ParseFile("alerts.yml", false)
	require.Empty(t, errs)
	n := 0
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			n++
			name := r.Alert.Value
			assert.True(t, strings.HasPrefix(name, "Assent"), "alert %q", name)
			assert.Contains(t, []string{"warning", "critical"}, r.Labels["severity"], name)
			assert.NotEmpty(t, r.Annotations["summary"], name)
			assert.NotEmpty(t, r.Annotations["description"], name)
		}
	}
	assert.GreaterOrEqual(t, n, 5)
}

// Every expression of the rules and the dashboard parses and names at
// least one metric, each one of Assent's, the Temporal SDK's or the Go
// and process collectors'.
func TestExpressionsParse(t *testing.T) {
	exprs, err := Expressions()
	require.NoError(t, err)
	panels := 0
	for where, e := range exprs {
		if strings.HasPrefix(where, "panel ") {
			panels++
		}
		names, err := MetricNames(e)
		if !assert.NoError(t, err, "%s: %s", where, e) {
			continue
		}
		assert.NotEmpty(t, names, where)
		for _, n := range names {
			assert.Regexp(t, `^(assent|temporal|go|process)_`, n, where)
		}
	}
	assert.Greater(t, panels, 20, "the dashboard's queries")
}

func TestMetricNames(t *testing.T) {
	names, err := MetricNames(`sum(rate(a_total{x="1"}[5m])) / sum(rate({__name__="b_total"}[5m])) or on() vector(0)`)
	require.NoError(t, err)
	assert.Equal(t, []string{"a_total", "b_total"}, names)
	_, err = MetricNames(`sum(`)
	assert.Error(t, err)
}
