package lsq

import (
	"fmt"

	"gonum.org/v1/gonum/mathext"

	"github.com/dpsql/dpsql/mechanism/amp"
)

// gaussianSigma returns the smallest σ (to about 10⁻¹³ relative, rounded
// up) for which adding discrete Gaussian noise of scale σ to a query of ℓ₂
// sensitivity Δ₂ is (ε, δ)-DP. It is amp.GaussianSigma: bisection on
// budget.GaussianDelta(ε, Δ₂/σ) ≤ δ(1 − 10⁻⁹), the zCDP→(ε, δ) conversion
// of Canonne, Kamath & Steinke (2020, Prop. 12) for ρ = (Δ₂/σ)²/2, which is
// proved for the discrete Gaussian that package noise samples (CKS Thm. 4)
// and is the function the accountant validates Gaussian events with. (The
// analytic Gaussian of Balle & Wang is proved only for the continuous
// Gaussian and is not used.) Valid for every ε > 0, unlike the classical
// Δ₂·√(2 ln(1.25/δ))/ε, which needs ε < 1.
func gaussianSigma(delta2, eps, delta float64) (float64, error) {
	return amp.GaussianSigma(delta2, eps, delta)
}

// chi2Upper returns t² with P(χ²_k > t²) ≤ p: the upper p-quantile of the
// χ² distribution with k degrees of freedom, by bisection on the regularised
// upper incomplete gamma function, rounded up (relative 1e-9 margin, and the
// bisection keeps the endpoint whose tail is ≤ p).
func chi2Upper(k int, p float64) (float64, error) {
	if k < 1 {
		return 0, fmt.Errorf("chi-square quantile: need k ≥ 1, got %d", k)
	}
	if !(p > 0 && p < 1) {
		return 0, fmt.Errorf("chi-square quantile: need p in (0, 1), got %v", p)
	}
	tail := func(s float64) float64 { return mathext.GammaIncRegComp(float64(k)/2, s/2) }
	target := p * (1 - 1e-9)
	hi := float64(k) + 1
	for tail(hi) > target {
		hi *= 2
	}
	lo := 0.0
	for hi-lo > 1e-12*hi {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if tail(mid) <= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// unitRoundoff is u = 2⁻⁵³ for float64.
const unitRoundoff = 0x1p-53

// gammaN is Higham's γ_k = k·u/(1 − k·u), the relative error bound of a
// k-term sum of products in floating point, in any order.
func gammaN(k int) float64 {
	ku := float64(k) * unitRoundoff
	return ku / (1 - ku)
}
