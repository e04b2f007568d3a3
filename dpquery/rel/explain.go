package rel

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/explain"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// The EXPLAIN of a unit query (docs/sql.md "EXPLAIN of a DP query"): the
// compiled plan in explain.Item rows. Everything comes from the plan (the
// query, the options, the public catalog) and the accountant's read-only
// quote; no row, row count or answer-cache entry is read, so the rows are
// the same for any two databases with the same schema and catalog.

// unitAggregateFn is the ledger function of a unit query.
const unitAggregateFn = "DP_UNIT_AGGREGATE"

var _ explain.Releaser = (*Aggregate)(nil)

// ExplainRelease implements explain.Releaser.
func (n *Aggregate) ExplainRelease(ctx *sql.Context) ([]explain.Item, error) {
	if n.deps.Env == nil {
		return nil, fmt.Errorf("DP unit aggregates are not wired")
	}
	p := n.p
	account := catalog.UnitPrefix + p.Unit
	q, err := n.deps.Env.QuoteRelease(ctx, account, unitAggregateFn, p.spec.Epsilon, p.spec.Delta, p.Events())
	if err != nil {
		return nil, fmt.Errorf("EXPLAIN: the budget of %s: %w", account, err)
	}
	items := ChargeItems(unitAggregateFn, account, "person-level grouped aggregate (dpquery/rel, mechanism/bound): each person's rows bounded, then Laplace noise per vector",
		p.spec.Epsilon, p.spec.Delta, q, p.Events())
	items = append(items, explain.Plain("unit", p.Unit, strings.Join(p.Tables, ", "),
		"neighbours: add or remove one person of unit "+p.Unit+" with all their rows in every table of the unit; value: the unit's tables the query reads (its own and along the unit path)"))
	items = append(items, p.tableItems()...)
	items = append(items, p.joinItems(p.root)...)
	if p.where != nil {
		items = append(items, explain.Plain("where", p.where.String(), "", "evaluated on every joined row by the total, constant-cost evaluator (dpquery/eval); a row it rejects is in no group"))
	}
	k, c := p.spec.MaxGroups, fmt.Sprint(p.spec.MaxRows)
	if p.spec.AutoRows {
		c = "auto"
	}
	items = append(items,
		explain.Plain("contribution", "max_groups_contributed", fmt.Sprint(k), fmt.Sprintf("a person contributes to at most k = %d group(s); one in more keeps k of them drawn uniformly (crypto RNG)", k)),
		explain.Plain("contribution", "max_rows_contributed_per_group", c, p.rowsDetail()))
	items = append(items, p.groupItems()...)
	items = append(items, p.autoItems()...)
	names, order := n.names, n.order
	if names == nil {
		for i := range n.outs {
			names, order = append(names, n.schema[i].Name), append(order, i)
		}
	}
	for _, i := range order {
		o, name := n.outs[i], names[i]
		if o.Group >= 0 {
			items = append(items, explain.Plain("column", name, "GROUP BY "+p.refText(p.groups[o.Group]), "group key: a public label, no noise"))
			continue
		}
		items = append(items, p.aggItems(name, o.Agg)...)
	}
	return items, nil
}

// ChargeItems are the release and event rows of a DP EXPLAIN: what the
// release charges now after accounting (the ledger's ε, δ), the request,
// whether the budget and the account's quota admit it, and every privacy
// event.
func ChargeItems(function, account, mechanism string, reqEps, reqDelta float64, q budget.Quote, events []budget.Event) []explain.Item {
	admitted := "admitted now by the budget and the account's quota"
	if !q.Admitted {
		admitted = "would be refused now: " + q.Refusal
	}
	rel := explain.Plain("release", function, account, fmt.Sprintf("requested ε = %v, δ = %v; events sum to ε = %v, δ = %v; %s; EXPLAIN read no row and charged nothing (an identical earlier answer of the same account on the same snapshot is re-read free of charge from the answer cache, which EXPLAIN does not consult)",
		reqEps, reqDelta, q.EventsEpsilon, q.EventsDelta, admitted))
	rel.Mechanism, rel.Epsilon, rel.Delta = mechanism, q.Epsilon, q.Delta
	out := []explain.Item{rel}
	for i, ev := range events {
		it := explain.Plain("event", ev.Kind.String(), fmt.Sprint(i+1), "a privacy event of the release, as the accountant records it")
		it.Epsilon, it.Delta = ev.Epsilon, ev.Delta
		if ev.Kind == budget.Gaussian {
			it.Detail += fmt.Sprintf(" (Gaussian ratio Δ₂/σ = %v)", ev.Ratio)
		}
		out = append(out, it)
	}
	return out
}

