package rel

import (
	"github.com/dpsql/dpsql/dpquery/eval"
)

// EvalPred is a WHERE compiled by dpquery/eval (issue 25): total, with a
// cost fixed by the program. Its GetFields index Cols, in order.
type EvalPred struct {
	Cols []Col
	P    *eval.Pred
}

// Columns implements Predicate.
func (e EvalPred) Columns() []Col { return e.Cols }

// Eval implements Predicate.
func (e EvalPred) Eval(vals []any) bool { return e.P.Match(vals) }

// String implements Predicate.
func (e EvalPred) String() string { return e.P.String() }
