package lsq

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"

	"github.com/dpsql/dpsql/budget"
)

// analyticGaussianSigma returns the smallest σ (to about 1e-12 relative,
// rounded up) for which adding N(0, σ²I) to a query of ℓ₂ sensitivity Δ₂ is
// (ε, δ)-DP, by bisection on the exact condition δ(σ/Δ₂) ≤ δ of Balle &
// Wang (2018, Theorem 8),
//
//	δ(ε; r) = Φ(r/2 − ε/r) − e^ε·Φ(−r/2 − ε/r),  r = Δ₂/σ,
//
// evaluated by budget.GaussianDelta, the same function the accountant uses
// to validate Gaussian events. Valid for every ε > 0, unlike the classical
// Δ₂·√(2 ln(1.25/δ))/ε, which needs ε < 1. The target is δ·(1 − 10⁻⁹) so
// that rounding in evaluating Φ cannot tip the result below the claim.
func analyticGaussianSigma(delta2, eps, delta float64) (float64, error) {
	if !(delta2 > 0) || math.IsInf(delta2, 0) {
		return 0, fmt.Errorf("analytic Gaussian: sensitivity must be positive and finite, got %v", delta2)
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, fmt.Errorf("analytic Gaussian: epsilon must be positive and finite, got %v", eps)
	}
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("analytic Gaussian: delta must be in (0, 1), got %v", delta)
	}
	target := delta * (1 - 1e-9)
	ok := func(r float64) bool { return budget.GaussianDelta(eps, 1/r) <= target }
	hi := 1.0
	for !ok(hi) {
		hi *= 2
		if hi > 1e300 {
			return 0, errors.New("analytic Gaussian: no finite sigma found")
		}
	}
	lo := hi / 2
	for ok(lo) {
		lo /= 2
		if lo < 1e-300 {
			return 0, errors.New("analytic Gaussian: sigma underflows")
		}
	}
	for hi/lo-1 > 1e-13 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi * delta2 * (1 + 1e-12), nil
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
