package dpquery

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/dpsql/dpsql/dpquery/rel"
	"github.com/dpsql/dpsql/explain"
	"github.com/dpsql/dpsql/mechanism/agg"
)

// The EXPLAIN of a row-level DP aggregate (docs/sql.md "EXPLAIN of a DP
// query"): the planned query in explain.Item rows, from the plan, the
// catalog, the accountant's read-only quote and the table's row count,
// which is public on a row-level table (neighbours replace one row) and
// enters the sums' noise scales only through the float-rounding slack.
// No row and no answer-cache entry is read.

var _ explain.Releaser = (*dpAggNode)(nil)

// ExplainRelease implements explain.Releaser.
func (n *dpAggNode) ExplainRelease(ctx *sql.Context) ([]explain.Item, error) {
	q, env := n.q, n.g.env
	if env == nil {
		return nil, fmt.Errorf("DP aggregates are not wired")
	}
	events := q.plan.Events()
	if q.sel != nil {
		events = q.sel.Events()
	}
	quote, err := env.QuoteRelease(ctx, q.key, dpAggregateFn, q.eps, q.delta, events)
	if err != nil {
		return nil, fmt.Errorf("EXPLAIN: the budget of %s: %w", q.key, err)
	}
	rows, err := env.Store.RowCount(q.db, q.table)
	if err != nil {
		return nil, fmt.Errorf("row count of %s: %w", q.key, err)
	}
	items := rel.ChargeItems(dpAggregateFn, q.key, "row-level grouped aggregate (mechanism/agg): exact counts and centred sums per group, Laplace noise per vector", q.eps, q.delta, quote, events)
	items = append(items,
		explain.Plain("unit", "row", q.key, "no privacy unit declared: neighbours replace one row of "+q.key+" (its row count is public)"),
		explain.Plain("table", q.table, q.key, "protected at row level"))
	if q.filter != nil {
		items = append(items, explain.Plain("where", q.filter.String(), "", "evaluated on every row by the total, constant-cost evaluator (dpquery/eval); a row it rejects is in no group"))
	}
	items = append(items,
		explain.Plain("contribution", "max_groups_contributed", "1", "a row is in one group"),
		explain.Plain("contribution", "max_rows_contributed_per_group", "1", "a row counts once"))
	var keys []string
	for _, k := range q.keys {
		keys = append(keys, k.name)
	}
	switch {
	case len(keys) == 0:
		items = append(items, explain.Plain("groups", "", "one group", "no GROUP BY: one row"))
	case q.sel == nil:
		items = append(items, explain.Plain("groups", strings.Join(keys, ", "), fmt.Sprintf("declared domain: %d group(s)", q.groups),
			"one row per group of the public domain (the cross product of the declared domains), empty groups included"))
	default:
		it := explain.Plain("groups", strings.Join(keys, ", "), "private partition selection",
			fmt.Sprintf("only groups present in the data are candidates; a group is shown iff its noisy COUNT(*) exceeds τ = %.6g (the count column's noise)", q.sel.Threshold()))
		it.Mechanism, it.Epsilon, it.Delta = "Laplace thresholding", q.plan.EpsCount, q.delta
		it.NoiseScale, it.Sensitivity, it.Bounds = q.plan.CountScale(), agg.CountSensitivity, fmt.Sprintf("τ = %.6g", q.sel.Threshold())
		items = append(items, it)
	}
	names, order := q.names, q.order
	if len(names) != len(q.outs) {
		names, order = nil, nil
		for c := range q.outs {
			names, order = append(names, q.out[c].Name), append(order, c)
		}
	}
	for _, c := range order {
		o, name := q.outs[c], names[c]
		mk := func(value string, eps, scale, sens float64, bounds, detail string) explain.Item {
			it := explain.Plain("column", name, value, detail)
			it.Mechanism, it.Epsilon, it.Delta = "Laplace", eps, 0
			it.NoiseScale, it.Sensitivity, it.Bounds = scale, sens, bounds
			return it
		}
		switch o.kind {
		case outKey:
			items = append(items, explain.Plain("column", name, "GROUP BY "+q.keys[o.idx].name, "group key: a public label, no noise"))
		case outCount:
			items = append(items, mk("COUNT(*)", q.plan.EpsCount, q.plan.CountScale(), agg.CountSensitivity, "",
				"noisy count per group, rounded and clamped at 0; ℓ₁ sensitivity 2 (a replaced row leaves one group and joins another)"))
		case outSum, outAvg:
			fn := "SUM"
			if o.kind == outAvg {
				fn = "AVG"
			}
			col := q.sumNames[o.idx]
			if tf := q.sumReads[o.idx].Transform; tf != "" {
				col = tf + "(" + col + ")"
			}
			b := q.plan.Sums[o.idx]
			items = append(items, mk(fmt.Sprintf("%s(%s)", fn, col), q.plan.EpsSum[o.idx], q.plan.SumScale(o.idx, rows), q.plan.SumSensitivity(o.idx, rows),
				fmt.Sprintf("[%v, %v] per row (declared)", b.Lo, b.Hi),
				fmt.Sprintf("values clipped to the declared bounds; a noisy centred sum per group (ℓ₁ sensitivity 2h·slack, h the half-width), combined with the noisy count of the COUNT vector (ε = %.6g, scale %.6g)", q.plan.EpsCount, q.plan.CountScale())))
		}
	}
	return items, nil
}

