package rules

import (
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// strictEquality makes ==, != and in between values of different kinds an
// error, where CEL answers false (or true): an amount sent as "5000" or
// [5000] would otherwise quietly not equal 5000, and the rule not apply.
// As an error, the rule fails closed (see applies). null compares with
// anything, as the way to ask for a value that was not sent.
func strictEquality(i interpreter.Interpretable) (interpreter.Interpretable, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok || len(call.Args()) != 2 {
		return i, nil
	}
	switch call.Function() {
	case operators.Equals, operators.NotEquals, operators.In:
		return &strictCall{InterpretableCall: call}, nil
	}
	return i, nil
}

type strictCall struct{ interpreter.InterpretableCall }

// Eval is CEL's own ==, != and in once the kinds agree.
func (c *strictCall) Eval(a interpreter.Activation) ref.Val {
	args := c.Args()
	l, r := args[0].Eval(a), args[1].Eval(a)
	if types.IsUnknownOrError(l) {
		return l
	}
	if types.IsUnknownOrError(r) {
		return r
	}
	switch c.Function() {
	case operators.Equals, operators.NotEquals:
		if l != types.NullValue && r != types.NullValue && kindOf(l) != kindOf(r) {
			return types.NewErr("no such overload: %s %s %s", kindOf(l), c.Function(), kindOf(r))
		}
		eq := types.Equal(l, r)
		if c.Function() == operators.NotEquals {
			return types.Bool(eq != types.True)
		}
		return eq
	}
	container, ok := r.(traits.Container)
	if !ok {
		return types.ValOrErr(r, "no such overload")
	}
	if l != types.NullValue && !holdsKind(r, kindOf(l)) {
		return types.NewErr("no such overload: a %s looked for among values of other kinds", kindOf(l))
	}
	return container.Contains(l)
}

// holdsKind reports whether the list or map v is empty or holds (as a
// key, for a map) a value of kind, or only nulls.
func holdsKind(v ref.Val, kind string) bool {
	it, ok := v.(traits.Iterable)
	if !ok {
		return true
	}
	seen := false
	for i := it.Iterator(); i.HasNext() == types.True; {
		e := i.Next()
		if e == types.NullValue {
			continue
		}
		if kindOf(e) == kind {
			return true
		}
		seen = true
	}
	return !seen
}

// kindOf is a value's kind for strict equality: the numbers are one kind,
// as CEL compares them across types.
func kindOf(v ref.Val) string {
	switch v.Type() {
	case types.IntType, types.UintType, types.DoubleType:
		return "number"
	}
	return v.Type().TypeName()
}
