package sqlcompat

import (
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Rule wraps every CAST(… AS TIME) of the plan in timeCast.
func Rule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		return transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			c, ok := e.(*expression.Convert)
			if !ok || !types.IsTimespan(c.Type()) {
				return e, transform.SameTree, nil
			}
			return &timeCast{Convert: c}, transform.NewTree, nil
		})
	})
}

// timeCast is go-mysql-server's CAST(x AS TIME) except that a string that
// is not a time but is a DATE or DATETIME gives its time of day, as in
// MariaDB. A string without a time part keeps go-mysql-server's answer.
type timeCast struct {
	*expression.Convert
}

var _ sql.Expression = (*timeCast)(nil)

func (t *timeCast) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if s, ok := v.(string); ok && strings.Contains(s, ":") {
		if _, err := types.Time.ConvertToTimespan(s); err != nil {
			if dt, _, err := types.DatetimeMaxPrecision.Convert(ctx, s); err == nil && dt != nil {
				if tm, ok := dt.(time.Time); ok {
					return types.Time.ConvertToTimespan(tm)
				}
			}
		}
	}
	// Everything else as go-mysql-server does it, on the value already
	// evaluated (the child is evaluated once).
	lit := expression.NewLiteral(v, t.Child.Type())
	c, err := t.Convert.WithChildren(lit)
	if err != nil {
		return nil, err
	}
	return c.Eval(ctx, row)
}

func (t *timeCast) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	c, err := t.Convert.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &timeCast{Convert: c.(*expression.Convert)}, nil
}
