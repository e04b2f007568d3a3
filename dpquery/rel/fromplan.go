package rel

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/dpsql/dpsql/dpquery/eval"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// Out says where a column of the GroupBy's output comes from in a Result
// row: group key Group (≥ 0) or aggregate Agg (≥ 0); the other is −1.
type Out struct{ Group, Agg int }

// FromGroupBy translates go-mysql-server's pre-analysis GroupBy subtree
// (GroupBy over an optional Filter over tables and inner equi-joins) into a
// Query with options opt; bounds are the contribution_bounds_per_group of
// the statement (dpquery/syntax), matched to aggregates by function and
// column. It returns the output mapping of the GroupBy's schema.
// Everything it refuses wraps ErrRefused.
func FromGroupBy(gb *plan.GroupBy, opt Options, bounds []ArgBounds) (Query, []Out, error) {
	q := Query{Options: opt}
	child := gb.Child
	var where sql.Expression
	if f, ok := child.(*plan.Filter); ok {
		where, child = f.Expression, f.Child
	}
	from, err := fromNode(child)
	if err != nil {
		return Query{}, nil, err
	}
	q.From = from
	if where != nil {
		p, err := compileWhere(where)
		if err != nil {
			return Query{}, nil, err
		}
		q.Where = p
	}
	for _, g := range gb.GroupByExprs {
		gf, ok := g.(*expression.GetField)
		if !ok {
			return Query{}, nil, refuse("GROUP BY %s: group by plain columns only", g)
		}
		q.GroupBy = append(q.GroupBy, colOf(gf))
	}
	var outs []Out
	for _, se := range gb.SelectedExprs {
		e := se
		if a, ok := e.(*expression.Alias); ok {
			e = a.Child
		}
		if gf, ok := e.(*expression.GetField); ok {
			found := -1
			for i, g := range q.GroupBy {
				if strings.EqualFold(g.Table, gf.Table()) && strings.EqualFold(g.Column, gf.Name()) {
					found = i
				}
			}
			if found < 0 {
				return Query{}, nil, refuse("column %s is selected but not grouped by", gf.Name())
			}
			outs = append(outs, Out{Group: found, Agg: -1})
			continue
		}
		a, err := aggOf(e)
		if err != nil {
			return Query{}, nil, err
		}
		for i := range bounds {
			if !bounds[i].matches(e, a) {
				continue
			}
			if (a.Bounds != nil || a.Auto) && (bounds[i].Auto != a.Auto || (a.Bounds != nil && *a.Bounds != bounds[i].Bounds)) {
				return Query{}, nil, refuse("%s is given two different contribution_bounds_per_group", e)
			}
			if bounds[i].Auto {
				a.Auto = true
			} else {
				b := bounds[i].Bounds
				a.Bounds = &b
			}
			bounds[i].used = true
		}
		outs = append(outs, Out{Group: -1, Agg: len(q.Aggs)})
		q.Aggs = append(q.Aggs, a)
	}
	for _, b := range bounds {
		if !b.used {
			return Query{}, nil, refuse("contribution_bounds_per_group of %s(%s) matches no aggregate of the query", b.Func, b.Arg)
		}
	}
	return q, outs, nil
}

// ArgBounds are contribution bounds written on the aggregate Func(Arg)
// (Func lower case; Arg a column, optionally qualified, without spaces).
type ArgBounds struct {
	Func, Arg string
	Bounds    [2]float64
	Auto      bool // contribution_bounds_per_group => auto (Bounds unused)
	used      bool
}

func (b *ArgBounds) matches(e sql.Expression, a Agg) bool {
	if a.Col == nil || !strings.EqualFold(b.Func, strings.ToLower(a.Kind.String())) {
		return false
	}
	tbl, name, qualified := strings.Cut(strings.Trim(b.Arg, "`"), ".")
	if !qualified {
		tbl, name = "", tbl
	}
	name = strings.Trim(name, "`")
	if !strings.EqualFold(name, a.Col.Column) {
		return false
	}
	return tbl == "" || strings.EqualFold(strings.Trim(tbl, "`"), a.Col.Table)
}

