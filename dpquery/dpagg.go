package dpquery

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/dpquery/eval"
	"github.com/dpsql/dpsql/dpquery/rel"
	"github.com/dpsql/dpsql/dpquery/syntax"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/agg"
)

// DP aggregate SQL (issue 12, docs/sql.md "DP aggregate queries"). An
// analyst's ordinary aggregate query over one protected table,
//
//	SELECT k1, …, COUNT(*), SUM(x), AVG(x) FROM t [WHERE p] [GROUP BY k1, …]
//	  [HAVING …] [ORDER BY …] [LIMIT …]
//
// is answered with DP when the session has dp_epsilon > 0 (or the account a
// default, CALL dp_defaults). The GroupBy subtree (GroupBy, Filter, table) is
// replaced by a dpAggNode that reserves the budget, scans the table once and
// emits one noisy row per group of the public domain (the cross product of
// the keys' declared domains); the nodes above it (projection, HAVING,
// ORDER BY, LIMIT, a wrapping SELECT * FROM (…) AS x) only post-process those
// rows. Every check is on the plan, the catalog and the session, before any
// charge.

// Session variables: the ε (and δ) of one DP aggregate query.
const (
	varEpsilon = "dp_epsilon"
	varDelta   = "dp_delta"
	// varBounds = 'auto' is the session path's max_rows_contributed_per_group
	// = auto (docs/privacy/units.md §3a): C and the clamps of SUMs are chosen
	// privately on a unit's tables; 'default' keeps the defaults of §5.
	varBounds = "dp_contribution_bounds"
)

func init() {
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{
		&sql.MysqlSystemVariable{Name: varEpsilon, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Session), Dynamic: true,
			Type: types.NewSystemDoubleType(varEpsilon, 0, 1e6), Default: float64(0)},
		&sql.MysqlSystemVariable{Name: varDelta, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Session), Dynamic: true,
			Type: types.NewSystemDoubleType(varDelta, 0, 1), Default: float64(0)},
		&sql.MysqlSystemVariable{Name: varBounds, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Session), Dynamic: true,
			Type: types.NewSystemEnumType(varBounds, "default", "auto"), Default: "default"},
	})
}

type outKind int

const (
	outKey outKind = iota
	outCount
	outSum
	outAvg
)

type outCol struct {
	kind outKind
	idx  int // key index or sum index
}

type keyCol struct {
	pos    int // position in the table schema
	name   string
	domain []string // nil: undeclared (partition selection)
}

// dpAggQuery is a planned DP aggregate query (all public).
type dpAggQuery struct {
	db, table, key string
	tschema        sql.Schema
	scanCols       []string       // the columns the scan decodes; positions below index into them
	filter         sql.Expression // over table positions; nil if none
	pred           *eval.Pred     // filter compiled to a total, fixed-cost program (issue 25)
	keys           []keyCol
	sumCols        []int // table positions of summed columns
	sumNames       []string
	sumReads       []catalog.Read // public transform and clip of each summed column
	outs           []outCol
	out            sql.Schema
	plan           *agg.Plan
	sel            *agg.SelectPlan // partition selection (undeclared keys), else nil
	eps, delta     float64
	groups         int // public domain size; 0 with partition selection
	// The output columns' names in the statement and their order (EXPLAIN).
	names []string
	order []int
}

// errDPAgg wraps every refusal of the DP aggregate planner.
var errDPAgg = errors.New("DP aggregate query refused")

func aggErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errDPAgg}, a...)...)
}

// Plan recognises a DP aggregate query. It returns (nil, nil) when the
// plan is not an aggregate over a protected table (the guard then refuses
// it as usual), and an error naming what to change when it is one that
// cannot be answered.
func (g *Planner) Plan(ctx *sql.Context, root sql.Node) (sql.Node, error) {
	return g.plan(ctx, root)
}

// clauseOf is the statement's SELECT WITH DIFFERENTIAL_PRIVACY clause, if
// it has one (stashed by the wire handler, dpquery/syntax).
func clauseOf(ctx *sql.Context) (*syntax.Rewritten, bool) {
	if ctx == nil || ctx.Session == nil {
		return nil, false
	}
	return syntax.Stashed(ctx.Session.ID())
}

