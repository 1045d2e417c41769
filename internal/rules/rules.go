// Package rules evaluates an organisation's rules over a new request. A
// rule's condition is a CEL expression over `request`, a map with the
// request's fields as the API takes them (title, description, risk,
// factors, links, approvers, externalId, flowId, metadata, input). A
// sharing rule's condition is over `report` and `grant` instead (see
// Forbids).
package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
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
	// Unevaluated are the rules whose condition could not be evaluated on
	// the request: each applied as if it held (see applies).
	Unevaluated []Unevaluated
}

// Unevaluated is a rule whose condition could not be evaluated on a
// request, so its stricter outcome applied.
type Unevaluated struct {
	Rule string
	Kind string
	Err  error
	// Applied is that outcome, as a person reads it.
	Applied string
}

// String is the sentence the request's timeline carries.
func (u Unevaluated) String() string {
	return fmt.Sprintf("organisation rule %q could not be evaluated on this request (%v), so its stricter outcome applies: %s",
		u.Rule, u.Err, u.Applied)
}

var (
	env        = newEnv(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)))
	sharingEnv = newEnv(cel.Variable("report", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("grant", cel.MapType(cel.StringType, cel.DynType)))
	gateEnv = newEnv(cel.Variable("input", cel.DynType),
		cel.Variable("caller", cel.MapType(cel.StringType, cel.StringType)))
	programs sync.Map // kind and condition → *compiled
)

// compiled is a condition ready to run.
type compiled struct {
	program cel.Program
	// reads are the paths of request the condition reads by constant
	// steps (request.input.amount is [input amount]): what tells a field
	// the request lacks from other failures (see lacksField).
	reads [][]any
	// named are those and the paths has() tests: what a key differing
	// from one only by case must not dodge (see caseVariant).
	named [][]any
}

func newEnv(vars ...cel.EnvOption) *cel.Env {
	e, err := cel.NewEnv(vars...)
	if err != nil {
		panic(err)
	}
	return e
}

// RequestFields are the fields of `request`: the create body's keys, each
// present on every request (null when not sent).
var RequestFields = []string{"title", "description", "risk", "factors", "links", "reportId", "approvers", "expiresAt",
	"externalId", "flowId", "metadata", "input", "editableFields", "callbackUrl", "escalation"}

// Check compiles a condition of a rule of kind and requires it to yield a
// bool; the error is a sentence for the person who wrote it. A condition
// over a field request never has is refused too: a rule reading an absent
// field does not apply (see applies), so a misspelt one never would.
func Check(kind, condition string) error {
	if _, err := program(kind, condition); err != nil || kind == KindSharing {
		return err
	}
	ast, _ := env.Compile(condition) // it compiled above
	var unknown []string
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if name, ok := requestField(e); ok && !slices.Contains(RequestFields, name) && !slices.Contains(unknown, name) {
			unknown = append(unknown, name)
		}
	}))
	if len(unknown) > 0 {
		return fmt.Errorf("request has no field %s: its fields are %s (what the agent sent is in request.input)",
			strings.Join(unknown, ", "), strings.Join(RequestFields, ", "))
	}
	return nil
}

// requestField is the field of request e reads directly (request.x or
// request["x"]), if it does.
func requestField(e celast.Expr) (string, bool) {
	isRequest := func(e celast.Expr) bool { return e.Kind() == celast.IdentKind && e.AsIdent() == "request" }
	switch e.Kind() {
	case celast.SelectKind:
		if s := e.AsSelect(); isRequest(s.Operand()) {
			return s.FieldName(), true
		}
	case celast.CallKind:
		c := e.AsCall()
		if args := c.Args(); c.FunctionName() == operators.Index && len(args) == 2 && isRequest(args[0]) && args[1].Kind() == celast.LiteralKind {
			if name, ok := args[1].AsLiteral().(types.String); ok {
				return string(name), true
			}
		}
	}
	return "", false
}

