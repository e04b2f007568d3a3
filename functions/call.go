package functions

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Releaser is implemented by expressions that spend privacy budget. The
// engine's guard uses it to refuse plans that could evaluate a release more
// than once (per row, per join iteration, inside subqueries).
type Releaser interface {
	IsDPRelease() bool
}

// callFn evaluates a function on its already-evaluated arguments.
type callFn func(ctx *sql.Context, args []any) (any, error)

// call is the sql.Expression behind every DP_* function.
type call struct {
	name    string
	args    []sql.Expression
	release bool
	typ     sql.Type
	fn      callFn
}

var (
	_ sql.FunctionExpression         = (*call)(nil)
	_ sql.NonDeterministicExpression = (*call)(nil)
	_ sql.CollationCoercible         = (*call)(nil)
	_ Releaser                       = (*call)(nil)
)

func (c *call) FunctionName() string { return strings.ToLower(c.name) }
func (c *call) Description() string  { return "dpsql differentially private function " + c.name }

// IsNonDeterministic stops the analyzer from folding a call into a constant:
// a release must happen exactly once, when the query runs.
func (c *call) IsNonDeterministic() bool { return true }
func (c *call) IsDPRelease() bool        { return c.release }
func (c *call) Resolved() bool {
	for _, a := range c.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}
func (c *call) String() string {
	parts := make([]string, len(c.args))
	for i, a := range c.args {
		parts[i] = a.String()
	}
	return fmt.Sprintf("%s(%s)", c.name, strings.Join(parts, ", "))
}
func (c *call) Type() sql.Type             { return c.typ }
func (c *call) IsNullable() bool           { return true }
func (c *call) Children() []sql.Expression { return c.args }
func (c *call) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_Default, 4
}
func (c *call) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != len(c.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(children), len(c.args))
	}
	nc := *c
	nc.args = children
	return &nc, nil
}
func (c *call) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	vals := make([]any, len(c.args))
	for i, a := range c.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	out, err := c.fn(ctx, vals)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	return out, nil
}

// function builds the sql.Function for a DP_* function with an argument
// count in [minArgs, maxArgs].
func function(name string, minArgs, maxArgs int, release bool, typ sql.Type, fn callFn) sql.Function {
	return sql.FunctionN{Name: strings.ToLower(name), Fn: func(args ...sql.Expression) (sql.Expression, error) {
		if len(args) < minArgs || (maxArgs >= 0 && len(args) > maxArgs) {
			want := fmt.Sprintf("%d", minArgs)
			if maxArgs != minArgs {
				if maxArgs < 0 {
					want = fmt.Sprintf("at least %d", minArgs)
				} else {
					want = fmt.Sprintf("%d to %d", minArgs, maxArgs)
				}
			}
			return nil, fmt.Errorf("%s expects %s arguments, got %d", name, want, len(args))
		}
		return &call{name: name, args: args, release: release, typ: typ, fn: fn}, nil
	}}
}

var (
	textType   = types.LongText
	doubleType = types.Float64
)