func (g *Planner) plan(ctx *sql.Context, root sql.Node) (sql.Node, error) {
	// Walk down the post-processing wrappers to the GroupBy.
	var gb *plan.GroupBy
	var wrappers []sql.Node
	for cur := root; gb == nil; {
		switch x := cur.(type) {
		case *plan.GroupBy:
			gb = x
			continue
		case *plan.Project, *plan.Having, *plan.Sort, *plan.Limit, *plan.Distinct, *plan.TopN, *plan.SubqueryAlias, *plan.Offset:
			wrappers = append(wrappers, cur)
			if len(cur.Children()) != 1 {
				return nil, nil
			}
			cur = cur.Children()[0]
		default:
			return nil, nil
		}
	}
	// Tables of a privacy unit (issue 27): the person-level compiler
	// (dpquery/rel) plans the whole GroupBy, joins included.
	if rel.Touches(gb, g.cat) {
		return g.planUnit(ctx, root, gb, wrappers)
	}
	// The table under the GroupBy.
	child := gb.Child
	var filter sql.Expression
	if f, ok := child.(*plan.Filter); ok {
		filter, child = f.Expression, f.Child
	}
	if ta, ok := child.(*plan.TableAlias); ok {
		child = ta.Child
	}
	rt, ok := child.(*plan.ResolvedTable)
	if !ok {
		if hasProtected(gb, g.cat) {
			return nil, aggErr("a DP aggregate reads one protected table directly (no join, subquery or derived table in FROM)")
		}
		return nil, nil
	}
	key, ok := functions.TableKey(rt)
	if !ok || !g.cat.IsProtected(key) {
		return nil, nil
	}
	// From here on the query is a DP aggregate over a protected table: any
	// problem is reported with what to change.
	for _, w := range wrappers {
		if err := checkPostExprs(w); err != nil {
			return nil, err
		}
	}
	t, _ := g.cat.Table(key)
	q := &dpAggQuery{db: rt.SqlDatabase.Name(), table: rt.Table.Name(), key: key, tschema: rt.Schema(), out: gb.Schema()}
	pos := func(e sql.Expression) (int, bool) {
		gf, ok := e.(*expression.GetField)
		if !ok {
			return 0, false
		}
		for i, c := range q.tschema {
			if strings.EqualFold(c.Name, gf.Name()) {
				return i, true
			}
		}
		return 0, false
	}
	if filter != nil {
		f, err := boundPredicate(filter, pos, key)
		if err != nil {
			return nil, err
		}
		q.filter = f
	}
	q.groups = 1
	var undeclared []string
	for _, ge := range gb.GroupByExprs {
		p, ok := pos(ge)
		if !ok {
			return nil, aggErr("GROUP BY %s: group by plain columns of %s only", ge, key)
		}
		name := q.tschema[p].Name
		dom, ok := t.Labels[strings.ToLower(name)]
		if !ok || len(dom) == 0 {
			undeclared = append(undeclared, name)
			dom = nil
		}
		q.keys = append(q.keys, keyCol{pos: p, name: name, domain: dom})
		if dom != nil && q.groups <= agg.MaxGroups {
			q.groups *= len(dom)
		}
	}
	if len(undeclared) > 0 {
		q.groups = 0
	} else if q.groups > agg.MaxGroups {
		return nil, aggErr("the GROUP BY domain has more than %d groups", agg.MaxGroups)
	}
	sumIdx := map[int]int{}
	sumOf := func(e sql.Expression, fn string) (int, error) {
		p, ok := pos(e)
		if !ok {
			return 0, aggErr("%s(%s): aggregate a plain column of %s", fn, e, key)
		}
		name := q.tschema[p].Name
		if _, ok := t.Bounds[strings.ToLower(name)]; !ok {
			return 0, aggErr("%s(%s) needs public bounds: the owner declares them with CALL dp_bounds('%s', '%s', lo, hi)", fn, name, q.table, name)
		}
		if j, ok := sumIdx[p]; ok {
			return j, nil
		}
		sumIdx[p] = len(q.sumCols)
		q.sumCols = append(q.sumCols, p)
		q.sumNames = append(q.sumNames, name)
		q.sumReads = append(q.sumReads, t.ReadOf(name))
		return len(q.sumCols) - 1, nil
	}
	for _, se := range gb.SelectedExprs {
		e := se
		if a, ok := e.(*expression.Alias); ok {
			e = a.Child
		}
		switch x := e.(type) {
		case *expression.GetField:
			found := false
			for i, k := range q.keys {
				if p, _ := pos(x); p == k.pos && strings.EqualFold(x.Name(), k.name) {
					q.outs = append(q.outs, outCol{kind: outKey, idx: i})
					found = true
					break
				}
			}
			if !found {
				return nil, aggErr("column %s is selected but not grouped by: select GROUP BY columns and aggregates only", x.Name())
			}
		case *aggregation.Count:
			if x.Window() != nil {
				return nil, aggErr("window functions are not supported in DP aggregate queries")
			}
			if _, ok := x.Child.(*expression.Literal); !ok {
				return nil, aggErr("COUNT(%s): only COUNT(*) is supported (COUNT of a column would count its non-NULL values)", x.Child)
			}
			q.outs = append(q.outs, outCol{kind: outCount})
		case *aggregation.Sum:
			if x.Window() != nil {
				return nil, aggErr("window functions are not supported in DP aggregate queries")
			}
			j, err := sumOf(x.Child, "SUM")
			if err != nil {
				return nil, err
			}
			q.outs = append(q.outs, outCol{kind: outSum, idx: j})
		case *aggregation.Avg:
			if x.Window() != nil {
				return nil, aggErr("window functions are not supported in DP aggregate queries")
			}
			j, err := sumOf(x.Child, "AVG")
			if err != nil {
				return nil, err
			}
			q.outs = append(q.outs, outCol{kind: outAvg, idx: j})
		case *aggregation.Min, *aggregation.Max:
			// One row sets the extreme (replace it by lo or hi): the
			// sensitivity is the whole range, the answer pure noise. A
			// private quantile near 0 or 1 is the sound substitute.
			return nil, aggErr("%s is not supported: one row can move a minimum or maximum across the whole declared range, so any DP answer would be noise. Use a private quantile instead, e.g. SELECT DP_QUANTILE('%s', '<column>', 0.01, <ε>) (or 0.99), or DP_HISTOGRAM over public bins", e, q.table)
		case *aggregation.CountDistinct:
			// Its sensitivity is bounded (±1 in each of at most two
			// groups), but an exact count needs memory that grows with the
			// number of distinct values in the rows: a data-dependent
			// resource use (and failure path) that no public estimate bounds.
			return nil, aggErr("%s is not supported yet in DP aggregate queries: counting distinct values exactly needs memory that grows with the rows' distinct values, which dpsql does not allow a release to depend on. Use GROUP BY <column> with a declared domain (COUNT(*) per value) or DP_HISTOGRAM", e)
		default:
			return nil, aggErr("%s is not supported: a DP aggregate query selects GROUP BY columns, COUNT(*), SUM(col) and AVG(col) of bounded columns (MIN, MAX and quantiles of one row are not bounded; use DP_HISTOGRAM)", e)
		}
	}
	if c, ok := clauseOf(ctx); ok {
		// The table's unit is one row: each row is in one group once, so
		// max_groups_contributed and max_rows_contributed_per_group hold for
		// any value ≥ 1; the person-level options do not apply.
		if c.Options.PrivacyUnitColumn != "" {
			return nil, aggErr("privacy_unit_column = %s: %s has no declared privacy unit (its unit is one row); the owner declares one with CALL dp_privacy_unit('%s', '<column>', '<unit>'), or leave the option out", c.Options.PrivacyUnitColumn, key, q.table)
		}
		if len(c.Bounds) > 0 {
			return nil, aggErr("contribution_bounds_per_group applies to tables with a privacy unit; %s's unit is one row, and SUM/AVG use the columns' declared bounds (CALL dp_bounds)", key)
		}
	}
	eps, err := sessionEpsilon(ctx, g.cat)
	if err != nil {
		return nil, err
	}
	q.eps = eps
	spec := agg.Spec{Groups: q.groups, Count: true, Epsilon: eps}
	for _, p := range q.sumCols {
		b := t.Bounds[strings.ToLower(q.tschema[p].Name)]
		spec.Sums = append(spec.Sums, agg.Bound{Lo: b.Lo, Hi: b.Hi})
	}
	if len(undeclared) > 0 {
		// Private partition selection over the keys found in the data.
		delta := sessionDelta(ctx, g.cat)
		if delta <= 0 {
			return nil, aggErr("GROUP BY %s: the column has no public domain. Either the owner declares it (CALL dp_domain('%s', '%s', 'v1,v2,…')), or the groups are selected privately, which needs a δ: SET SESSION dp_delta = <δ> (e.g. 1e-6)", strings.Join(undeclared, ", "), q.table, undeclared[0])
		}
		q.delta = delta
		if q.sel, err = agg.NewSelect(spec.Sums, eps, delta); err != nil {
			return nil, aggErr("%v", err)
		}
		q.plan = q.sel.Plan
	} else if q.plan, err = agg.New(spec); err != nil {
		return nil, aggErr("%v", err)
	}
	if err := q.compact(); err != nil {
		return nil, err
	}
	var at []int
	q.names, at = outputNames(wrappers, gb)
	q.order = columnOrder(at)
	node := &dpAggNode{q: q, g: g}
	// Put the DP node where the GroupBy was; the wrappers stay.
	out, _, err := transform.Node(root, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if n == sql.Node(gb) {
			return node, transform.NewTree, nil
		}
		return n, transform.SameTree, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// planUnit replaces a GroupBy over tables of a privacy unit by the leaf of
// the person-level compiler, with the session's ε and δ and the defaults of
// docs/privacy/units.md §5. Every check runs here, before any charge.
func (g *Planner) planUnit(ctx *sql.Context, root sql.Node, gb *plan.GroupBy, wrappers []sql.Node) (sql.Node, error) {
	for _, w := range wrappers {
		if err := checkPostExprs(w); err != nil {
			return nil, err
		}
	}
	eps, err := sessionEpsilon(ctx, g.cat)
	if err != nil {
		return nil, err
	}
	opt := rel.Options{Epsilon: eps, Delta: sessionDelta(ctx, g.cat)}
	var bounds []rel.ArgBounds
	if c, ok := clauseOf(ctx); ok {
		opt.MaxGroups, opt.MaxRows, opt.AutoRows = c.Options.MaxGroups, c.Options.MaxRows, c.Options.AutoRows
		if col := c.Options.PrivacyUnitColumn; col != "" {
			tbl, name, dotted := strings.Cut(col, ".")
			if !dotted {
				tbl, name = "", col
			}
			opt.PrivacyUnitColumn = &rel.Col{Table: tbl, Column: name}
		}
		for _, b := range c.Bounds {
			bounds = append(bounds, rel.ArgBounds{Func: b.Func, Arg: b.Arg, Bounds: [2]float64{b.Lo, b.Hi}, Auto: b.Auto})
		}
	} else if v, err := ctx.GetSessionVariable(ctx, varBounds); err == nil {
		if sv, ok := v.(string); ok && strings.EqualFold(sv, "auto") {
			opt.AutoRows = true
		}
	}
	leaf, err := rel.PlanGroupBy(gb, opt, bounds, rel.CatalogMeta{Cat: g.cat, Schemas: g.env.Store},
		rel.Deps{Env: g.env, Src: g.env.Store, Cat: g.cat, Fresh: sessionFresh(ctx), Account: functions.UserOf(ctx)})
	if err != nil {
		return nil, err
	}
	names, pos := outputNames(wrappers, gb)
	leaf.SetColumns(names, columnOrder(pos))
	out, _, err := transform.Node(root, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if n == sql.Node(gb) {
			return leaf, transform.NewTree, nil
		}
		return n, transform.SameTree, nil
	})
	return out, err
}

func hasProtected(n sql.Node, cat *catalog.Catalog) bool {
	found := false
	transform.Inspect(n, func(c sql.Node) bool {
		if key, ok := functions.TableKey(c); ok && cat.IsProtected(key) {
			found = true
		}
		return !found
	})
	return found
}

// sessionEpsilon is the query's ε: the session's dp_epsilon, else the
// account's default (CALL dp_defaults).
func sessionEpsilon(ctx *sql.Context, cat *catalog.Catalog) (float64, error) {
	if c, ok := clauseOf(ctx); ok {
		if !(c.Options.Epsilon > 0) {
			return 0, aggErr("SELECT WITH DIFFERENTIAL_PRIVACY needs OPTIONS(epsilon = <ε>)")
		}
		return c.Options.Epsilon, nil
	}
	v, err := ctx.GetSessionVariable(ctx, varEpsilon)
	if err == nil {
		if f, ok := v.(float64); ok && f > 0 {
			return f, nil
		}
	}
	if eps, _, ok := cat.DPDefaults(functions.UserOf(ctx)); ok && eps > 0 {
		return eps, nil
	}
	return 0, aggErr("aggregates over a protected table are answered with differential privacy when the query has a budget: SET SESSION dp_epsilon = <ε> (e.g. 0.5), then run the query again")
}

// sessionDelta is the session's dp_delta, else the account's default δ.
func sessionDelta(ctx *sql.Context, cat *catalog.Catalog) float64 {
	if c, ok := clauseOf(ctx); ok {
		return c.Options.Delta // OPTIONS(delta = …), else 0: no private group selection
	}
	if v, err := ctx.GetSessionVariable(ctx, varDelta); err == nil {
		if f, ok := v.(float64); ok && f > 0 {
			return f
		}
	}
	if _, d, ok := cat.DPDefaults(functions.UserOf(ctx)); ok {
		return d
	}
	return 0
}

// checkPostExprs: the nodes above the aggregate only post-process its rows;
// subqueries (which could read other tables) and DP releases are refused.
func checkPostExprs(n sql.Node) error {
	ne, ok := n.(sql.Expressioner)
	if !ok {
		return nil
	}
	var err error
	for _, e := range ne.Expressions() {
		transform.InspectExpr(e, func(x sql.Expression) bool {
			if _, ok := x.(sql.ExpressionWithNodes); ok {
				err = aggErr("subqueries are not supported in DP aggregate queries")
			}
			if _, ok := x.(functions.Releaser); ok {
				err = aggErr("%s cannot be combined with a DP aggregate query", x)
			}
			return err != nil
		})
	}
	return err
}

// boundPredicate checks that a WHERE predicate uses only this table's
// columns and rewrites its column references to table positions. Which
// operators may run on the rows is eval.Compile's decision (compact).
func boundPredicate(e sql.Expression, pos func(sql.Expression) (int, bool), key string) (sql.Expression, error) {
	var bad sql.Expression
	transform.InspectExpr(e, func(x sql.Expression) bool {
		switch x.(type) {
		case *expression.GetField:
			if _, ok := pos(x); !ok {
				bad = x
			}
		case sql.ExpressionWithNodes:
			bad = x
		}
		return bad != nil
	})
	if bad != nil {
		what := bad.String()
		if _, ok := bad.(sql.ExpressionWithNodes); ok {
			what = "with a subquery"
		}
		return nil, aggErr("WHERE %s cannot be bounded: use columns of %s, constants, comparisons, AND/OR/NOT, IN, BETWEEN, LIKE, IS NULL and + - * / only", what, key)
	}
	out, _, err := transform.Expr(e, func(x sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if gf, ok := x.(*expression.GetField); ok {
			p, _ := pos(gf)
			return gf.WithIndex(p), transform.NewTree, nil
		}
		return x, transform.SameTree, nil
	})
	return out, err
}

// compilePredicate compiles the WHERE (over scanned-row positions) with the
// total evaluator, before any charge; a refusal names the operator.
func (q *dpAggQuery) compilePredicate(types []sql.Type) error {
	if q.filter == nil || legacyDPFilter.Load() {
		return nil // legacy: the test-only must-fail variant runs GMS's evaluator
	}
	cols := make([]eval.Column, len(q.scanCols))
	for i, name := range q.scanCols {
		cols[i] = eval.Column{Name: name, Type: types[i]}
	}
	p, err := eval.Compile(q.filter, cols)
	if err != nil {
		return aggErr("WHERE %v cannot be bounded: %v", shortText(q.filter.String()), err)
	}
	q.pred = p
	return nil
}

func shortText(s string) string {
	if len(s) > 80 {
		return s[:60] + "…"
	}
	return s
}

// dpAggNode is the leaf that replaces the GroupBy.
type dpAggNode struct {
	q *dpAggQuery
	g *Planner
}

var _ sql.ExecSourceRel = (*dpAggNode)(nil)

func (n *dpAggNode) Resolved() bool       { return true }
func (n *dpAggNode) IsReadOnly() bool     { return true }
func (n *dpAggNode) Schema() sql.Schema   { return n.q.out }
func (n *dpAggNode) Children() []sql.Node { return nil }
func (n *dpAggNode) String() string {
	return fmt.Sprintf("DPAggregate(%s, ε=%v, %d groups)", n.q.key, n.q.eps, n.q.groups)
}
func (n *dpAggNode) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

// RowIter reserves the budget (durably, before any row is read), scans the
// table once and returns one noisy row per group of the public domain.
func (n *dpAggNode) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	q := n.q
	env := n.g.env
	if env == nil {
		return nil, errors.New("DP aggregates are not wired")
	}
	// The cache key uses public values only: the account, the write epoch
	// and n.
	rows, err := env.Store.RowCount(q.db, q.table)
	if err != nil {
		return nil, fmt.Errorf("row count of %s: %w", q.key, err)
	}
	id := q.cacheID(functions.UserOf(ctx), n.g.cat.WriteEpoch(q.key), rows)
	if !sessionFresh(ctx) {
		if r, ok := n.cached(id); ok {
			ctx.Warn(1105, "dp: answer from the answer cache (same query on the same snapshot of %s): no charge; SET SESSION dp_fresh = 1 for a new release", q.key)
			q.warn(ctx, r, true)
			return sql.RowsToRowIter(q.rows(ctx, r)...), nil
		}
	}
	events := q.plan.Events()
	if q.sel != nil {
		events = q.sel.Events()
	}
	res, err := env.ReleaseTable(ctx, q.db, q.table, dpAggregateFn, q.eps, q.delta, events, func() (any, error) {
		return q.compute(ctx, env)
	})
	if err != nil {
		return nil, err
	}
	r := res.(*agg.Result)
	n.store(id, r)
	q.warn(ctx, r, false)
	return sql.RowsToRowIter(q.rows(ctx, r)...), nil
}