func program(kind, condition string) (*compiled, error) {
	e := env
	switch kind {
	case KindSharing:
		e = sharingEnv
	case kindGate:
		e = gateEnv
	}
	cacheKey := kind + "\x00" + condition
	if c, ok := programs.Load(cacheKey); ok {
		return c.(*compiled), nil
	}
	ast, iss := e.Compile(condition)
	if iss.Err() != nil {
		return nil, fmt.Errorf("the condition does not compile: %v", iss.Err())
	}
	// A bare field (request.input.urgent) is dyn; asking for == true
	// keeps every saved condition provably boolean.
	if t := ast.OutputType(); t != cel.BoolType {
		return nil, fmt.Errorf("the condition must yield a bool, not %s (compare a field, e.g. request.input.urgent == true)", t)
	}
	p, err := e.Program(ast, cel.CostLimit(100_000), cel.CustomDecorator(strictEquality))
	if err != nil {
		return nil, fmt.Errorf("the condition cannot run: %v", err)
	}
	c := &compiled{program: p}
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if path, ok := requestPath(e); ok && len(path) > 0 {
			c.reads = append(c.reads, path)
			c.named = append(c.named, path)
		}
		if e.Kind() == celast.SelectKind && e.AsSelect().IsTestOnly() {
			if path, ok := requestPath(e.AsSelect().Operand()); ok {
				c.named = append(c.named, append(path, e.AsSelect().FieldName()))
			}
		}
	}))
	programs.Store(cacheKey, c)
	return c, nil
}

// requestPath is the path from request that e reads by constant steps,
// field names and literal indexes, if it is one; a has() test reads
// nothing.
func requestPath(e celast.Expr) ([]any, bool) {
	switch e.Kind() {
	case celast.IdentKind:
		return []any{}, e.AsIdent() == "request"
	case celast.SelectKind:
		if s := e.AsSelect(); !s.IsTestOnly() {
			p, ok := requestPath(s.Operand())
			return append(p, s.FieldName()), ok
		}
	case celast.CallKind:
		c := e.AsCall()
		if args := c.Args(); c.FunctionName() == operators.Index && len(args) == 2 && args[1].Kind() == celast.LiteralKind {
			p, ok := requestPath(args[0])
			switch step := args[1].AsLiteral().(type) {
			case types.String:
				return append(p, string(step)), ok
			case types.Int:
				return append(p, int64(step)), ok
			}
		}
	}
	return nil, false
}