func colOf(gf *expression.GetField) Col { return Col{Table: gf.Table(), Column: gf.Name()} }

func aggOf(e sql.Expression) (Agg, error) {
	type windowed interface{ Window() *sql.WindowDefinition }
	if w, ok := e.(windowed); ok && w.Window() != nil {
		return Agg{}, refuse("window functions are not supported in DP queries")
	}
	var kind bound.Kind
	var child sql.Expression
	switch x := e.(type) {
	case *aggregation.Count:
		kind, child = bound.Count, x.Child
		if _, star := child.(*expression.Star); star {
			return Agg{Kind: kind}, nil
		}
		if _, lit := child.(*expression.Literal); lit {
			return Agg{Kind: kind}, nil
		}
	case *aggregation.Sum:
		kind, child = bound.Sum, x.Child
	case *aggregation.Avg:
		kind, child = bound.Avg, x.Child
	default:
		return Agg{}, refuse("%s is not supported: a DP query selects GROUP BY columns, COUNT(*), COUNT(col), SUM(col) and AVG(col)", e)
	}
	gf, ok := child.(*expression.GetField)
	if !ok {
		return Agg{}, refuse("%s: aggregate a plain column", e)
	}
	c := colOf(gf)
	return Agg{Kind: kind, Col: &c}, nil
}

// fromNode translates tables, aliases and inner equi-joins.
func fromNode(n sql.Node) (Node, error) {
	switch x := n.(type) {
	case *plan.TableAlias:
		rt, ok := x.Child.(*plan.ResolvedTable)
		if !ok {
			return nil, refuse("FROM: a DP query reads tables and joins of tables (no subquery or derived table)")
		}
		return Scan{DB: rt.SqlDatabase.Name(), Table: rt.Name(), Alias: x.Name()}, nil
	case *plan.ResolvedTable:
		return Scan{DB: x.SqlDatabase.Name(), Table: x.Name(), Alias: x.Name()}, nil
	case *plan.JoinNode:
		if x.Op != plan.JoinTypeInner {
			return nil, refuse("%s: only inner joins (JOIN … ON a = b) are supported", x.Op)
		}
		eq, ok := x.Filter.(*expression.Equals)
		if !ok {
			return nil, refuse("JOIN ON %s: join on one equality of two columns", x.Filter)
		}
		l, lok := eq.Left().(*expression.GetField)
		r, rok := eq.Right().(*expression.GetField)
		if !lok || !rok {
			return nil, refuse("JOIN ON %s: join on one equality of two columns", x.Filter)
		}
		left, err := fromNode(x.Left())
		if err != nil {
			return nil, err
		}
		right, err := fromNode(x.Right())
		if err != nil {
			return nil, err
		}
		return Join{Left: left, Right: right, LeftCol: colOf(l), RightCol: colOf(r)}, nil
	}
	return nil, refuse("FROM: %T is not supported in a DP query (tables and inner equi-joins only)", n)
}

// compileWhere compiles the WHERE with dpquery/eval over the columns it
// references (renumbered in order of first use).
func compileWhere(e sql.Expression) (Predicate, error) {
	var cols []Col
	var ecols []eval.Column
	index := map[string]int{}
	out, _, err := transform.Expr(e, func(x sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		gf, ok := x.(*expression.GetField)
		if !ok {
			return x, transform.SameTree, nil
		}
		k := strings.ToLower(gf.Table() + "." + gf.Name())
		i, seen := index[k]
		if !seen {
			i = len(cols)
			index[k] = i
			cols = append(cols, colOf(gf))
			ecols = append(ecols, eval.Column{Name: gf.Name(), Type: gf.Type()})
		}
		return gf.WithIndex(i), transform.NewTree, nil
	})
	if err != nil {
		return nil, fmt.Errorf("WHERE: %w", err)
	}
	p, err := eval.Compile(out, ecols)
	if err != nil {
		return nil, refuse("WHERE: %v", err)
	}
	return EvalPred{Cols: cols, P: p}, nil
}