// compute is the one pass over the rows.
func (q *dpAggQuery) compute(ctx *sql.Context, env *functions.Env) (*agg.Result, error) {
	index := make([]map[string]int, len(q.keys))
	for i, k := range q.keys {
		index[i] = make(map[string]int, len(k.domain))
		for j, v := range k.domain {
			index[i][v] = j
		}
	}
	cols := q.scanCols
	if q.sel != nil {
		return q.computeSelect(env, cols)
	}
	acc := q.plan.Accumulator()
	vals := make([]float64, len(q.sumCols))
	match := q.matcher()
	if _, err := env.Store.ScanValues(q.db, q.table, cols, func(row []any) error {
		g := -1
		err := rowSafe(func() {
			// Every part runs on every row: the key lookup, the whole
			// predicate and the summed values (issue 25).
			// g is set last, so a row whose evaluation panics stays out.
			in := match(row)
			gg := q.groupOf(row, index)
			q.readSums(row, vals)
			if in {
				g = gg
			}
		})
		acc.Row(g, vals)
		return err
	}); err != nil {
		return nil, fmt.Errorf("scan %s: %w", q.key, err)
	}
	return acc.Release()
}

// groupOf returns the group index of a row (mixed radix over the keys'
// domains), or −1 for a NULL or undeclared key. Every key is looked up on
// every row.
func (q *dpAggQuery) groupOf(row []any, index []map[string]int) int {
	g, in := 0, true
	for i, k := range q.keys {
		v := row[k.pos]
		j, ok := index[i][functions.LabelString(v)]
		in = in && ok && v != nil
		g = g*len(k.domain) + j
	}
	if !in {
		return -1
	}
	return g
}

