package bound

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// TestOneRowSplit: the exact public split and margin.
func TestOneRowSplit(t *testing.T) {
	for _, c := range []struct{ eps, e1, e2, margin float64 }{
		{1, 0.05, 0.95, 60}, // ⌈ln 20 / 0.05⌉ = ⌈59.9⌉
		{4, 0.2, 3.8, 15},   // ⌈14.98⌉
		{0.1, 0.005, 0.095, 600},
	} {
		o, err := NewOneRow(c.eps)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(o.Eps1-c.e1) > 1e-12 || math.Abs(o.Eps2-c.e2) > 1e-12 || o.Eps1+o.Eps2 != c.eps || o.Margin != c.margin || o.CountScale() != 1/o.Eps1 {
			t.Fatalf("ε = %v: ε₁ %v ε₂ %v margin %v, want %v %v %v", c.eps, o.Eps1, o.Eps2, o.Margin, c.e1, c.e2, c.margin)
		}
		if ev := o.CountEvent(); ev.Epsilon != o.Eps1 {
			t.Fatalf("count event %+v", ev)
		}
		// m = max(1, ⌊P̃ − margin⌋), capped.
		for _, s := range []struct {
			noisy float64
			m     int
		}{{c.margin + 10.7, 10}, {c.margin, MinRows}, {-5, MinRows}, {math.NaN(), MinRows}, {1e18, MaxRows}} {
			if got := o.Size(s.noisy); got != s.m {
				t.Fatalf("Size(%v) = %d, want %d", s.noisy, got, s.m)
			}
		}
	}
	for _, bad := range []float64{0, -1, math.Inf(1), math.NaN(), 1e-6} {
		if _, err := NewOneRow(bad); err == nil {
			t.Fatalf("ε = %v accepted", bad)
		}
	}
}

// personRows is a table: person p has counts[p] rows [p, j].
func personRows(counts map[string]int) [][2]any {
	var out [][2]any
	for p, n := range counts {
		for j := 0; j < n; j++ {
			out = append(out, [2]any{p, []any{p, j}})
		}
	}
	return out
}

// TestOneRowPerPerson: the trainer receives exactly m rows, at most one per
// person, each kept row uniform among its person's rows; padding rows are
// the public pad.
func TestOneRowPerPerson(t *testing.T) {
	o, _ := NewOneRow(1)
	counts := map[string]int{"heavy": 10000, "one": 1}
	for i := 0; i < 200; i++ {
		counts[fmt.Sprint("p", i)] = 1 + i%20
	}
	for _, m := range []int{1, 50, 202, 203, 500} {
		s := o.Sampler()
		for _, r := range personRows(counts) {
			s.Row(r[0].(string), r[1].([]any))
		}
		if s.Persons() != 202 {
			t.Fatalf("%d persons", s.Persons())
		}
		rows, err := Build(s.Kept(), m, []any{nil, nil})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != m {
			t.Fatalf("m = %d: %d rows", m, len(rows))
		}
		seen, pads := map[any]bool{}, 0
		for _, r := range rows {
			if r[0] == nil {
				pads++
				continue
			}
			if seen[r[0]] {
				t.Fatalf("m = %d: person %v twice", m, r[0])
			}
			seen[r[0]] = true
		}
		if want := max(0, m-202); pads != want {
			t.Fatalf("m = %d: %d padding rows, want %d", m, pads, want)
		}
	}
	// Release: m follows the noisy count (P = 202, margin 60: m ≈ 142).
	s := o.Sampler()
	for _, r := range personRows(counts) {
		s.Row(r[0].(string), r[1].([]any))
	}
	rows, m, err := s.Release([]any{nil, nil})
	if err != nil || len(rows) != m || m < 142-300 || m > 142+300 {
		t.Fatalf("Release: %d rows, m = %d (%v)", len(rows), m, err)
	}
	// The heavy person's kept row is uniform over its 10,000 rows: a
	// chi-square-free check on halves over 2,000 scans of a 1,000-row person.
	low := 0
	for i := 0; i < 2000; i++ {
		s := o.Sampler()
		for j := 0; j < 1000; j++ {
			s.Row("h", []any{"h", j})
		}
		if s.order[0].row[1].(int) < 500 {
			low++
		}
	}
	if low < 850 || low > 1150 { // 6.7 standard deviations
		t.Fatalf("first half kept %d of 2000 times", low)
	}
}

