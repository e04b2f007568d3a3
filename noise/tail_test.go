package noise

import (
	"math"
	"testing"
)

// TestLaplaceTailMatchesSampler: the exact tail formula describes the noise
// AddLaplace draws (checked at tail probabilities large enough to sample),
// and the threshold for p has a sampled tail within a few standard errors of
// p; a threshold computed from the continuous Laplace is off (must-fail
// direction checked exactly in mechanism/agg).
func TestLaplaceTailMatchesSampler(t *testing.T) {
	const n = 50000
	for _, c := range []struct{ scale, p float64 }{{1, 0.3}, {3, 0.05}, {0x1p-30, 0.1}} {
		thr, err := LaplaceTailThreshold(c.scale, c.p)
		if err != nil {
			t.Fatal(err)
		}
		exact := LaplaceTail(c.scale, thr)
		if exact > c.p {
			t.Fatalf("scale %v p %v: tail at threshold %v is %v", c.scale, c.p, thr, exact)
		}
		hits := 0
		for i := 0; i < n; i++ {
			z, err := AddLaplace(0, c.scale)
			if err != nil {
				t.Fatal(err)
			}
			if z > thr {
				hits++
			}
		}
		se := math.Sqrt(exact * (1 - exact) / n)
		requireWithin(t, "sampled tail", float64(hits)/n, exact, se, 5)
		// Negative thresholds: P[Z > −t] = 1 − P[Z > t − g] by symmetry.
		if got, want := LaplaceTail(c.scale, -thr), 1-LaplaceTail(c.scale, thr-laplaceGridOf(c.scale)); math.Abs(got-want) > 1e-12 {
			t.Fatalf("negative tail %v vs %v", got, want)
		}
	}
	for _, bad := range []float64{0, 0.5, -1, math.NaN()} {
		if _, err := LaplaceTailThreshold(1, bad); err == nil {
			t.Fatalf("p = %v accepted", bad)
		}
	}
}

func laplaceGridOf(scale float64) float64 {
	g, _ := laplaceLambda(scale)
	return g
}
