package bound

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/mechanism/agg"
)

func mustQuantile(t *testing.T, lo, hi, q, eps float64, k, c int) *Quantile {
	t.Helper()
	m, err := NewQuantile(lo, hi, q, eps, k, c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestQuantileScalesExact: Δ = ⌈C·max(q, 1 − q)⌉ and the scale 2Δ/ε.
func TestQuantileScalesExact(t *testing.T) {
	for _, c := range []struct {
		q     float64
		rows  int
		delta float64
	}{{0.5, 1, 1}, {0.5, 3, 2}, {0.5, 4, 2}, {0.9, 1, 1}, {0.9, 10, 9}, {0.1, 10, 9}, {1, 4, 4}, {0, 4, 4}, {0.3, 5, 4}} {
		m := mustQuantile(t, 0, 100, c.q, 0.5, 1000, c.rows)
		if m.Sensitivity() != c.delta || m.Scale() != 2*c.delta/0.5 {
			t.Fatalf("q=%v C=%d: Δ %v scale %v, want Δ %v scale %v", c.q, c.rows, m.Sensitivity(), m.Scale(), c.delta, 4*c.delta)
		}
	}
	for _, bad := range []struct {
		q    float64
		k, c int
	}{{0.5, 1000, 0}, {0.5, 1000, MaxRowsCap + 1}, {1.5, 1000, 1}, {0.5, 1, 1}} {
		if _, err := NewQuantile(0, 1, bad.q, 1, bad.k, bad.c); err == nil {
			t.Fatalf("%+v accepted", bad)
		}
	}
}

// TestQuantileTargetExact: round(q·n) on the exact product; the float
// product rounds 0.3·5 (= 1.4999…) up to 1.5 and would round to 2.
func TestQuantileTargetExact(t *testing.T) {
	if got := Target(0.3, 5); got != 1 {
		t.Fatalf("Target(0.3, 5) = %v, want 1", got)
	}
	if math.Round(0.3*5) != 2 {
		t.Fatal("the float product no longer shows the trap; pick another pair")
	}
	for _, c := range []struct {
		q    float64
		n    int64
		want float64
	}{{0.5, 3, 2}, {0.5, 0, 0}, {1, 7, 7}, {0, 7, 0}, {0.25, 2, 1}} {
		if got := Target(c.q, c.n); got != c.want {
			t.Fatalf("Target(%v, %d) = %v, want %v", c.q, c.n, got, c.want)
		}
	}
}

// TestQuantileSensitivityAdversarial: adding one person — 1 value, 10,000
// values at the lower bound, at the upper bound, or spread over the range —
// moves every utility by at most Δ, for several q and C and base sizes of
// both parities; the bound is attained, so the test can fail.
func TestQuantileSensitivityAdversarial(t *testing.T) {
	same := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	spread := make([]float64, 10000)
	for i := range spread {
		spread[i] = float64(i%201) / 2
	}
	victims := map[string][]float64{"1 value": {100}, "10,000 at lo": same(10000, -5), "10,000 at hi": same(10000, 1e9), "10,000 spread": spread}
	for _, q := range []float64{0, 0.1, 0.3, 0.5, 0.9, 1} {
		for _, c := range []int{1, 3, 10} {
			m := mustQuantile(t, 0, 100, q, 1, 101, c)
			worst := 0.0
			for base := 100; base < 104; base++ {
				acc := m.Accumulator()
				for i := 0; i < base; i++ {
					acc.Row(fmt.Sprint(i), float64(i%101))
				}
				cells0, n0, err := acc.Cells()
				if err != nil {
					t.Fatal(err)
				}
				u0 := Utilities(q, cells0, n0)
				for vn, vs := range victims {
					for rep := 0; rep < 3; rep++ {
						acc2 := m.Accumulator()
						for i := 0; i < base; i++ {
							acc2.Row(fmt.Sprint(i), float64(i%101))
						}
						for _, v := range vs {
							acc2.Row("victim", v)
						}
						cells1, n1, err := acc2.Cells()
						if err != nil {
							t.Fatal(err)
						}
						if n1-n0 > int64(c) {
							t.Fatalf("%s: the victim kept %d values, C = %d", vn, n1-n0, c)
						}
						for j, u := range Utilities(q, cells1, n1) {
							d := math.Abs(u - u0[j])
							if d > m.Sensitivity() {
								t.Fatalf("q=%v C=%d n=%d, %s: utility %d moved %v > Δ = %v", q, c, base, vn, j, d, m.Sensitivity())
							}
							worst = math.Max(worst, d)
						}
					}
				}
			}
			if worst != m.Sensitivity() {
				t.Fatalf("q=%v C=%d: worst move %v, Δ = %v not attained", q, c, worst, m.Sensitivity())
			}
		}
	}
}

// TestAuditPersonQuantile: Clopper–Pearson audit of the person-level
// median on neighbours differing by a person with 200 values at the top of
// [0, 10] (grid of 11 points; 10 base persons with values 0..9). Pass: the
// mechanism (C = 1, and C = 3 with its Δ = 2). Must fail: the row-level
// DP_QUANTILE (every row counted, Δ = 1 as for replace-one) on these
// person-level neighbours, and C = 10 calibrated with a C-blind Δ = 1.
func TestAuditPersonQuantile(t *testing.T) {
	t.Parallel()
	const eps = 1.0
	cfg := audit.Config{N: 10000}
	victim := make([]float64, 200)
	for i := range victim {
		victim[i] = 10
	}
	fill := func(m *Quantile, side int) *QuantileAccumulator {
		acc := m.Accumulator()
		for i := 0; i < 10; i++ {
			acc.Row(fmt.Sprint(i), float64(i))
		}
		if side == 1 {
			for _, v := range victim {
				acc.Row("victim", v)
			}
		}
		return acc
	}
	sample := func(m *Quantile) audit.Sampler {
		return func(side int) float64 {
			v, err := fill(m, side).Release()
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	audit.RequirePass(t, sample(mustQuantile(t, 0, 10, 0.5, eps, 11, 1)), eps, cfg)
	audit.RequirePass(t, sample(mustQuantile(t, 0, 10, 0.5, eps, 11, 3)), eps, cfg)

	// Row level: agg.Quantile over every row (its n the row count).
	audit.RequireCatch(t, func(side int) float64 {
		m, err := agg.NewQuantile(0, 10, 0.5, eps, 11)
		if err != nil {
			t.Fatal(err)
		}
		acc := m.Accumulator()
		for i := 0; i < 10; i++ {
			acc.Add(float64(i))
		}
		if side == 1 {
			for _, v := range victim {
				acc.Add(v)
			}
		}
		v, err := acc.Release()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}, eps, cfg)

	// C-blind: 10 values per person kept (Δ = 5), noise for Δ = 1 (scale 2/ε).
	m3 := mustQuantile(t, 0, 10, 0.5, eps, 11, 10)
	audit.RequireCatch(t, func(side int) float64 {
		cells, n, err := fill(m3, side).Cells()
		if err != nil {
			t.Fatal(err)
		}
		best, err := agg.NoisyMax(Utilities(0.5, cells, n), 2/eps)
		if err != nil {
			t.Fatal(err)
		}
		return m3.Grid.Point(best)
	}, eps, cfg)
}