// tableItems: one row per table in FROM.
func (p *Plan) tableItems() []explain.Item {
	var out []explain.Item
	for _, s := range p.scans {
		detail := "public table: read as it is"
		switch {
		case s.member != nil && s.member.Parent == "":
			detail = fmt.Sprintf("table of unit %s: column %s holds the person", p.Unit, s.member.Column)
		case s.member != nil:
			detail = fmt.Sprintf("table of unit %s: the person is found along %s → %s.%s", p.Unit, s.member.Column, s.member.Parent, s.member.ParentKey)
		}
		out = append(out, explain.Plain("table", s.Alias, s.key, detail))
	}
	return out
}

// joinItems: one row per join, in plan order.
func (p *Plan) joinItems(n node) []explain.Item {
	if n.join == nil {
		return nil
	}
	j := n.join
	out := append(p.joinItems(j.left), p.joinItems(j.right)...)
	detail := "with a public table: a person's rows may multiply, the contribution bounds cover it"
	if p.unitBelow(j.left) && p.unitBelow(j.right) {
		detail = "two tables of the unit joined along the unit's key: every joined row belongs to one person"
	}
	return append(out, explain.Plain("join", p.refText(j.l)+" = "+p.refText(j.r), "inner equi-join", detail))
}

// refText is alias.column.
func (p *Plan) refText(r ref) string { return p.scans[r.scan].Alias + "." + r.col }

func (p *Plan) rowsDetail() string {
	if p.spec.AutoRows {
		return fmt.Sprintf("C, the rows of one person counted by COUNT in one group, is chosen privately in [1, %d] (auto_bounds row)", bound.AutoMaxRows)
	}
	return fmt.Sprintf("COUNT counts at most C = %d row(s) of one person in one group", p.spec.MaxRows)
}

// groupItems: how the groups are formed.
func (p *Plan) groupItems() []explain.Item {
	var cols []string
	for i, g := range p.groups {
		s := p.refText(g)
		if p.bins[i] != nil {
			s = "bin(" + s + ")"
		}
		cols = append(cols, s)
	}
	name := strings.Join(cols, ", ")
	if len(cols) == 0 {
		return []explain.Item{explain.Plain("groups", "", "one group", "no GROUP BY: one row")}
	}
	if p.spec.Domain != nil {
		return []explain.Item{explain.Plain("groups", name, fmt.Sprintf("declared domain: %d group(s)", len(p.spec.Domain)),
			"one row per group of the public domain (the cross product of the declared domains), empty groups included")}
	}
	it := explain.Plain("groups", name, "private partition selection", fmt.Sprintf("only groups present in the data are candidates; a group is shown iff its noisy person count (a person counted once per kept group) exceeds τ = %.6g; ℓ₁ sensitivity k = %d", p.bp.Threshold(), p.spec.MaxGroups))
	it.Mechanism, it.Epsilon, it.Delta = "Laplace thresholding", p.bp.EpsSelect, p.spec.Delta
	it.NoiseScale, it.Sensitivity, it.Bounds = p.bp.SelectScale(), float64(p.spec.MaxGroups), fmt.Sprintf("τ = %.6g", p.bp.Threshold())
	return []explain.Item{it}
}

