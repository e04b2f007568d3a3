package noise

import (
	"fmt"
	"math"
)

// maxGammaDim bounds the dimension of a Gamma-direction vector (memory, and
// the shape parameter stays far inside float64's exact integers).
const maxGammaDim = 1 << 30

// Gamma returns a draw from the Gamma distribution with shape k and SCALE θ
// (mean k·θ, density ∝ x^(k−1)·exp(−x/θ)). Note that gonum's distuv.Gamma
// is parametrised by the rate β = 1/θ instead. The draw uses the
// Marsaglia–Tsang (2000) method on crypto-backed normal and uniform draws.
func Gamma(shape, scale float64) (float64, error) {
	if math.IsNaN(shape) || math.IsInf(shape, 0) || shape <= 0 {
		return 0, fmt.Errorf("noise: Gamma shape %v must be finite and > 0", shape)
	}
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale <= 0 {
		return 0, fmt.Errorf("noise: Gamma scale %v must be finite and > 0", scale)
	}
	v := standardGamma(shape) * scale
	if math.IsInf(v, 0) {
		return 0, fmt.Errorf("noise: Gamma(%v, %v) draw overflows float64", shape, scale)
	}
	return v, nil
}

// standardGamma draws Gamma(k, 1) by Marsaglia & Tsang, "A simple method for
// generating gamma variables" (2000); for k < 1 it uses
// Gamma(k) = Gamma(k+1)·U^(1/k).
func standardGamma(k float64) float64 {
	if k < 1 {
		return standardGamma(k+1) * math.Pow(UniformOpen(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := Normal()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := UniformOpen()
		x2 := x * x
		// Squeeze first, then the exact log test.
		if u < 1-0.0331*x2*x2 || math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// GammaDirectionScaled returns b ∈ ℝ^dim with density ∝ exp(−‖b‖₂/β):
// ‖b‖₂ ~ Gamma(dim, β) (scale β) and b/‖b‖₂ uniform on the unit sphere,
// drawn as a normalised standard Gaussian vector.
func GammaDirectionScaled(dim int, beta float64) ([]float64, error) {
	if dim < 1 || dim > maxGammaDim {
		return nil, fmt.Errorf("noise: Gamma-direction dimension %d outside [1, %d]", dim, maxGammaDim)
	}
	if math.IsNaN(beta) || math.IsInf(beta, 0) || beta <= 0 {
		return nil, fmt.Errorf("noise: Gamma-direction scale β = %v must be finite and > 0", beta)
	}
	norm, err := Gamma(float64(dim), beta)
	if err != nil {
		return nil, fmt.Errorf("noise: Gamma-direction norm: %w", err)
	}
	b := make([]float64, dim)
	for {
		var sq float64
		for i := range b {
			b[i] = Normal()
			sq += b[i] * b[i]
		}
		if sq > 0 {
			f := norm / math.Sqrt(sq)
			for i := range b {
				b[i] *= f
			}
			return b, nil
		}
	}
}

// GammaDirection returns b ∈ ℝ^dim with density ∝ exp(−(ε/2)‖b‖₂), the noise
// of objective and output perturbation (Chaudhuri et al. 2011; Pathak & Raj
// 2010): ‖b‖₂ ~ Gamma(shape dim, scale 2/ε), direction uniform. A shift of
// ℓ₂ norm at most 2 costs at most ε.
func GammaDirection(dim int, epsilon float64) ([]float64, error) {
	if math.IsNaN(epsilon) || math.IsInf(epsilon, 0) || epsilon <= 0 {
		return nil, fmt.Errorf("noise: Gamma-direction ε = %v must be finite and > 0", epsilon)
	}
	return GammaDirectionScaled(dim, gammaDirectionScale(epsilon))
}

// gammaDirectionScale is the Gamma scale θ = 2/ε of the norm for density
// ∝ exp(−(ε/2)‖b‖₂) (a scale, not the rate ε/2).
func gammaDirectionScale(epsilon float64) float64 {
	return 2 / epsilon
}