// readSums reads the summed columns of a row through their declared
// transform and clip (a non-number reads as NaN, which the clip maps to the
// midpoint).
func (q *dpAggQuery) readSums(row []any, vals []float64) {
	for i, p := range q.sumCols {
		f, ok := functions.ToFloat(row[p])
		if !ok {
			f = math.NaN()
		}
		vals[i] = functions.ReadValue(q.sumReads[i], f)
	}
}

// matcher returns the row filter: the compiled predicate, or TRUE without
// a WHERE. The legacy variant (tests only) is go-mysql-server's evaluator
// with its short-circuits, errors and panics: the must-fail case of the
// audits in dpagg_sound_test.go.
func (q *dpAggQuery) matcher() func(row []any) bool {
	switch {
	case q.pred != nil:
		return q.pred.Match
	case q.filter != nil && legacyDPFilter.Load():
		f, ctx := q.filter, sql.NewEmptyContext()
		return func(row []any) bool {
			v, err := f.Eval(ctx, sql.Row(row))
			if err != nil {
				panic(err) // as before issue 25: an error fails the release
			}
			return v != nil && sql.IsTrue(v)
		}
	}
	return func([]any) bool { return true }
}

// legacyDPFilter switches the DP scan back to go-mysql-server's evaluator
// (tests only: the audits' must-fail variant).
var legacyDPFilter atomic.Bool

