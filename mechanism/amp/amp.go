package amp

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// MaxGaussianDim bounds the number of coordinates of one Gaussian output
// step (the discrete Gaussian sampler's limit).
const MaxGaussianDim = 1 << 20

// Step is the planned output step: everything about it is public.
type Step struct {
	Radius   float64 // r: ‖θ̂ − θ*‖₂ ≤ r, so neighbours' θ̂ are within 2r
	Dim      int     // number of released coordinates
	Epsilon  float64 // ε₂ of the step
	Delta    float64 // δ₂ of the step (0 for Laplace)
	Gaussian bool    // discrete Gaussian (δ₂ > 0) or discrete Laplace (pure ε)
	Scale    float64 // Gaussian σ, or Laplace scale per coordinate
}

// NewGaussian plans a Gaussian output step: σ is the smallest value (to
// 10⁻¹³ relative, rounded up) for which a Gaussian release of ℓ₂
// sensitivity 2r is (ε, δ)-DP by the zCDP conversion the accountant uses
// (GaussianSigma).
func NewGaussian(radius float64, dim int, eps, delta float64) (Step, error) {
	if err := checkRadius(radius, dim); err != nil {
		return Step{}, err
	}
	if dim > MaxGaussianDim {
		return Step{}, fmt.Errorf("output step: %d coordinates, more than the Gaussian sampler's %d", dim, MaxGaussianDim)
	}
	sigma, err := GaussianSigma(2*radius, eps, delta)
	if err != nil {
		return Step{}, fmt.Errorf("output step: %w", err)
	}
	if 2*radius/sigma < noise.GaussianMinRatio {
		return Step{}, fmt.Errorf("output step: noise multiplier %v exceeds what the Gaussian sampler supports", sigma/(2*radius))
	}
	if probe := []float64{0}; noise.AddGaussianVec(probe[:0], sigma) != nil {
		return Step{}, fmt.Errorf("output step: Gaussian σ = %v outside the sampler's range", sigma)
	}
	return Step{Radius: radius, Dim: dim, Epsilon: eps, Delta: delta, Gaussian: true, Scale: sigma}, nil
}

// NewLaplace plans a pure-ε output step: Laplace noise per coordinate with
// scale √dim·2r/ε, because neighbours' θ̂ differ by at most 2r in ℓ₂ and so
// by at most √dim·2r in ℓ₁.
func NewLaplace(radius float64, dim int, eps float64) (Step, error) {
	if err := checkRadius(radius, dim); err != nil {
		return Step{}, err
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return Step{}, fmt.Errorf("output step: epsilon must be positive and finite, got %v", eps)
	}
	if eps < noise.LaplaceMinEpsilon(dim) {
		return Step{}, fmt.Errorf("output step: epsilon %v is below the smallest the Laplace sampler supports for %d coordinates", eps, dim)
	}
	scale := math.Sqrt(float64(dim)) * 2 * radius / eps
	if noise.AddLaplaceVec(nil, scale) != nil {
		return Step{}, fmt.Errorf("output step: Laplace scale %v outside the sampler's range", scale)
	}
	return Step{Radius: radius, Dim: dim, Epsilon: eps, Gaussian: false, Scale: scale}, nil
}

func checkRadius(radius float64, dim int) error {
	if !(radius > 0) || math.IsInf(radius, 0) {
		return fmt.Errorf("output step: radius must be positive and finite, got %v", radius)
	}
	if dim < 1 {
		return fmt.Errorf("output step: %d coordinates", dim)
	}
	return nil
}

// Event is the step's own budget event: Gaussian{ε₂, δ₂, 2r/σ} or
// Laplace{ε₂}.
func (s Step) Event() budget.Event {
	if s.Gaussian {
		return budget.Event{Kind: budget.Gaussian, Epsilon: s.Epsilon, Delta: s.Delta, Ratio: 2 * s.Radius / s.Scale}
	}
	return budget.Event{Kind: budget.Laplace, Epsilon: s.Epsilon}
}

// Apply releases x: every coordinate snapped to the sampler's public grid
// plus discrete noise, in place. Its errors depend only on the public plan
// and on x having the planned length and finite entries; the callers'
// a-priori bounds make x finite.
func (s Step) Apply(x []float64) error {
	if len(x) != s.Dim {
		return fmt.Errorf("output step: %d coordinates, planned %d", len(x), s.Dim)
	}
	var err error
	if s.Gaussian {
		err = noise.AddGaussianVec(x, s.Scale)
	} else {
		err = noise.AddLaplaceVec(x, s.Scale)
	}
	if err != nil {
		return fmt.Errorf("output step: %w", err)
	}
	return nil
}

// GaussianSigma is mechanism.GaussianSigma, the one discrete-Gaussian
// calibration shared by every mechanism: the smallest σ for which adding
// discrete Gaussian noise to a query of ℓ₂ sensitivity Δ₂ is (ε, δ)-DP by
// budget.GaussianDelta (the CKS zCDP conversion the accountant validates
// Gaussian events with).
func GaussianSigma(delta2, eps, delta float64) (float64, error) {
	return mechanism.GaussianSigma(delta2, eps, delta)
}

// ChiSquareUpper returns k + 2√(k·x) + 2x, which a χ²_k variable exceeds
// with probability at most e^(−x) (Laurent & Massart 2000, Lemma 1).
func ChiSquareUpper(k int, x float64) float64 {
	kf := float64(k)
	return kf + 2*math.Sqrt(kf*x) + 2*x
}

// ChiSquareLower returns k − 2√(k·x) (possibly negative), below which a
// χ²_k variable falls with probability at most e^(−x) (Laurent & Massart).
func ChiSquareLower(k int, x float64) float64 {
	kf := float64(k)
	return kf - 2*math.Sqrt(kf*x)
}

// TailLevel returns the x for which the typical-region tails of the
// mechanisms, each at most e^(−x), are negligible even after the (1 + e^ε)
// factor of the coupling argument: e^(−x) = 2⁻¹⁰⁰⁰·e^(−ε).
func TailLevel(eps float64) float64 {
	return 1000*math.Ln2 + eps
}
