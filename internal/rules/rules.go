// Package rules evaluates an organisation's rules over a new request. A
// rule's condition is a CEL expression over `request`, a map with the
// request's fields as the API takes them (title, description, risk,
// factors, links, approvers, externalId, flowId, metadata, input). A
// sharing rule's condition is over `report` and `grant` instead (see
// Forbids).
package rules

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// Rule kinds.
const (
	// KindApproval raises the number of approvals a request needs.
	KindApproval = "approval"
	// KindEthics raises a concern; approving then needs a written reason.
	KindEthics = "ethics"
	// KindRestricted hides fields on the page an emailed link opens
	// without signing in.
	KindRestricted = "restricted"
	// KindSharing forbids the report grants its condition matches.
	KindSharing = "sharing"
)

// Kinds lists every rule kind.
var Kinds = []string{KindApproval, KindEthics, KindRestricted, KindSharing}

// Rule is what evaluation needs of a stored rule.
type Rule struct {
	Name string
	Kind string
	// Condition is a CEL expression yielding a bool; empty matches always.
	Condition         string
	RequiredApprovals int
	Principle         string
	Concern           string
	Fields            []string
	// EscalationAfter (0 for none) and EscalationTo are an approval rule's
	// escalation.
	EscalationAfter time.Duration
	EscalationTo    []string
}

// Escalation is the escalation a request gets from the rules.
type Escalation struct {
	Rule  string
	After time.Duration
	To    []string
}

// Concern is an ethics rule's finding.
type Concern struct {
	Principle string
	Rule      string
	Concern   string
}

// Outcome is what the matching rules ask of a request.
type Outcome struct {
	RequiredApprovals int
	Concerns          []Concern
	RestrictedFields  []string
	// Escalation is the soonest of the matching approval rules'
	// escalations (the first rule's among equals), or nil.
	Escalation *Escalation
	// Errors name the rules whose condition failed to evaluate (a missing
	// key, say). Such a rule does not match; guard with has().
	Errors []error
}

var (
	env        = newEnv(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)))
	sharingEnv = newEnv(cel.Variable("report", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("grant", cel.MapType(cel.StringType, cel.DynType)))
	gateEnv = newEnv(cel.Variable("input", cel.DynType),
		cel.Variable("caller", cel.MapType(cel.StringType, cel.StringType)))
	programs sync.Map // kind and condition → cel.Program
)

func newEnv(vars ...cel.EnvOption) *cel.Env {
	e, err := cel.NewEnv(vars...)
	if err != nil {
		panic(err)
	}
	return e
}

// Check compiles a condition of a rule of kind and requires it to yield a
// bool; the error is a sentence for the person who wrote it.
func Check(kind, condition string) error {
	_, err := program(kind, condition)
	return err
}

func program(kind, condition string) (cel.Program, error) {
	e := env
	switch kind {
	case KindSharing:
		e = sharingEnv
	case kindGate:
		e = gateEnv
	}
	cacheKey := kind + "\x00" + condition
	if p, ok := programs.Load(cacheKey); ok {
		return p.(cel.Program), nil
	}
	ast, iss := e.Compile(condition)
	if iss.Err() != nil {
		return nil, fmt.Errorf("the condition does not compile: %v", iss.Err())
	}
	// A bare field (request.urgent) is dyn; asking for == true keeps every
	// saved condition provably boolean.
	if t := ast.OutputType(); t != cel.BoolType {
		return nil, fmt.Errorf("the condition must yield a bool, not %s (compare a field, e.g. request.input.urgent == true)", t)
	}
	p, err := e.Program(ast, cel.CostLimit(100_000))
	if err != nil {
		return nil, fmt.Errorf("the condition cannot run: %v", err)
	}
	programs.Store(cacheKey, p)
	return p, nil
}

// Evaluate applies every rule to request.
func Evaluate(rs []Rule, request map[string]any) Outcome {
	out := Outcome{RequiredApprovals: 1}
	for _, r := range rs {
		if r.Kind == KindSharing {
			continue // about reports, not requests
		}
		matched, err := matches(r.Kind, r.Condition, map[string]any{"request": request})
		if err != nil {
			out.Errors = append(out.Errors, fmt.Errorf("rule %q: %w", r.Name, err))
			continue
		}
		if !matched {
			continue
		}
		switch r.Kind {
		case KindApproval:
			out.RequiredApprovals = max(out.RequiredApprovals, r.RequiredApprovals)
			if r.EscalationAfter > 0 && (out.Escalation == nil || r.EscalationAfter < out.Escalation.After) {
				out.Escalation = &Escalation{Rule: r.Name, After: r.EscalationAfter, To: r.EscalationTo}
			}
		case KindEthics:
			out.Concerns = append(out.Concerns, Concern{Principle: r.Principle, Rule: r.Name, Concern: r.Concern})
		case KindRestricted:
			for _, f := range r.Fields {
				if !slices.Contains(out.RestrictedFields, f) {
					out.RestrictedFields = append(out.RestrictedFields, f)
				}
			}
		}
	}
	return out
}

// Forbids is the name of the first sharing rule whose condition holds for
// a grant of report, or "". Both are maps as the API shows them: report
// {id, title, slug, classification, living, owner {type, id, name}} and
// grant {kind, id, name, by {type, id, name}}. A condition that fails to
// evaluate forbids: sharing fails closed.
func Forbids(rs []Rule, report, grant map[string]any) string {
	for _, r := range rs {
		if r.Kind != KindSharing {
			continue
		}
		matched, err := matches(r.Kind, r.Condition, map[string]any{"report": report, "grant": grant})
		if matched || err != nil {
			return r.Name
		}
	}
	return ""
}

func matches(kind, condition string, vars map[string]any) (bool, error) {
	if condition == "" {
		return true, nil
	}
	p, err := program(kind, condition)
	if err != nil {
		return false, err
	}
	v, _, err := p.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, fmt.Errorf("the condition yielded %s, not a bool", v.Type())
	}
	return bool(b), nil
}
