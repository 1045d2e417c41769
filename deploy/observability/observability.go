// Package observability holds what operators load beside Assent's
// metrics: the Prometheus alerting rules (alerts.yml) and the Grafana
// dashboard (grafana-dashboard.json), embedded so tests read them with
// Prometheus's own parsers and check each metric they name against what
// the processes serve (cmd/assent's TestMetrics).
package observability

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// Rules is the alerting rules file.
//
//go:embed alerts.yml
var Rules []byte

// Dashboard is the Grafana dashboard.
//
//go:embed grafana-dashboard.json
var Dashboard []byte

// Expressions are every PromQL expression of the rules and the dashboard,
// by where each is ("rule AssentOutboxLagging", "panel Outbox lag A"),
// the dashboard's variables replaced by values Grafana could give them.
func Expressions() (map[string]string, error) {
	groups, errs := rulefmt.Parse(Rules, false)
	if len(errs) > 0 {
		return nil, fmt.Errorf("alerts.yml: %v", errs)
	}
	out := map[string]string{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			name := r.Alert.Value
			if name == "" {
				name = r.Record.Value
			}
			out["rule "+name] = r.Expr.Value
		}
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string
			}
		}
	}
	if err := json.Unmarshal(Dashboard, &d); err != nil {
		return nil, fmt.Errorf("grafana-dashboard.json: %w", err)
	}
	grafana := strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$job", ".*")
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			out["panel "+p.Title+" "+t.RefID] = grafana.Replace(t.Expr)
		}
	}
	return out, nil
}

// MetricNames parses expr and returns the metric names it selects, sorted.
func MetricNames(expr string) ([]string, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name != "" {
			seen[name] = true
		}
		return nil
	})
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}
