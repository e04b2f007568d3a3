package functions

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
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

// Type is the function's result type; a numeric ★ function asked for a
// dry run by a literal options argument answers JSON text instead.
func (c *call) Type() sql.Type {
	if c.typ == doubleType && c.literalDryRun() {
		return textType
	}
	return c.typ
}

// literalDryRun reports whether the options argument is a literal string
// with dry_run=1.
func (c *call) literalDryRun() bool {
	i, ok := optionsArgIndex[c.name]
	if !ok || i >= len(c.args) {
		return false
	}
	l, ok := c.args[i].(*expression.Literal)
	if !ok {
		return false
	}
	s, ok := l.Value().(string)
	if !ok {
		return false
	}
	o, err := parseOptions(s)
	if err != nil {
		return false
	}
	dry, err := dryRunOption(o)
	return err == nil && dry
}
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
	if _, text := out.(string); text && c.Type() == doubleType {
		// A dry run whose options were not a literal: its JSON has no
		// place in a numeric column (nothing was charged).
		return nil, fmt.Errorf("%s: give dry_run=1 in a literal options string to get the plan as text", c.name)
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
