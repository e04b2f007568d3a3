package rel

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/mechanism/bound"
)

// TestAutoCompile: max_rows_contributed_per_group = auto and
// contribution_bounds_per_group => auto compile to the mechanism's
// automatic bounds inside public limits; bad combinations are refused.
func TestAutoCompile(t *testing.T) {
	m := shop(t, 4, 1)
	q := ordersByRegion
	q.Options = Options{Epsilon: 1, AutoRows: true}
	p, err := Compile(q, m)
	if err != nil {
		t.Fatal(err)
	}
	s := p.spec
	if !s.AutoRows || s.MaxRows != bound.AutoMaxRows {
		t.Fatalf("spec %+v", s)
	}
	// SUM: automatic inside C_max·[0, 100]; AVG keeps its declared bounds.
	if m := s.Measures[1]; !m.Auto || m.Lo != 0 || m.Hi != 100*bound.AutoMaxRows {
		t.Fatalf("SUM measure %+v", m)
	}
	if m := s.Measures[2]; m.Auto || m.Lo != 0 || m.Hi != 100 {
		t.Fatalf("AVG measure %+v", m)
	}
	if bp := p.Bound(); bp.EpsAuto != 0.05 || math.Abs(bp.Share-0.225) > 1e-15 {
		t.Fatalf("ε_a %v share %v: want 0.1·ε over two selections, 0.9·ε over four vectors (AVG has two)", bp.EpsAuto, bp.Share)
	}
	if d := p.Describe(); !strings.Contains(d, "max_rows_contributed_per_group = auto (in [1, 1000])") || !strings.Contains(d, "automatic bounds: ε = 0.05") {
		t.Fatalf("describe: %s", d)
	}
	// contribution_bounds_per_group => auto with a fixed C.
	q2 := ordersByRegion
	q2.Aggs = []Agg{{Kind: bound.Count}, {Kind: bound.Sum, Col: col("o", "amount"), Auto: true}}
	q2.Options = Options{Epsilon: 1, MaxRows: 5}
	p2, err := Compile(q2, m)
	if err != nil {
		t.Fatal(err)
	}
	if s := p2.spec; s.AutoRows || s.MaxRows != 5 || !s.Measures[1].Auto || p2.Bound().EpsAuto != 0.1 {
		t.Fatalf("spec %+v", s)
	}
	if p.Key() == p2.Key() || p.Key() == mustCompile(t, ordersByRegion, m).Key() {
		t.Fatal("automatic bounds must be part of the plan's key")
	}

	o, c := Scan{DB: "s", Table: "orders", Alias: "o"}, Scan{DB: "s", Table: "customers", Alias: "c"}
	for name, tc := range map[string]struct {
		q    Query
		want string
	}{
		"auto and a number":         {Query{From: o, Aggs: []Agg{{Kind: bound.Count}}, Options: Options{Epsilon: 1, MaxRows: 3, AutoRows: true}}, "either a number or auto"},
		"COUNT auto":                {Query{From: o, Aggs: []Agg{{Kind: bound.Count, Auto: true}}, Options: Options{Epsilon: 1}}, "COUNT takes no"},
		"AVG auto":                  {Query{From: o, Aggs: []Agg{{Kind: bound.Avg, Col: col("o", "amount"), Auto: true}}, Options: Options{Epsilon: 1}}, "is for SUM"},
		"auto and bounds":           {Query{From: o, Aggs: []Agg{{Kind: bound.Sum, Col: col("o", "amount"), Auto: true, Bounds: &[2]float64{0, 1}}}, Options: Options{Epsilon: 1}}, "not both"},
		"auto undeclared":           {Query{From: c, Aggs: []Agg{{Kind: bound.Sum, Col: col("c", "id"), Auto: true}}, Options: Options{Epsilon: 1}}, "declared bounds"},
		"auto rows, SUM undeclared": {Query{From: c, Aggs: []Agg{{Kind: bound.Sum, Col: col("c", "id")}}, Options: Options{Epsilon: 1, AutoRows: true}}, "declared bounds"},
		"ε too small":               {Query{From: o, Aggs: []Agg{{Kind: bound.Count}}, Options: Options{Epsilon: 1e-300, AutoRows: true}}, "minimum"},
	} {
		_, err := Compile(tc.q, m)
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a refusal naming %q", name, err, tc.want)
		}
	}
}

func mustCompile(t *testing.T, q Query, m *mem) *Plan {
	t.Helper()
	p, err := Compile(q, m)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAutoRunHeavy: at ε = 10⁷ the chosen bounds are the quantile rule's
// (q = 0.999) over the (person, group) pairs, and a customer with 10,000
// orders in one region, or orders in both regions (k = 1), moves neither
// the chosen C nor the COUNT by more than C. The warning names the
// chosen bounds. Through the BigQuery syntax end to end.
func TestAutoRunHeavy(t *testing.T) {
	for _, heavyRegions := range [][]string{{"north"}, {"north", "south"}} {
		m := shop(t, 1000, 3) // 1,000 customers, 3 orders each, person sums 3·(c%50) ≤ 147
		for _, r := range heavyRegions {
			addCustomer(m, 9000, r, 10000/len(heavyRegions), 100)
		}
		if len(heavyRegions) == 2 {
			m.rows["s.customers"] = m.rows["s.customers"][:len(m.rows["s.customers"])-1] // one customer row
		}
		p, _, err := bigQuery(t, m, `SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1e7, max_rows_contributed_per_group = auto)
			c.region, COUNT(*), SUM(o.amount) FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region`)
		if err != nil {
			t.Fatal(err)
		}
		// 1,001 pairs, target round(0.999·1001) = 1000: every grid point C in
		// [3, heavy's count) has r = 1000 (utility 0), the points below 3
		// r = 0: C ≥ 3, and the heavy customer cannot push it to the top.
		res, err := p.Run(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		b := res.Bound
		if b.MaxRows < 3 || b.MaxRows >= 5000 || b.Bounds[1][0] != 0 || b.Bounds[1][1] < 147 || b.Bounds[1][1] >= 5000*100 {
			t.Fatalf("chosen C %d, SUM %v", b.MaxRows, b.Bounds[1])
		}
		// 500 customers per region with 3 orders (SUM 36,000 north, 37,500
		// south); the heavy customer keeps one region (k = 1) and adds
		// exactly C to its COUNT and s (< its sum) to its SUM.
		c, s := float64(b.MaxRows), b.Bounds[1][1]
		var cnt, sum float64
		for _, r := range res.Rows {
			for _, v := range r {
				switch x := v.(type) {
				case int64:
					cnt += float64(x)
				case float64:
					sum += x
				}
			}
		}
		if math.Abs(cnt-(3000+c)) > 0.5 || math.Abs(sum-(73500+s)) > 0.01 {
			t.Fatalf("regions %v: COUNT total %v SUM total %v, want %v and %v", res.Rows, cnt, sum, 3000+c, 73500+s)
		}
		if d := p.DescribeRelease(b); !strings.Contains(d, "chosen privately: max_rows_contributed_per_group = ") || !strings.Contains(d, "SUM bounds [0, ") {
			t.Fatalf("describe: %s", d)
		}
	}
}
