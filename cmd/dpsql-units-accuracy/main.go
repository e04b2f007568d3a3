// Command dpsql-units-accuracy measures the accuracy of person-level DP
// aggregates (issue 27, docs/results/units.md) on a synthetic shop:
// customers(id, region) ← orders(id, customer_id, amount), 10⁵ customers
// with 1–100 heavy-tailed orders each (-gen pareto: Pareto(1.1), the
// issue's shop; -gen lognormal: a less extreme log-normal). It runs the privacy-unit compiler
// (dpquery/rel) in process on an in-memory source and reports, for groups
// with at least -min-group customers, the relative error of the DP answer
// against the true (unbounded) answer, and the bias that contribution
// bounding alone causes.
//
//	go run ./cmd/dpsql-units-accuracy -customers 100000 -reps 5
//	go run ./cmd/dpsql-units-accuracy -customers 100000 -reps 5 -gen lognormal
//
// The automatic configuration (max_rows_contributed_per_group = auto) has
// no tuned parameter: its quantile level and ε fraction are the public
// constants of mechanism/bound (docs/privacy/units.md §3a).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/dpquery/rel"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// splitmix64: synthetic data only (never privacy noise, which comes from
// package noise).
type gen uint64

func (g *gen) next() uint64 {
	*g += 0x9e3779b97f4a7c15
	z := uint64(*g)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (g *gen) float() float64 { return float64(g.next()>>11) / (1 << 53) }

type shop struct {
	entries map[string]catalog.Table
	schema  map[string][]string
	rows    map[string][][]any
}

func (s *shop) Table(key string) (catalog.Table, bool) { e, ok := s.entries[key]; return e, ok }
func (s *shop) Columns(db, table string) ([]string, error) {
	c, ok := s.schema[catalog.Key(db, table)]
	if !ok {
		return nil, fmt.Errorf("no table %s.%s", db, table)
	}
	return c, nil
}
func (s *shop) ScanValues(db, table string, cols []string, fn func(row []any) error) (int64, error) {
	key := catalog.Key(db, table)
	idx := make([]int, len(cols))
	for i, c := range cols {
		for j, n := range s.schema[key] {
			if n == c {
				idx[i] = j
			}
		}
	}
	out := make([]any, len(cols))
	for _, r := range s.rows[key] {
		for i, j := range idx {
			out[i] = r[j]
		}
		if err := fn(out); err != nil {
			return 0, err
		}
	}
	return int64(len(s.rows[key])), nil
}

const regions = 30

// orders draws one customer's number of orders in [1, 100].
func orders(g *gen, kind string) int {
	if kind == "lognormal" {
		// exp(N(1, 1)): median e ≈ 2.7, mean ≈ 4.5, a light tail.
		z := math.Sqrt(-2*math.Log(1-g.float())) * math.Cos(2*math.Pi*g.float())
		return int(math.Max(1, math.Min(100, math.Round(math.Exp(1+z)))))
	}
	// Pareto(α = 1.1) truncated to [1, 100]: heavy-tailed orders.
	return int(math.Min(100, math.Floor(math.Pow(1-g.float(), -1/1.1))))
}

func build(customers int, seed uint64, kind string) *shop {
	g := gen(seed)
	s := &shop{entries: map[string]catalog.Table{}, schema: map[string][]string{
		"s.customers": {"id", "region"}, "s.orders": {"id", "customer_id", "amount"},
	}, rows: map[string][][]any{}}
	var labels []string
	w := make([]float64, regions)
	total := 0.0
	for r := range w {
		labels = append(labels, fmt.Sprintf("r%02d", r))
		w[r] = 1 / math.Pow(float64(r+1), 1.3)
		total += w[r]
	}
	s.entries["s.customers"] = catalog.Table{Name: "s.customers", Protected: true, Labels: map[string][]string{"region": labels},
		Unit: &catalog.Member{Unit: "s.customer", Column: "id", Explicit: true}}
	s.entries["s.orders"] = catalog.Table{Name: "s.orders", Protected: true, Bounds: map[string]catalog.Bound{"amount": {Lo: 0, Hi: 500}},
		Unit: &catalog.Member{Unit: "s.customer", Column: "customer_id"}}
	oid := int64(0)
	for c := 0; c < customers; c++ {
		u := g.float() * total
		r := 0
		for ; r < regions-1 && u > w[r]; r++ {
			u -= w[r]
		}
		s.rows["s.customers"] = append(s.rows["s.customers"], []any{int64(c), labels[r]})
		n := orders(&g, kind)
		for i := 0; i < n; i++ {
			a := 5 + 495*math.Pow(g.float(), 3) // skewed amounts in [5, 500]
			s.rows["s.orders"] = append(s.rows["s.orders"], []any{oid, int64(c), a})
			oid++
		}
	}
	return s
}

type truth struct {
	persons      int
	count, sum   float64
	bCount, bSum float64 // after contribution bounding
}

func main() {
	customers := flag.Int("customers", 100000, "customers")
	reps := flag.Int("reps", 5, "releases per configuration (medians reported)")
	eps := flag.Float64("epsilon", 1, "ε per query")
	minGroup := flag.Int("min-group", 1000, "report groups with at least this many customers")
	seed := flag.Uint64("seed", 27, "data seed")
	kind := flag.String("gen", "pareto", "orders per customer: pareto (α = 1.1, the issue's shop) or lognormal (exp(N(1, 1)))")
	flag.Parse()
	if *kind != "pareto" && *kind != "lognormal" {
		fmt.Fprintln(os.Stderr, "-gen must be pareto or lognormal")
		os.Exit(2)
	}
	s := build(*customers, *seed, *kind)
	fmt.Printf("synthetic shop (%s): %d customers, %d orders, %d regions (seed %d)\n\n", *kind, *customers, len(s.rows["s.orders"]), regions, *seed)

	type cfg struct {
		name   string
		c      int
		bounds *[2]float64
		auto   bool
	}
	cfgs := []cfg{
		{"defaults (C = 1, SUM bounds C·[0, 500])", 0, nil, false},
		{"C = 10 (SUM bounds [0, 5000])", 10, nil, false},
		{"C = 30 (SUM bounds [0, 15000])", 30, nil, false},
		{"C = 100 (SUM bounds [0, 50000])", 100, nil, false},
		{"C = 20, SUM contribution_bounds_per_group => (0, 2000)", 20, &[2]float64{0, 2000}, false},
		{"auto (max_rows_contributed_per_group = auto: C and SUM bounds chosen privately)", 0, nil, true},
	}
	fmt.Println("| configuration | groups ≥ min | COUNT: bias | COUNT: median / max rel. error | SUM: bias | SUM: median / max rel. error | within 5 % |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, c := range cfgs {
		q := rel.Query{
			From:    rel.Join{Left: rel.Scan{DB: "s", Table: "orders", Alias: "o"}, Right: rel.Scan{DB: "s", Table: "customers", Alias: "c"}, LeftCol: rel.Col{Table: "o", Column: "customer_id"}, RightCol: rel.Col{Table: "c", Column: "id"}},
			GroupBy: []rel.Col{{Table: "c", Column: "region"}},
			Aggs:    []rel.Agg{{Kind: bound.Count}, {Kind: bound.Sum, Col: &rel.Col{Table: "o", Column: "amount"}, Bounds: c.bounds}},
			Options: rel.Options{Epsilon: *eps, MaxRows: c.c, AutoRows: c.auto},
		}
		p, err := rel.Compile(q, s)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var cErr, sErr []float64
		var chosen []string
		var cBias, sBias []float64
		groups := 0
		allWithin := true
		for rep := 0; rep < *reps; rep++ {
			res, err := p.Run(s, nil)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			// The bounds of this release (the chosen ones under auto).
			tr := truths(s, res.Bound.MaxRows, res.Bound.Bounds[1][1])
			if c.auto {
				chosen = append(chosen, fmt.Sprintf("C = %d, SUM ≤ %.4g", res.Bound.MaxRows, res.Bound.Bounds[1][1]))
			}
			groups = 0
			for _, row := range res.Rows {
				t := tr[row[0].(string)]
				if t.persons < *minGroup {
					continue
				}
				groups++
				ce := math.Abs(float64(row[1].(int64))-t.count) / t.count
				se := math.Abs(row[2].(float64)-t.sum) / t.sum
				cErr, sErr = append(cErr, ce), append(sErr, se)
				if rep == 0 || c.auto {
					cBias = append(cBias, (t.bCount-t.count)/t.count)
					sBias = append(sBias, (t.bSum-t.sum)/t.sum)
				}
				if ce > 0.05 || se > 0.05 {
					allWithin = false
				}
			}
		}
		fmt.Printf("| %s | %d | %s | %.2g %% / %.2g %% | %s | %.2g %% / %.2g %% | %v |\n", c.name, groups,
			rng(cBias), 100*median(cErr), 100*maxOf(cErr), rng(sBias), 100*median(sErr), 100*maxOf(sErr), allWithin)
		if len(chosen) > 0 {
			fmt.Printf("\nauto: chosen per release: %s\n", strings.Join(chosen, "; "))
		}
	}
	fmt.Printf("\nε = %v per query (split equally between COUNT and SUM), k = 1 (a customer has one region), %d releases per configuration; errors are against the true unbounded COUNT(*) of orders and SUM(amount); bias is (bounded truth − truth)/truth, the range over the reported groups.\n", *eps, *reps)
}

// truths computes, per region, the true and the contribution-bounded
// answers (exactly as mechanism/bound bounds them, without noise).
func truths(s *shop, c int, hi float64) map[string]*truth {
	region := map[int64]string{}
	for _, r := range s.rows["s.customers"] {
		region[r[0].(int64)] = r[1].(string)
	}
	type per struct {
		n   int
		sum float64
	}
	pc := map[int64]*per{}
	for _, r := range s.rows["s.orders"] {
		id := r[1].(int64)
		if pc[id] == nil {
			pc[id] = &per{}
		}
		pc[id].n++
		pc[id].sum += r[2].(float64)
	}
	out := map[string]*truth{}
	for id, x := range pc {
		g := region[id]
		if out[g] == nil {
			out[g] = &truth{}
		}
		t := out[g]
		t.persons++
		t.count += float64(x.n)
		t.sum += x.sum
		t.bCount += float64(min(x.n, c))
		t.bSum += math.Min(x.sum, hi)
	}
	return out
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	return y[len(y)/2]
}

func maxOf(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}

func rng(x []float64) string {
	if len(x) == 0 {
		return "—"
	}
	lo, hi := x[0], x[0]
	for _, v := range x {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return strings.TrimSpace(fmt.Sprintf("%+.1f … %+.1f %%", 100*lo, 100*hi))
}
