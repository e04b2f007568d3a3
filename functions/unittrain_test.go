package functions

import (
	"math"
	"testing"

	"github.com/dpsql/dpsql/mechanism/bound"
)

// TestUnitSampleRows: the row-level code reads the unit table as exactly
// the m-row person-level set (RowCount = m, every scan the m rows, columns
// projected by name, NULL padding as NaN), and every other table from the
// store; the sample hides pushdown and attachment (sliceRows has both), so
// no statistic is computed on the real table.
func TestUnitSampleRows(t *testing.T) {
	o, err := bound.NewOneRow(1)
	if err != nil {
		t.Fatal(err)
	}
	s := o.Sampler()
	for j := 0; j < 10000; j++ {
		s.Row("heavy", []any{int64(0), "heavy", float64(j)})
	}
	s.Row("light", []any{int64(1), "light", 5.0})
	rows, err := bound.Build(s.Kept(), 4, make([]any, 3)) // m = 4 > P = 2: two padding rows
	if err != nil {
		t.Fatal(err)
	}
	base := sliceRows{rows: [][]any{{7}, {8}, {9}}}
	u := &unitSample{base: base, db: "shop", table: "orders", key: "shop.orders", cols: []string{"id", "customer", "amount"}, rows: rows, m: 4}
	var r Rows = u
	if n, _ := r.RowCount("SHOP", "Orders"); n != 4 {
		t.Fatalf("RowCount = %d, want m = 4", n)
	}
	if n, _ := r.RowCount("shop", "other"); n != 3 {
		t.Fatalf("another table's RowCount = %d, want the store's 3", n)
	}
	persons, pads := map[any]int{}, 0
	n, err := r.ScanValues("shop", "orders", []string{"CUSTOMER", "amount"}, func(row []any) error {
		if row[0] == nil {
			pads++
		} else {
			persons[row[0]]++
		}
		return nil
	})
	if err != nil || n != 4 || pads != 2 || persons["heavy"] != 1 || persons["light"] != 1 {
		t.Fatalf("ScanValues: n %d, pads %d, persons %v (%v)", n, pads, persons, err)
	}
	nan := 0
	if _, err := r.ScanFloats("shop", "orders", []string{"amount"}, func(row []float64) error {
		if math.IsNaN(row[0]) {
			nan++
		}
		return nil
	}); err != nil || nan != 2 {
		t.Fatalf("ScanFloats: %d NaN (the padding), want 2 (%v)", nan, err)
	}
	if _, err := r.ScanValues("shop", "orders", []string{"nope"}, func([]any) error { return nil }); err == nil {
		t.Fatal("an unknown column was served")
	}
	if _, ok := r.(Pushdown); ok {
		t.Fatal("the sample exposes pushdown")
	}
	if _, ok := r.(attacher); ok {
		t.Fatal("the sample exposes Attached")
	}
	e := &Env{Store: base}
	if got := e.rows(tableRef{sample: u}); got != Rows(u) {
		t.Fatal("a ref with a sample does not read it")
	}
	if n, _ := e.rowCount(nil, tableRef{db: "shop", table: "orders", key: "shop.orders", sample: u}); n != 4 {
		t.Fatalf("rowCount = %d, want m", n)
	}
}