// autoItems: the private choices of automatic bounds.
func (p *Plan) autoItems() []explain.Item {
	if p.bp.EpsAuto <= 0 {
		return nil
	}
	var out []explain.Item
	add := func(name, bounds string) {
		it := explain.Plain("auto_bounds", name, "chosen privately", fmt.Sprintf("the %.6g-quantile of the per-person per-group contributions, by report-noisy-max over a public grid (before the release; SHOW WARNINGS names the choice)", p.bp.AutoQuantile()))
		it.Mechanism, it.Epsilon, it.Delta = "report-noisy-max (Laplace)", p.bp.EpsAuto, 0
		it.NoiseScale, it.Sensitivity, it.Bounds = p.bp.AutoScale(), p.bp.AutoSensitivity(), bounds
		out = append(out, it)
	}
	if p.spec.AutoRows && hasCount(p.spec.Measures) {
		add("max_rows_contributed_per_group", fmt.Sprintf("C in [1, %d]", bound.AutoMaxRows))
	}
	for i, m := range p.spec.Measures {
		if m.Auto {
			add(p.aggText(i), fmt.Sprintf("inside [%v, %v]", m.Lo, m.Hi))
		}
	}
	return out
}

func hasCount(ms []bound.Measure) bool {
	for _, m := range ms {
		if m.Kind == bound.Count {
			return true
		}
	}
	return false
}

// aggText is the aggregate as the plan reads it: COUNT(*), SUM(o.amount).
func (p *Plan) aggText(i int) string {
	a := p.aggs[i]
	if r := p.aggR[i]; r != nil {
		return fmt.Sprintf("%s(%s)", a.Kind, p.refText(*r))
	}
	return fmt.Sprintf("%s(*)", a.Kind)
}

// aggItems: the output column name of aggregate i; AVG has two vectors.
func (p *Plan) aggItems(name string, i int) []explain.Item {
	m, a := p.spec.Measures[i], p.aggs[i]
	s1, s2 := p.bp.Sensitivity(i)
	c1, c2 := p.bp.Scales(i)
	text := p.aggText(i)
	mk := func(value string, scale, sens float64, bounds, detail string) explain.Item {
		it := explain.Plain("column", name, value, detail)
		it.Mechanism, it.Epsilon, it.Delta = "Laplace", p.bp.Share, 0
		it.NoiseScale, it.Sensitivity, it.Bounds = scale, sens, bounds
		return it
	}
	k := p.spec.MaxGroups
	switch m.Kind {
	case bound.Count:
		if p.spec.AutoRows {
			// The scale follows the privately chosen C (k·C/ε_i).
			return []explain.Item{mk(text, explain.NoValue, explain.NoValue, fmt.Sprintf("C in [1, %d], chosen privately", bound.AutoMaxRows),
				fmt.Sprintf("Laplace scale k·C/ε_i with the chosen C (at most %.6g)", c1))}
		}
		return []explain.Item{mk(text, c1, s1, fmt.Sprintf("C = %d row(s) per person per group", p.spec.MaxRows),
			fmt.Sprintf("ℓ₁ sensitivity k·C = %d·%d (add/remove one person)", k, p.spec.MaxRows))}
	case bound.Sum:
		if m.Auto {
			return []explain.Item{mk(text, explain.NoValue, explain.NoValue, fmt.Sprintf("chosen privately inside [%v, %v]", m.Lo, m.Hi),
				fmt.Sprintf("each person's sum in a group is clamped to the privately chosen bounds; Laplace scale k·max(|L|, |U|)·σ/ε_i with them (at most %.6g)", c1))}
		}
		src := "given: contribution_bounds_per_group"
		if a.Bounds == nil {
			src = fmt.Sprintf("from the column's declared bounds × C = %d", p.spec.MaxRows)
		}
		return []explain.Item{mk(text, c1, s1, fmt.Sprintf("[%v, %v] per person per group", m.Lo, m.Hi),
			fmt.Sprintf("each person's sum in a group is clamped (%s); ℓ₁ sensitivity k·max(|L|, |U|)·σ (σ the public float-rounding slack)", src))}
	default:
		src := "given: contribution_bounds_per_group"
		if a.Bounds == nil {
			src = "the column's declared bounds"
		}
		return []explain.Item{
			mk(text+": persons", c1, s1, "", fmt.Sprintf("AVG is the mean over persons of each person's mean: the noisy count of persons in the group, ℓ₁ sensitivity k = %d", k)),
			mk(text+": sum of person means", c2, s2, fmt.Sprintf("[%v, %v] per person mean", m.Lo, m.Hi),
				fmt.Sprintf("each person's mean clamped (%s) and centred; ℓ₁ sensitivity k·h·σ, h the half-width", src)),
		}
	}
}