// rowSafe runs one row's evaluation; a panic (a bug: the evaluator is
// total) leaves the row out instead of ending the release, so a value can
// never turn into an error after the charge. The legacy variant returns the
// panic as an error that ends the release, as the code before issue 25 did.
func rowSafe(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil && legacyDPFilter.Load() {
			err = fmt.Errorf("legacy evaluator: %v", p)
		}
	}()
	f()
	return nil
}

// rows renders the released result in the GroupBy's output schema.
func (q *dpAggQuery) rows(ctx *sql.Context, r *agg.Result) []sql.Row {
	if q.sel != nil {
		return q.selectRows(ctx, r)
	}
	out := make([]sql.Row, 0, q.groups)
	digits := make([]int, len(q.keys))
	for g := 0; g < q.groups; g++ {
		rem := g
		for i := len(q.keys) - 1; i >= 0; i-- {
			digits[i] = rem % len(q.keys[i].domain)
			rem /= len(q.keys[i].domain)
		}
		out = append(out, q.outRow(ctx, r, g, func(i int) any { return q.keys[i].domain[digits[i]] }))
	}
	return out
}

// warn tells the noise scale of every measurement (SHOW WARNINGS).
func (q *dpAggQuery) warn(ctx *sql.Context, r *agg.Result, cached bool) {
	charged := "charged"
	if cached {
		charged = "this answer was charged when first released:"
	}
	if q.sel != nil {
		ctx.Warn(1105, "dp: %s %s ε = %v, δ = %v; groups selected privately: COUNT(*) has Laplace noise of scale %.6g (ε = %.6g) and a group is shown only if its noisy count exceeds %.6g", q.key, charged, q.eps, q.delta, r.CountScale, q.plan.EpsCount, r.Threshold)
	} else {
		ctx.Warn(1105, "dp: %s %s ε = %v for %d group(s); COUNT(*) has Laplace noise of scale %.6g (ε = %.6g)", q.key, charged, q.eps, q.groups, r.CountScale, q.plan.EpsCount)
	}
	for i, name := range q.sumNames {
		if tf := q.sumReads[i].Transform; tf != "" {
			name = tf + "(" + name + ")"
		}
		ctx.Warn(1105, "dp: SUM/AVG(%s) use a centred sum with Laplace noise of scale %.6g (ε = %.6g, bounds [%v, %v]) and the noisy count", name, r.SumScale[i], q.plan.EpsSum[i], q.plan.Sums[i].Lo, q.plan.Sums[i].Hi)
	}
}

