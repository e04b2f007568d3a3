package rel

import (
	"testing"

	"github.com/dpsql/dpsql/mechanism/bound"
)

// counts answers fixed row counts.
type counts map[string]int64

func (c counts) RowCount(db, table string) (int64, error) { return c[db+"."+table], nil }

// TestMemoryPadded: the admission estimate sees each row count only
// through its power-of-two bucket (docs/privacy/units.md §6): 5,000 and
// 8,192 orders give the same estimate, 8,193 a larger one; a join adds its
// build side.
func TestMemoryPadded(t *testing.T) {
	for n, want := range map[int64]float64{0: 1, 1: 1, 2: 2, 3: 4, 4: 4, 5: 8, 8192: 8192, 8193: 16384} {
		if got := PaddedRows(n); got != want {
			t.Errorf("PaddedRows(%d) = %v, want %v", n, got, want)
		}
	}
	m := shop(t, 3, 2)
	one, err := Compile(Query{From: Scan{DB: "s", Table: "orders"}, Aggs: []Agg{{Kind: bound.Count}}, Options: Options{Epsilon: 1}}, m)
	if err != nil {
		t.Fatal(err)
	}
	join, err := Compile(Query{From: Join{Left: Scan{DB: "s", Table: "orders", Alias: "o"}, Right: Scan{DB: "s", Table: "customers", Alias: "c"},
		LeftCol: Col{Table: "o", Column: "customer_id"}, RightCol: Col{Table: "c", Column: "id"}},
		Aggs: []Agg{{Kind: bound.Count}}, Options: Options{Epsilon: 1}}, m)
	if err != nil {
		t.Fatal(err)
	}
	est := func(p *Plan, orders int64) float64 {
		v, err := p.Memory(counts{"s.orders": orders, "s.customers": 1000})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if a, b := est(one, 5000), est(one, 8192); a != b {
		t.Errorf("5,000 and 8,192 rows: %v ≠ %v (the estimate must see the bucket only)", a, b)
	}
	if a, b := est(one, 8192), est(one, 8193); !(b > a) {
		t.Errorf("8,193 rows: %v, not above 8,192's %v", b, a)
	}
	if a, b := est(one, 5000), est(join, 5000); !(b > a) {
		t.Errorf("join %v, not above the scan's %v (build side)", b, a)
	}
}
