package bound

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism/agg"
)

// autoSpec is a COUNT and an automatic SUM over a declared domain, outer
// limits C_max·[0, 500] (a column declared in [0, 500]).
func autoSpec(k int, eps float64, domain []string) Spec {
	return Spec{MaxGroups: k, MaxRows: AutoMaxRows, AutoRows: true, Domain: domain, Epsilon: eps,
		Measures: []Measure{{Kind: Count}, {Kind: Sum, Lo: 0, Hi: 500 * AutoMaxRows, Auto: true}}}
}

func TestAutoGrids(t *testing.T) {
	g := AutoRowsGrid()
	if g[0] != 1 || g[len(g)-1] != AutoMaxRows {
		t.Fatalf("C grid %v: want 1 … %d", g, AutoMaxRows)
	}
	for j := 1; j < len(g); j++ {
		if !(g[j] > g[j-1]) || g[j] != math.Round(g[j]) || g[j]/g[j-1] > 2 {
			t.Fatalf("C grid not strictly increasing integers with ratio ≤ 2 at %d: %v", j, g)
		}
	}
	s := AutoSumGrid(-10, 500000)
	if len(s) != 57 || s[len(s)-1] != 500000 || math.Abs(s[0]-500000/math.Exp2(14)) > 1e-9 {
		t.Fatalf("SUM grid %d points %v … %v", len(s), s[0], s[len(s)-1])
	}
	if lo, hi := AutoClamp(-10, 500000, 64); lo != -10 || hi != 64 {
		t.Fatalf("clamp [%v, %v], want [-10, 64]", lo, hi)
	}
	if lo, hi := AutoClamp(-5000, 0, 64); lo != -64 || hi != 0 {
		t.Fatalf("clamp [%v, %v], want [-64, 0]", lo, hi)
	}
}

// TestAutoScalesExact: the ε split, q, Δ, the selection's scale and the
// events, by hand.
func TestAutoScalesExact(t *testing.T) {
	p := mustPlan(t, autoSpec(3, 2, []string{"a", "b"}))
	if p.EpsAuto != 0.1 || p.Share != 0.9 {
		t.Fatalf("ε_a %v share %v, want 0.1·2/2 and 0.9·2/2", p.EpsAuto, p.Share)
	}
	q := 1 - math.Sqrt2*3/(0.9*1000)
	if p.AutoQuantile() != q || p.AutoSensitivity() != 3 || p.AutoScale() != 60 || p.AutoStep() != 60 {
		t.Fatalf("q %v (want %v) Δ %v scale %v, want Δ 3 and 2·3/0.1", p.AutoQuantile(), q, p.AutoSensitivity(), p.AutoScale())
	}
	ev := p.Events()
	sum := 0.0
	for _, e := range ev {
		if e.Kind != budget.Laplace {
			t.Fatalf("event %+v", e)
		}
		sum += e.Epsilon
	}
	if len(ev) != 4 || ev[0].Epsilon != 0.1 || ev[1].Epsilon != 0.1 || math.Abs(sum-2) > 1e-12 {
		t.Fatalf("events %+v: two selections at 0.1, two vectors at 0.9, total ε", ev)
	}
	// q is clamped at 0.999 (large ε) and 0.5 (small ε, large k).
	if q := mustPlan(t, autoSpec(1, 100, []string{"a"})).AutoQuantile(); q != 0.999 {
		t.Fatalf("q %v at ε = 100", q)
	}
	small := mustPlan(t, autoSpec(100, 0.01, []string{"a"}))
	if small.AutoQuantile() != 0.5 || small.AutoSensitivity() != 50 {
		t.Fatalf("q %v Δ %v at ε = 0.01, k = 100", small.AutoQuantile(), small.AutoSensitivity())
	}
	// Only C: one selection, all of AutoFraction.
	c := mustPlan(t, Spec{MaxGroups: 1, MaxRows: AutoMaxRows, AutoRows: true, Domain: []string{"a"}, Epsilon: 1, Measures: []Measure{{Kind: Count}}})
	if c.EpsAuto != 0.1 || c.Share != 0.9 || len(c.Events()) != 2 {
		t.Fatalf("C only: ε_a %v share %v events %v", c.EpsAuto, c.Share, c.Events())
	}
	// AutoRows without a COUNT selects nothing and spends nothing on it.
	s := mustPlan(t, Spec{MaxGroups: 1, MaxRows: AutoMaxRows, AutoRows: true, Domain: []string{"a"}, Epsilon: 1, Measures: []Measure{{Kind: Sum, Lo: 0, Hi: 5}}})
	if s.EpsAuto != 0 || s.Share != 1 {
		t.Fatalf("no COUNT: ε_a %v share %v", s.EpsAuto, s.Share)
	}
}