// computeSelect is the pass of partition selection: the group key is the
// tuple of the key columns' label strings; NULL keys are in no group.
func (q *dpAggQuery) computeSelect(env *functions.Env, cols []string) (*agg.Result, error) {
	acc := q.sel.Accumulator()
	vals := make([]float64, len(q.sumCols))
	labels := make([]string, len(q.keys))
	match := q.matcher()
	if _, err := env.Store.ScanValues(q.db, q.table, cols, func(row []any) error {
		ok, key := false, ""
		err := rowSafe(func() {
			in := match(row)
			notNull := true
			for i, k := range q.keys {
				notNull = notNull && row[k.pos] != nil
				labels[i] = functions.LabelString(row[k.pos])
			}
			q.readSums(row, vals)
			if in && notNull {
				buf, _ := json.Marshal(labels)
				key, ok = string(buf), true
			}
		})
		acc.Row(key, ok, vals)
		return err
	}); err != nil {
		return nil, fmt.Errorf("scan %s: %w", q.key, err)
	}
	return acc.Release()
}

// selectRows renders the privately selected groups.
func (q *dpAggQuery) selectRows(ctx *sql.Context, r *agg.Result) []sql.Row {
	out := make([]sql.Row, 0, len(r.Keys))
	for g, k := range r.Keys {
		var labels []string
		if err := json.Unmarshal([]byte(k), &labels); err != nil || len(labels) != len(q.keys) {
			continue
		}
		out = append(out, q.outRow(ctx, r, g, func(i int) any { return labels[i] }))
	}
	return out
}

