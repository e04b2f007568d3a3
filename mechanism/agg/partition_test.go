package agg

import (
	"math"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/noise"
)

func TestSelectThresholdExact(t *testing.T) {
	p, err := NewSelect([]Bound{{0, 10}}, 2, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	// ε_c = 1, b = 2, τ ≈ 1 + 2·ln(1/(2·10⁻⁶)) (the continuous formula, up
	// to the inflation 2⁻¹⁹ of the scale and the grid).
	cont := 1 + 2*math.Log(5e5)
	if p.CountScale() != 2 || math.Abs(p.Threshold()-cont) > 1e-3 {
		t.Fatalf("scale %v threshold %v (continuous %v)", p.CountScale(), p.Threshold(), cont)
	}
	for _, c := range []struct{ eps, delta float64 }{{2, 1e-6}, {0.1, 1e-5}, {1, 1e-9}, {10, 0.01}, {1e-3, 1e-7}} {
		q, err := NewSelect(nil, c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		b, tau := q.CountScale(), q.Threshold()
		// A partition with one row is released with probability at most δ,
		// computed exactly for the sampled distribution …
		if got := noise.LaplaceTail(b, tau-1); got > c.delta {
			t.Fatalf("ε %v δ %v: singleton released with probability %v > δ", c.eps, c.delta, got)
		}
		// … and τ is the smallest such point (just below it the tail is > δ).
		if got := noise.LaplaceTail(b, tau-1-1e-9*b); got <= c.delta {
			t.Fatalf("ε %v δ %v: threshold %v not minimal (tail %v just below)", c.eps, c.delta, tau, got)
		}
		// Must-fail: the continuous formula overspends δ (issue 25).
		old := b * math.Log(1/(2*c.delta))
		if got := noise.LaplaceTail(b, old); !(got > c.delta) {
			t.Fatalf("ε %v δ %v: the continuous threshold's tail %v is not above δ: the exact-tail check cannot catch it", c.eps, c.delta, got)
		} else {
			t.Logf("ε %v δ %v: continuous τ releases a singleton with probability δ·(1 + %.3g); exact τ with δ·%.9f", c.eps, c.delta, got/c.delta-1, noise.LaplaceTail(b, tau-1)/c.delta)
		}
	}
	ev := p.Events()
	if len(ev) != 2 || ev[0].Delta != 1e-6 || ev[0].Epsilon+ev[1].Epsilon != 2 {
		t.Fatalf("events %v", ev)
	}
	for _, d := range []float64{0, 1, -1, math.NaN()} {
		if _, err := NewSelect(nil, 1, d); err == nil {
			t.Fatalf("δ = %v accepted", d)
		}
	}
}

// TestSelectUtility: large partitions are kept with accurate aggregates,
// singletons are dropped, the output is in key order.
func TestSelectUtility(t *testing.T) {
	p, err := NewSelect([]Bound{{0, 10}}, 2, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	a := p.Accumulator()
	for i := 0; i < 30000; i++ {
		a.Row([]string{"c", "a", "b"}[i%3], true, []float64{float64(i % 3)})
	}
	a.Row("lonely", true, []float64{5})
	a.Row("", false, []float64{5})
	r, err := a.Release()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Keys) != 3 || r.Keys[0] != "a" || r.Keys[1] != "b" || r.Keys[2] != "c" {
		t.Fatalf("released keys %v", r.Keys)
	}
	for g, want := range []float64{1, 2, 0} {
		if math.Abs(r.Count[g]-10000) > 100 || math.Abs(r.Avg[0][g]-want) > 0.05 {
			t.Fatalf("partition %s: count %v avg %v", r.Keys[g], r.Count[g], r.Avg[0][g])
		}
	}
}

// selectSampler: D has the row in a partition of its own ("new"), D′ has it
// in partition "a". The statistic is +∞-like when "new" is released (the
// δ event), else the Laplace privacy loss of the common partitions' counts.
func selectSampler(t *testing.T, p *SelectPlan) audit.Sampler {
	base := []string{"a", "a", "a", "b", "b", "b", "b"}
	return func(side int) float64 {
		a := p.Accumulator()
		for _, k := range base {
			a.Row(k, true, []float64{1}[:len(p.Sums)])
		}
		if side == 0 {
			a.Row("new", true, []float64{1}[:len(p.Sums)])
		} else {
			a.Row("a", true, []float64{1}[:len(p.Sums)])
		}
		r, err := a.Release()
		if err != nil {
			t.Fatal(err)
		}
		stat := 0.0
		for i, k := range r.Keys {
			switch k {
			case "new":
				return 1e9
			case "a":
				// exact counts: 3 (D) vs 4 (D′); rounding is post-processing.
				stat += math.Abs(r.Count[i]-4) - math.Abs(r.Count[i]-3)
			}
		}
		return stat
	}
}

// TestAuditPartitionSelection: pass at the claimed (ε, δ) = (2, 0.02);
// must-fail with a threshold a quarter of the way up (singletons leak far
// more than δ).
func TestAuditPartitionSelection(t *testing.T) {
	t.Parallel() // pure computation; halves the wall time under -race
	cfg := audit.Config{N: 10000, Delta: 0.02}
	p, err := NewSelect(nil, 2, 0.02)
	if err != nil {
		t.Fatal(err)
	}
	audit.RequirePass(t, selectSampler(t, p), 2, cfg)
	broken := &brokenSelect{p}
	audit.RequireCatch(t, broken.sampler(t), 2, cfg)
}

// brokenSelect releases every partition whose noisy count exceeds 1 + b·ln(1/(2δ))/4.
type brokenSelect struct{ p *SelectPlan }

func (b *brokenSelect) sampler(t *testing.T) audit.Sampler {
	weak := *b.p
	weak.tau = 1 + (b.p.tau-1)/4
	return selectSampler(t, &weak)
}
