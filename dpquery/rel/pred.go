package rel

import (
	"fmt"
	"strings"

	"github.com/dpsql/dpsql/functions"
)

// Cmp is a total comparison predicate Col Op Value (Op one of = != < <= >
// >=): numbers compare as float64, anything else by its label string; NULL
// compares false. It is the narrow predicate used until the total
// evaluator of issue 25 (dpquery/eval) is wired behind Predicate.
type Cmp struct {
	Col   Col
	Op    string
	Value any
}

// Columns implements Predicate.
func (c Cmp) Columns() []Col { return []Col{c.Col} }

// String implements Predicate.
func (c Cmp) String() string {
	return fmt.Sprintf("%s %s %q", c.Col, c.Op, functions.LabelString(c.Value))
}

// Eval implements Predicate: no branch on the value can panic or fail.
func (c Cmp) Eval(vals []any) bool {
	v := vals[0]
	if v == nil || c.Value == nil {
		return false
	}
	var d int
	a, okA := functions.ToFloat(v)
	b, okB := functions.ToFloat(c.Value)
	if okA && okB {
		switch {
		case a < b:
			d = -1
		case a > b:
			d = 1
		case a == b:
		default:
			return false // NaN
		}
	} else {
		d = strings.Compare(functions.LabelString(v), functions.LabelString(c.Value))
	}
	switch c.Op {
	case "=":
		return d == 0
	case "!=", "<>":
		return d != 0
	case "<":
		return d < 0
	case "<=":
		return d <= 0
	case ">":
		return d > 0
	case ">=":
		return d >= 0
	}
	return false
}

// And is the conjunction of predicates (each evaluated, no short cut).
type And []Predicate

// Columns implements Predicate.
func (a And) Columns() []Col {
	var out []Col
	for _, p := range a {
		out = append(out, p.Columns()...)
	}
	return out
}

// String implements Predicate.
func (a And) String() string {
	parts := make([]string, len(a))
	for i, p := range a {
		parts[i] = "(" + p.String() + ")"
	}
	return strings.Join(parts, " AND ")
}

// Eval implements Predicate.
func (a And) Eval(vals []any) bool {
	ok := true
	for _, p := range a {
		n := len(p.Columns())
		ok = p.Eval(vals[:n]) && ok
		vals = vals[n:]
	}
	return ok
}