// outRow is group g's result row: key i's value from key, the noisy
// measurements from r, each converted to its output column's type.
func (q *dpAggQuery) outRow(ctx *sql.Context, r *agg.Result, g int, key func(i int) any) sql.Row {
	row := make(sql.Row, len(q.outs))
	for c, o := range q.outs {
		var v any
		switch o.kind {
		case outKey:
			v = key(o.idx)
		case outCount:
			v = int64(r.Count[g])
		case outSum:
			v = r.Sum[o.idx][g]
		case outAvg:
			v = r.Avg[o.idx][g]
		}
		if cv, _, err := q.out[c].Type.Convert(ctx, v); err == nil {
			v = cv
		}
		row[c] = v
	}
	return row
}

// compact restricts the scan to the referenced columns (keys, summed
// columns, WHERE) and renumbers every position to index the scanned row.
func (q *dpAggQuery) compact() error {
	used := map[int]bool{}
	for _, k := range q.keys {
		used[k.pos] = true
	}
	for _, p := range q.sumCols {
		used[p] = true
	}
	if q.filter != nil {
		transform.InspectExpr(q.filter, func(x sql.Expression) bool {
			if gf, ok := x.(*expression.GetField); ok {
				used[gf.Index()] = true
			}
			return false
		})
	}
	if len(used) == 0 {
		used[0] = true // COUNT(*) alone: decode one column to count rows
	}
	newPos := map[int]int{}
	var scanTypes []sql.Type
	for p := range q.tschema {
		if used[p] {
			newPos[p] = len(q.scanCols)
			q.scanCols = append(q.scanCols, q.tschema[p].Name)
			scanTypes = append(scanTypes, q.tschema[p].Type)
		}
	}
	for i := range q.keys {
		q.keys[i].pos = newPos[q.keys[i].pos]
	}
	for i := range q.sumCols {
		q.sumCols[i] = newPos[q.sumCols[i]]
	}
	if q.filter != nil {
		f, _, err := transform.Expr(q.filter, func(x sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			if gf, ok := x.(*expression.GetField); ok {
				return gf.WithIndex(newPos[gf.Index()]), transform.NewTree, nil
			}
			return x, transform.SameTree, nil
		})
		if err != nil {
			return err
		}
		q.filter = f
	}
	return q.compilePredicate(scanTypes)
}
