package mechanism

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
)

// GaussianSigma returns the smallest σ (to about 1e-12 relative, rounded up)
// for which the discrete Gaussian of package noise, added to a query of ℓ₂
// sensitivity Δ₂, is (ε, δ)-DP. The condition is budget.GaussianDelta — the
// zCDP→(ε, δ) conversion of Canonne, Kamath & Steinke (2020, Prop. 12),
// which is proved for the discrete Gaussian — the same function the
// accountant uses to validate Gaussian events, so an event built with
// GaussianEvent always validates. The target is δ·(1 − 10⁻⁹) so that
// rounding cannot tip the result below the claim.
func GaussianSigma(delta2, eps, delta float64) (float64, error) {
	if !(delta2 > 0) || math.IsInf(delta2, 0) {
		return 0, fmt.Errorf("gaussian calibration: sensitivity must be positive and finite, got %v", delta2)
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, fmt.Errorf("gaussian calibration: epsilon must be positive and finite, got %v", eps)
	}
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("gaussian calibration: delta must be in (0, 1), got %v", delta)
	}
	target := delta * (1 - 1e-9)
	ok := func(r float64) bool { return budget.GaussianDelta(eps, 1/r) <= target }
	hi := 1.0
	for !ok(hi) {
		hi *= 2
		if hi > 1e300 {
			return 0, errors.New("gaussian calibration: no finite sigma found")
		}
	}
	lo := hi / 2
	for ok(lo) {
		lo /= 2
		if lo < 1e-300 {
			return 0, errors.New("gaussian calibration: sigma underflows")
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

// GaussianEvent is the accountant's record of one discrete-Gaussian release
// of ℓ₂ sensitivity Δ₂ at standard deviation σ, claimed (ε, δ)-DP.
func GaussianEvent(delta2, sigma, eps, delta float64) budget.Event {
	return budget.Event{Kind: budget.Gaussian, Epsilon: eps, Delta: delta, Ratio: delta2 / sigma}
}