func TestAutoRefused(t *testing.T) {
	for name, s := range map[string]Spec{
		"AutoRows with C ≠ C_max": {MaxGroups: 1, MaxRows: 5, AutoRows: true, Domain: []string{"a"}, Epsilon: 1, Measures: []Measure{{Kind: Count}}},
		"auto COUNT":              {MaxGroups: 1, MaxRows: 1, Domain: []string{"a"}, Epsilon: 1, Measures: []Measure{{Kind: Count, Auto: true}}},
		"auto AVG":                {MaxGroups: 1, MaxRows: 1, Domain: []string{"a"}, Epsilon: 1, Measures: []Measure{{Kind: Avg, Lo: 0, Hi: 1, Auto: true}}},
		"auto SUM above 0":        {MaxGroups: 1, MaxRows: 1, Domain: []string{"a"}, Epsilon: 1, Measures: []Measure{{Kind: Sum, Lo: 1, Hi: 5, Auto: true}}},
		"ε_a below the sampler":   autoSpec(1, 1e-12, []string{"a"}),
	} {
		if _, err := New(s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestAutoChoiceExact: at ε = 10⁷ the selection is the exact quantile
// rule and the release uses the chosen bounds (clamps and scales).
func TestAutoChoiceExact(t *testing.T) {
	p := mustPlan(t, autoSpec(1, 1e7, []string{"a"}))
	if p.AutoQuantile() != 0.999 {
		t.Fatalf("q %v", p.AutoQuantile())
	}
	// 9,980 persons with 6 rows, 10 with 7, 10 with 8: t = round(0.999·10⁴)
	// = 9990 = r(7) (r(6) = 9980, r(8) = 10⁴), so C = 7 (the step penalty
	// λ = 1 at this ε is far below the rank gaps of 10). Amounts 5 per row:
	// person sums 30, 35, 40, so the SUM clamp is the grid point in [35, 40).
	var rows []row
	for i, n := range map[int]int{6: 9980, 7: 10, 8: 10} {
		for pp := 0; pp < n; pp++ {
			for r := 0; r < i; r++ {
				rows = append(rows, row{fmt.Sprint(i, "-", pp), "a", []float64{1, 5}})
			}
		}
	}
	grid := AutoSumGrid(0, 500*AutoMaxRows)
	var want float64
	for _, g := range grid {
		if g >= 35 && g < 40 {
			want = g
		}
	}
	if want == 0 || p.AutoStep() != 1 {
		t.Fatalf("no SUM grid point in [35, 40) or λ = %v: change the test data", p.AutoStep())
	}
	for rep := 0; rep < 3; rep++ {
		res := release(t, p, rows)
		if !res.Auto || res.MaxRows != 7 || res.Bounds[1] != [2]float64{0, want} {
			t.Fatalf("chose C = %d, SUM %v; want 7 and [0, %v]", res.MaxRows, res.Bounds[1], want)
		}
		if res.Scales[0][0] != 7/p.Share || res.Scales[1][0] != want*Sigma/p.Share {
			t.Fatalf("scales %v, want C/ε_i and b·σ/ε_i", res.Scales)
		}
		// The bounded truth: counts capped at 6, sums at want.
		if c := res.Values[0][0]; math.Abs(c-(9980*6+20*7)) > 0.5 {
			t.Fatalf("COUNT %v, want %v", c, 9980*6+20*7)
		}
		if s, w := res.Values[1][0], 9980*30+10*35+10*want; math.Abs(s-w) > 1e-2 {
			t.Fatalf("SUM %v, want %v", s, w)
		}
	}
}

// selUtilities are the selections' utilities of one accumulator after the
// group draw: C's, then each automatic SUM's.
func selUtilities(t *testing.T, a *Accumulator) [][]float64 {
	t.Helper()
	if err := a.sampleGroups(); err != nil {
		t.Fatal(err)
	}
	in := a.autoValues()
	out := [][]float64{a.p.AutoUtilities(autoRowsGrid, in.rows)}
	for i, m := range a.p.Measures {
		if m.Auto {
			out = append(out, a.p.AutoUtilities(AutoSumGrid(m.Lo, m.Hi), in.sums[i]))
		}
	}
	return out
}

// TestAutoSensitivityAdversarial: adding one person moves every utility
// of every selection by at most Δ = ⌈k·max(q, 1 − q)⌉, for a victim with 1
// row, 10,000 rows in one group, 10,000 rows in every group, huge and
// negative sums, NULLs; Δ is attained.
func TestAutoSensitivityAdversarial(t *testing.T) {
	groups := []string{"g0", "g1", "g2", "g3", "g4"}
	attained := false
	for _, k := range []int{1, 3} {
		for _, eps := range []float64{0.5, 5} {
			s := autoSpec(k, eps, groups)
			s.Measures[1].Lo = -500 * AutoMaxRows
			p := mustPlan(t, s)
			delta := p.AutoSensitivity()
			var base []row
			for i := 0; i < 300; i++ {
				for r := 0; r <= i%13; r++ {
					base = append(base, row{fmt.Sprint(i), groups[i%len(groups)], []float64{1, float64((i * 37) % 500)}})
				}
			}
			heavy := func(gs []string, n int, v float64) []row {
				var out []row
				for _, g := range gs {
					for i := 0; i < n; i++ {
						out = append(out, row{"victim", g, []float64{1, v}})
					}
				}
				return out
			}
			for name, victim := range map[string][]row{
				"1 row":                   heavy(groups[:1], 1, 3),
				"10000 rows, 1 group":     heavy(groups[:1], 10000, 500),
				"10000 rows, every group": heavy(groups, 10000, 500),
				"10000 negative rows":     heavy(groups, 10000, -500),
				"NULL values":             heavy(groups, 3, math.NaN()),
			} {
				u0 := selUtilities(t, accumulate(p, base))
				for rep := 0; rep < 4; rep++ { // the victim's group draw varies
					u1 := selUtilities(t, accumulate(p, append(append([]row(nil), base...), victim...)))
					for s := range u0 {
						for j := range u0[s] {
							d := math.Abs(u1[s][j] - u0[s][j])
							if d > delta {
								t.Fatalf("k=%d ε=%v %s: selection %d utility %d moved by %v > Δ = %v", k, eps, name, s, j, d, delta)
							}
							if d == delta {
								attained = true
							}
						}
					}
				}
			}
		}
	}
	if !attained {
		t.Fatal("Δ never attained: the bound is not shown tight")
	}
}

// TestAuditAutoSelection: Clopper–Pearson audit of the selection of C
// (the released chosen bound) on neighbours differing by a person with 2
// rows in each of k = 10 groups; 38 base persons with 1 row and 2 with 2
// rows (one group each). ε_a = 1 (ε = 10, q ≈ 0.998, Δ = 10, scale 20,
// λ = 20): the victim moves the utilities of C = 1 and C = 2 by 10.
// Must fail: the same selection with a k-blind Δ = 1 (scale and λ 2), for
// which these neighbours are balanced on D (u = −2 at C = 1 and 2) and
// decided on D′.
func TestAuditAutoSelection(t *testing.T) {
	t.Parallel()
	cfg := audit.Config{N: 10000}
	var groups []string
	for g := 0; g < 10; g++ {
		groups = append(groups, fmt.Sprint("g", g))
	}
	p := mustPlan(t, Spec{MaxGroups: 10, MaxRows: AutoMaxRows, AutoRows: true, Domain: groups, Epsilon: 10,
		Measures: []Measure{{Kind: Count}}})
	// q = 1 − √2·10/(9·1000) ≈ 0.9984: targets round(q·40) = 40, round(q·50) = 50.
	if p.EpsAuto != 1 || p.AutoScale() != 20 || p.AutoSensitivity() != 10 || Target(p.AutoQuantile(), 40) != 40 || Target(p.AutoQuantile(), 50) != 50 {
		t.Fatalf("ε_a %v scale %v q %v", p.EpsAuto, p.AutoScale(), p.AutoQuantile())
	}
	fill := func(side int) *Accumulator {
		a := p.Accumulator()
		one := []float64{1}
		for i := 0; i < 40; i++ {
			for r := 0; r < 1+i/38; r++ {
				a.Row(fmt.Sprint(i), groups[i%len(groups)], one)
			}
		}
		if side == 1 {
			for _, g := range groups {
				a.Row("victim", g, one)
				a.Row("victim", g, one)
			}
		}
		return a
	}
	audit.RequirePass(t, func(side int) float64 {
		b, err := fill(side).Bound()
		if err != nil {
			t.Fatal(err)
		}
		return float64(b.MaxRows)
	}, 1, cfg)
	audit.RequireCatch(t, func(side int) float64 {
		a := fill(side)
		if err := a.sampleGroups(); err != nil {
			t.Fatal(err)
		}
		in := a.autoValues()
		u := penalize(Utilities(p.AutoQuantile(), autoCells(autoRowsGrid, in.rows), int64(len(in.rows))), 2/p.EpsAuto)
		j, err := agg.NoisyMax(u, 2/p.EpsAuto) // Δ = 1: blind to k
		if err != nil {
			t.Fatal(err)
		}
		return autoRowsGrid[j]
	}, 1, cfg)
}