// dpAggregateFn is the ledger function of a row-level DP aggregate.
const dpAggregateFn = "DP_AGGREGATE"

// outputNames maps the GroupBy's output columns to the statement's: the
// name each has in the result (its alias) and its position there, −1 when
// the statement does not select it (used by HAVING or ORDER BY only), read
// through the post-processing wrappers (outermost first, as plan collects
// them). The EXPLAIN names the columns as the analyst sees them.
func outputNames(wrappers []sql.Node, gb *plan.GroupBy) (names []string, pos []int) {
	n := len(gb.Schema())
	// of[j] is the GroupBy column behind column j of the current level.
	of := make([]int, n)
	for j := range of {
		of[j] = j
	}
	cur := gb.Schema()
	for w := len(wrappers) - 1; w >= 0; w-- {
		p, ok := wrappers[w].(*plan.Project)
		if !ok {
			// Same columns, same order (a SubqueryAlias renames their table).
			if sch := wrappers[w].Schema(); len(sch) == len(cur) {
				cur = sch
			}
			continue
		}
		// A projection refers to its child's column by name (the analyser's
		// GetField indexes are column ids at this point).
		next := make([]int, len(p.Projections))
		for j, e := range p.Projections {
			next[j] = -1
			if a, ok := e.(*expression.Alias); ok {
				e = a.Child
			}
			gf, ok := e.(*expression.GetField)
			if !ok {
				continue
			}
			for k, c := range cur {
				if k < len(of) && strings.EqualFold(c.Name, gf.Name()) && (c.Source == "" || gf.Table() == "" || strings.EqualFold(c.Source, gf.Table())) {
					next[j] = of[k]
					break
				}
			}
		}
		of, cur = next, p.Schema()
	}
	names, pos = make([]string, n), make([]int, n)
	for i := range pos {
		pos[i] = -1
	}
	sch := gb.Schema()
	if len(wrappers) > 0 {
		sch = wrappers[0].Schema()
	}
	for j, i := range of {
		if i >= 0 && pos[i] < 0 && j < len(sch) {
			names[i], pos[i] = sch[j].Name, j
		}
	}
	for i, c := range gb.Schema() {
		if pos[i] < 0 {
			names[i] = c.Name + " (not selected)"
		}
	}
	return names, pos
}

// columnOrder lists the GroupBy's output columns in the statement's order,
// the unselected ones last.
func columnOrder(pos []int) []int {
	var sel, rest []int
	for i, p := range pos {
		if p >= 0 {
			sel = append(sel, i)
		} else {
			rest = append(rest, i)
		}
	}
	sort.SliceStable(sel, func(a, b int) bool { return pos[sel[a]] < pos[sel[b]] })
	return append(sel, rest...)
}