// Evaluate applies every rule to request. A rule whose condition cannot
// be evaluated applies, and is named in the outcome's Unevaluated.
func Evaluate(rs []Rule, request map[string]any) Outcome {
	out := Outcome{RequiredApprovals: 1}
	vars := map[string]any{"request": request}
	for _, r := range rs {
		if r.Kind == KindSharing {
			continue // about reports, not requests
		}
		applied, err := applies(r, vars)
		if !applied {
			continue
		}
		if err != nil {
			out.Unevaluated = append(out.Unevaluated, Unevaluated{Rule: r.Name, Kind: r.Kind, Err: err, Applied: r.outcome()})
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

// outcome is what r asks when it applies, as a person reads it.
func (r Rule) outcome() string {
	switch r.Kind {
	case KindApproval:
		return fmt.Sprintf("%d approvals", r.RequiredApprovals)
	case KindEthics:
		return fmt.Sprintf("its concern (%s)", r.Concern)
	case KindRestricted:
		return "hidden fields " + strings.Join(r.Fields, ", ")
	}
	return "the rule applies"
}

// Forbids is the name of the first sharing rule whose condition holds for
// a grant of report, or "", and the error when that rule forbids because
// its condition could not be evaluated. Both are maps as the API shows
// them: report {id, title, slug, classification, living, owner {type, id,
// name}} and grant {kind, id, name, by {type, id, name}}.
func Forbids(rs []Rule, report, grant map[string]any) (string, error) {
	vars := map[string]any{"report": report, "grant": grant}
	for _, r := range rs {
		if r.Kind != KindSharing {
			continue
		}
		if applied, err := applies(r, vars); applied {
			return r.Name, err
		}
	}
	return "", nil
}

// applies reports whether rule r applies, for every kind and every caller.
// Rules fail closed: a condition that cannot be evaluated applies, and the
// error says why. That covers a value of another kind than the condition
// compares ("5000", [5000], null or an object where a number is), a
// condition that no longer compiles, and one over its cost limit; no
// caller can skip it, since the rule's stricter outcome is the answer.
//
// The one exception: a rule over a request does not apply when the
// request lacks a field the condition names (request.input.amount, with
// no amount, or null on the way to it). Such a rule is not about this
// request: one on amounts does not ask two approvals of every request
// without an amount. Omitting a key gives a requester nothing renaming it
// would not, while a value of the wrong kind, which a receiver may still
// read as the amount, applies. Sharing rules read maps the server builds,
// so a key missing there is the rule's own mistake, and it applies.
//
// Nor is a field absent whose key the request spells in another case
// (AMOUNT for request.input.amount, whether read or tested with has()):
// many executors read it as the field, so the rule applies, failing
// closed, and the error says why.
func applies(r Rule, vars map[string]any) (bool, error) {
	if r.Kind != KindSharing {
		if err := caseVariant(r, vars["request"]); err != nil {
			return true, err
		}
	}
	matched, err := matches(r.Kind, r.Condition, vars)
	switch {
	case err == nil:
		return matched, nil
	case r.Kind != KindSharing && lacksField(r, vars["request"], err):
		return false, nil
	}
	return true, err
}

// lacksField reports whether err is CEL's for a missing key and request
// lacks a field on a path r's condition names: a key missing from an
// object on the way, or null there. A key the requester's value picks
// from a map ({"EUR": 1}[request.input.currency]) is not such a field,
// nor is a path through a string or a list.
func lacksField(r Rule, request any, err error) bool {
	if !strings.HasPrefix(err.Error(), "no such key: ") {
		return false
	}
	c, cerr := program(r.Kind, r.Condition)
	if cerr != nil {
		return false
	}
	for _, path := range c.reads {
		if lacks(request, path) {
			return true
		}
	}
	return false
}

// caseVariant is why r's condition must not be read on request when a
// path it names is absent there but a key equal to its step without
// regard to case (strings.EqualFold) is present; nil otherwise.
func caseVariant(r Rule, request any) error {
	c, err := program(r.Kind, r.Condition)
	if err != nil {
		return nil // matches says why
	}
	for _, path := range c.named {
		v, at := request, "request"
		for _, step := range path {
			x, ok := v.(map[string]any)
			key, isKey := step.(string)
			if !ok || !isKey {
				break
			}
			next, found := x[key]
			if !found {
				for _, other := range slices.Sorted(maps.Keys(x)) {
					if strings.EqualFold(other, key) {
						return fmt.Errorf("%s.%s is absent but %s.%s differs from it only by case, which many executors read as the same field",
							at, key, at, other)
					}
				}
				break
			}
			v, at = next, at+"."+key
		}
	}
	return nil
}

func lacks(v any, path []any) bool {
	for _, step := range path {
		switch x := v.(type) {
		case nil: // null on the way: not sent, as input is when absent
			return true
		case map[string]any:
			key, _ := step.(string)
			next, found := x[key]
			if !found {
				return true
			}
			v = next
		case []any:
			i, ok := step.(int64)
			if !ok || i < 0 || i >= int64(len(x)) {
				return false
			}
			v = x[i]
		default:
			return false
		}
	}
	return false
}

func matches(kind, condition string, vars map[string]any) (bool, error) {
	if condition == "" {
		return true, nil
	}
	c, err := program(kind, condition)
	if err != nil {
		return false, err
	}
	v, _, err := c.program.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, fmt.Errorf("the condition yielded %s, not a bool", v.Type())
	}
	return bool(b), nil
}