// coupledDistance draws the m-row sets of D and D + victim under the
// coupling of units.md §10 (same kept rows for shared persons, same
// subset / padding, same permutation) and returns their Hamming distance.
func coupledDistance(t *testing.T, base [][]any, victim []any, m int) int {
	t.Helper()
	p := len(base)
	// D′ = D + victim: draw the D′ set, then derive D's by the coupling.
	all := append(append([][]any(nil), base...), victim)
	pad := []any{nil, nil}
	var d1, d0 [][]any
	if m <= p+1 {
		sub, err := noise.SampleSubset(p+1, m)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for i := 0; i <= p; i++ {
			if sub.Has(i) {
				out = append(out, i)
			}
		}
		var free []int
		for i := 0; i < p; i++ {
			if !sub.Has(i) {
				free = append(free, i)
			}
		}
		for _, i := range out {
			d1 = append(d1, all[i])
			if i == p { // the victim's row: a uniform unused row of D, or a pad if none
				if len(free) > 0 {
					d0 = append(d0, base[free[noise.IntN(uint64(len(free)))]])
				} else {
					d0 = append(d0, pad)
				}
			} else {
				d0 = append(d0, all[i])
			}
		}
	} else {
		d1 = append(append(d1, all...), make([][]any, m-p-1)...)
		d0 = append(append(d0, base...), make([][]any, m-p)...)
		for i := range d1 {
			if d1[i] == nil {
				d1[i] = pad
			}
			if d0[i] == nil {
				d0[i] = pad
			}
		}
	}
	diff := 0
	for i := range d0 {
		if fmt.Sprint(d0[i]) != fmt.Sprint(d1[i]) {
			diff++
		}
	}
	return diff
}

// TestOneRowCoupling: for adversarial person neighbours (a person with 1
// row or 10,000 rows) and every regime of m (m ≤ P, m = P + 1, m > P + 1)
// the coupled m-row sets differ in at most one row; the marginals of the
// coupled D set are Build's (each base person in with probability m/P).
func TestOneRowCoupling(t *testing.T) {
	o, _ := NewOneRow(1)
	var base [][]any
	for i := 0; i < 30; i++ {
		base = append(base, []any{fmt.Sprint("p", i), 0})
	}
	for _, heavy := range []int{1, 10000} {
		s := o.Sampler()
		for j := 0; j < heavy; j++ {
			s.Row("victim", []any{"victim", j})
		}
		victim := s.order[0].row
		for _, m := range []int{1, 10, 30, 31, 32, 100} {
			for k := 0; k < 200; k++ {
				if d := coupledDistance(t, base, victim, m); d > 1 {
					t.Fatalf("heavy %d, m = %d: coupled sets differ in %d rows", heavy, m, d)
				}
			}
		}
	}
}

// oneRowMean is the reduction around the row-level DP_MEAN of
// mechanism.Mean (replace-one, public n = m) on column 1 in [0, 1]; the
// padding row is NULL (the midpoint).
func oneRowMean(t *testing.T, o *OneRow, rows [][2]any) float64 {
	s := o.Sampler()
	for _, r := range rows {
		s.Row(r[0].(string), r[1].([]any))
	}
	set, m, err := s.Release([]any{nil, nil})
	if err != nil {
		t.Fatal(err)
	}
	mm, err := mechanism.NewMean(0, 1, o.Eps2, int64(m))
	if err != nil {
		t.Fatal(err)
	}
	acc := mm.Accumulator()
	for _, r := range set {
		v := math.NaN()
		if f, ok := r[1].(float64); ok {
			v = f
		}
		acc.Add(v)
	}
	out, err := acc.Release()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAuditOneRow: Clopper–Pearson audit of the reduction around the
// row-level mean on person neighbours: D = 30 persons with 1–3 rows at 0,
// D′ = D + a person with 200 rows at 1. ε = 4 (ε₁ = 0.2, margin 15, m ≈ 15
// for D). Must fail: the row-level mean over all rows with the public-n
// calibration (the heavy person's 200 rows move it by 200/n).
func TestAuditOneRow(t *testing.T) {
	t.Parallel()
	const eps = 4.0
	o, _ := NewOneRow(eps)
	var d [][2]any
	for i := 0; i < 30; i++ {
		for j := 0; j <= i%3; j++ {
			d = append(d, [2]any{fmt.Sprint("p", i), []any{fmt.Sprint("p", i), 0.0}})
		}
	}
	d1 := append([][2]any(nil), d...)
	for j := 0; j < 200; j++ {
		d1 = append(d1, [2]any{"heavy", []any{"heavy", 1.0}})
	}
	side := func(s int) [][2]any {
		if s == 1 {
			return d1
		}
		return d
	}
	cfg := audit.Config{N: 10000}
	audit.RequirePass(t, func(s int) float64 { return oneRowMean(t, o, side(s)) }, eps, cfg)

	rowLevel := func(s int) float64 {
		rows := side(s)
		mm, err := mechanism.NewMean(0, 1, eps, int64(len(rows)))
		if err != nil {
			t.Fatal(err)
		}
		acc := mm.Accumulator()
		for _, r := range rows {
			acc.Add(r[1].([]any)[1].(float64))
		}
		v, err := acc.Release()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	audit.RequireCatch(t, rowLevel, eps, cfg)
}
