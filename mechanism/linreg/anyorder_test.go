package linreg

import (
	"math"
	"testing"
)

// TestAnyOrderSumsScale: a plan for backend sums (AnyOrderSums) uses the
// rounding depth n + 8 in place of the blocked depth, and nothing else
// changes: the noise scales are exactly those of the calibration at that
// depth, the charge is the same event, and the inflation matches the
// closed form of planGaussian/planLaplace.
func TestAnyOrderSumsScale(t *testing.T) {
	for _, n := range []int{1000, 1_000_000, 10_000_000} {
		for _, delta := range []float64{1e-6, 0} {
			cfg := Config{Epsilon: 1, Delta: delta, N: n, Features: []string{"a", "b", "c"},
				Lo: []float64{-1, 0, -2}, Hi: []float64{1, 4, 2}, Label: "y", LabelLo: -1, LabelHi: 1,
				Bounds: BoundsPublic} // pushdown plans are public-bounds plans
			emb, err := Plan(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.AnyOrderSums = true
			any, err := Plan(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := any.depth(), float64(n)+8; got != max(want, depth(n, any.workers)) {
				t.Fatalf("n=%d: depth %v, want %v", n, got, want)
			}
			if len(emb.Events()) != len(any.Events()) {
				t.Fatalf("n=%d: events differ", n)
			}
			for i := range emb.Events() {
				if emb.Events()[i] != any.Events()[i] {
					t.Fatalf("n=%d δ=%v: the charge changed: %+v vs %+v", n, delta, emb.Events()[i], any.Events()[i])
				}
			}
			tA, tc := roundingBounds(n, float64(n)+8)
			g := gamma(float64(n) + 10)
			if math.Abs(tA-g*float64(n)*kappaHat*kappaHat) > 1e-300 || math.Abs(tc-g*float64(n)*kappaHat) > 1e-300 {
				t.Fatalf("n=%d: t_A %v, t_c %v, want γ_{n+10}·n·κ̂² = %v", n, tA, tc, g*float64(n)*kappaHat*kappaHat)
			}
			if delta > 0 {
				g0, _ := planGaussian(1, delta, n, any.f, depth(n, any.workers), Kappa)
				g1, _ := planGaussian(1, delta, n, any.f, float64(n)+8, Kappa)
				if any.gauss.sigmaA != g1.sigmaA || emb.gauss.sigmaA != g0.sigmaA {
					t.Fatalf("n=%d: σ_A %v / %v, want %v / %v", n, emb.gauss.sigmaA, any.gauss.sigmaA, g0.sigmaA, g1.sigmaA)
				}
				// σ ∝ exact + 2√(t_A² + κ t_c² + e t_λ²): the ratio is the
				// ratio of those sums.
				j := jointA(Kappa)
				e := LambdaShare / (1 - LambdaShare) * j
				slack := func(dep float64) float64 {
					tA, tc := roundingBounds(n, dep)
					tl := 2*tA + rayleighRounding(n, any.f)
					return kappaHat*kappaHat*math.Sqrt(j+e) + 2*math.Sqrt(tA*tA+Kappa*tc*tc+e*tl*tl)
				}
				want := slack(float64(n)+8) / slack(depth(n, any.workers))
				if got := any.gauss.sigmaA / emb.gauss.sigmaA; math.Abs(got-want) > 1e-12 {
					t.Fatalf("n=%d: inflation %v, want %v", n, got, want)
				}
				t.Logf("n=%d δ=%v: σ_A %v → %v (×%.6f)", n, delta, emb.gauss.sigmaA, any.gauss.sigmaA, want)
			} else {
				l1, _ := planLaplace(1, n, any.f, float64(n)+8)
				if any.lap.scaleA != l1.scaleA || any.lap.scaleC != l1.scaleC || !(any.lap.scaleA >= emb.lap.scaleA) {
					t.Fatalf("n=%d: Laplace scales %v %v, want %v %v", n, any.lap.scaleA, any.lap.scaleC, l1.scaleA, l1.scaleC)
				}
				t.Logf("n=%d δ=0: b_A %v → %v", n, emb.lap.scaleA, any.lap.scaleA)
			}
		}
	}
}

// TestAnyOrderSumBound: the per-entry bound is γ_{n+10}·Σ|t| plus the
// underflow allowance, and it holds for a worst-case order on a table
// whose naive left-to-right sum loses the most (a large term first, then
// many terms below half an ulp of it).
func TestAnyOrderSumBound(t *testing.T) {
	n := 100_000
	terms := make([]float64, n)
	terms[0] = 1
	for i := 1; i < n; i++ {
		terms[i] = 0x1p-54 * 1.5 // each addition to 1 rounds away 1.5·2⁻⁵⁴
	}
	var s, abs float64
	for _, v := range terms {
		s += v
		abs += math.Abs(v)
	}
	exact := 1 + float64(n-1)*0x1p-54*1.5 // exact in float64
	err := math.Abs(s - exact)
	if !(err > 0) {
		t.Fatalf("the adversarial order lost nothing (%v): the test data is wrong", s)
	}
	if b := AnyOrderSumBound(n, abs); !(err <= b) {
		t.Fatalf("error %v exceeds the bound %v", err, b)
	} else {
		t.Logf("n=%d: left-to-right error %v ≤ bound %v", n, err, b)
	}
}
