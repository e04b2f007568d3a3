package noise

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// TestStandardNormalGridAndLaw checks that coupled normals lie on the 2⁻⁴⁰
// grid and follow N(0, 1) (KS, variance).
func TestStandardNormalGridAndLaw(t *testing.T) {
	const n = 40000
	x := StandardNormalVec(n)
	for _, v := range x {
		if k := math.Ldexp(v, CoupledGridBits); k != math.Trunc(k) {
			t.Fatalf("%v is not a multiple of 2⁻⁴⁰", v)
		}
	}
	requireKS(t, "coupled normal", x, normalCDF(1))
	_, v := meanVar(x)
	requireWithin(t, "coupled normal variance", v, 1, math.Sqrt(2.0/n), 5)
	if s := StandardNormal(); math.IsNaN(s) || math.IsInf(s, 0) {
		t.Fatalf("StandardNormal = %v", s)
	}
}

// TestChiDistribution checks Chi(ν) against the χ_ν law (KS on x² against
// the χ²_ν CDF) for small, moderate and large ν.
func TestChiDistribution(t *testing.T) {
	for _, nu := range []int{2, 64, 1000, 1 << 24} {
		const n = 6000
		x := make([]float64, n)
		for i := range x {
			x[i] = Chi(nu)
		}
		cdf := func(v float64) float64 {
			if v <= 0 {
				return 0
			}
			return mathext.GammaIncReg(float64(nu)/2, v*v/2)
		}
		requireKS(t, "chi", x, cdf)
	}
}

// TestChiAcceptanceEvaluation checks the float64 evaluation of the
// acceptance exponent k(w − log1p w) used by Chi against a series computed
// with more care, on the typical region |n| ≤ 38, x ≥ e^(−1.5)√ν: the
// absolute error stays below 12u·μ·|n| + 4u, the bound the constant
// CoupledChiRatio is derived from.
func TestChiAcceptanceEvaluation(t *testing.T) {
	const u = 0x1p-53
	for _, nu := range []int{MinChiDegrees, 1000, 1 << 20, MaxChiDegrees} {
		k := float64(nu - 1)
		mu := math.Sqrt(k)
		for n := -38.0; n <= 38; n += 0.0137 {
			if mu+n < math.Exp(-1.5)*math.Sqrt(float64(nu)) {
				continue
			}
			w := n / mu
			got := k * math.Max(w-math.Log1p(w), 0)
			want := k * wMinusLog1p(w)
			if err := math.Abs(got - want); err > 12*u*mu*math.Abs(n)+4*u {
				t.Fatalf("ν=%d n=%v: error %v above bound %v", nu, n, err, 12*u*mu*math.Abs(n)+4*u)
			}
		}
	}
}

// wMinusLog1p returns w − log(1 + w) by its series for |w| < 0.1 (all
// terms positive or alternating with decreasing size, summed from the
// smallest) and by the direct form elsewhere, where there is no
// cancellation worth the name.
func wMinusLog1p(w float64) float64 {
	if math.Abs(w) >= 0.1 {
		return w - math.Log1p(w)
	}
	// w²/2 − w³/3 + w⁴/4 − …
	var s float64
	for j := 60; j >= 2; j-- {
		term := math.Pow(w, float64(j)) / float64(j)
		if j%2 == 1 {
			term = -term
		}
		s += term
	}
	return s
}

// TestBernoulliFloat checks the exact Bernoulli trial on a float
// probability: the edge cases and the frequency at p = 0.3 and p = 2⁻³.
func TestBernoulliFloat(t *testing.T) {
	if bernoulliFloat(0) || bernoulliFloat(-1) || bernoulliFloat(math.NaN()) || !bernoulliFloat(1) || !bernoulliFloat(2) {
		t.Fatal("edge cases")
	}
	const n = 100000
	for _, p := range []float64{0.3, 0x1p-3, 0x1p-40} {
		c := 0
		for i := 0; i < n; i++ {
			if bernoulliFloat(p) {
				c++
			}
		}
		requireWithin(t, "bernoulliFloat", float64(c)/n, p, math.Sqrt(p*(1-p)/n)+1e-12, 5)
	}
}

// TestChiTail checks the tail bound's values at the edges of the range.
func TestChiTail(t *testing.T) {
	if v := ChiTail(MinChiDegrees); !(v > 0 && v < 1e-18) {
		t.Fatalf("ChiTail(64) = %v", v)
	}
	if v := ChiTail(100000); v != 2*CoupledNormalTail {
		t.Fatalf("ChiTail(10⁵) = %v, want the normal tail", v)
	}
}

// TestPow2GaussianExactPMF checks the big.Int-free sampler against the
// exact pmf of N_ℤ(0, s²) for s = 2^k, k ∈ {1, 3}, by a χ² test on the
// values within 4s (tails pooled), and against newDiscreteGaussian's
// variance for k = 40.
func TestPow2GaussianExactPMF(t *testing.T) {
	for _, k := range []uint{1, 3} {
		s := float64(uint64(1) << k)
		lim := int64(4 * s)
		w := func(z int64) float64 { return math.Exp(-float64(z*z) / (2 * s * s)) }
		var norm float64
		for z := -int64(40 * s); z <= int64(40*s); z++ {
			norm += w(z)
		}
		const n = 200000
		counts := map[int64]int{}
		r := pow2Gaussian{k: k}
		for i := 0; i < n; i++ {
			z := r.sample()
			if z > lim {
				z = lim + 1
			} else if z < -lim {
				z = -lim - 1
			}
			counts[z]++
		}
		var chi2 float64
		cells := 0
		for z := -lim - 1; z <= lim+1; z++ {
			var p float64
			switch {
			case z == lim+1 || z == -lim-1:
				for y := lim + 1; y <= int64(40*s); y++ {
					p += w(y) / norm
				}
			default:
				p = w(z) / norm
			}
			e := p * n
			d := float64(counts[z]) - e
			chi2 += d * d / e
			cells++
		}
		// χ² with cells−1 degrees of freedom at significance 10⁻⁶: below
		// dof + 10·√(2·dof) + 30 for these sizes.
		dof := float64(cells - 1)
		if crit := dof + 10*math.Sqrt(2*dof) + 30; chi2 > crit {
			t.Fatalf("k=%d: χ² = %v above %v (dof %v)", k, chi2, crit, dof)
		}
		t.Logf("k=%d: χ² = %.1f, dof %v", k, chi2, dof)
	}
	x := StandardNormalVec(20000)
	_, v := meanVar(x)
	requireWithin(t, "pow2 normal variance", v, 1, math.Sqrt(2.0/20000), 5)
}
