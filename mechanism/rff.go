package mechanism

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/noise"
)

// MaxRFFDim bounds d̂ (the number of random frequencies) so that a model and
// its training memory stay reasonable.
const MaxRFFDim = 16384

// RFF is the random Fourier feature map of Rahimi & Recht (2008) as used by
// PRIVATESVM (Rubinstein et al., eq. 4.1):
//
//	φ̂(x) = d̂^(−1/2) [cos⟨ρ₁,x⟩, sin⟨ρ₁,x⟩, …, cos⟨ρ_d̂,x⟩, sin⟨ρ_d̂,x⟩]
//
// with d̂ frequencies ρᵢ drawn from the Fourier transform p of a
// translation-invariant kernel. ‖φ̂(x)‖₂ = 1 for every x, so κ = 1. The
// frequencies are drawn without looking at the data (crypto/rand) and are
// released with the model.
type RFF struct {
	Kernel string      `json:"kernel"`
	Gamma  float64     `json:"gamma"`
	Omega  [][]float64 `json:"omega"` // d̂ × d frequencies ρᵢ
}

// NewRFF draws d̂ = dim frequencies for input dimension d.
//
// Kernels (γ > 0 is the bandwidth; Table 1 of Rubinstein et al. with γ = 1,
// normalised so that k(x, x) = 1):
//
//	rbf        k = exp(−γ‖x−y‖²₂)         ρ ~ N(0, 2γ·I)
//	laplacian  k = exp(−γ‖x−y‖₁)          ρⱼ ~ Cauchy(0, γ)
//	cauchy     k = Πⱼ 1/(1+γ²(xⱼ−yⱼ)²)   ρⱼ ~ Laplace(0, γ)
//
// (The paper writes the Cauchy kernel as Π 2/(1+Δ²), whose k(x,x) = 2^d; the
// normalised form is what its Fourier pair exp(−‖ω‖₁) actually produces.)
func NewRFF(kernel string, d, dim int, gamma float64) (*RFF, error) {
	if d <= 0 {
		return nil, fmt.Errorf("rff: input dimension must be positive, got %d", d)
	}
	if dim <= 0 || dim > MaxRFFDim {
		return nil, fmt.Errorf("rff: dim must be in [1, %d], got %d", MaxRFFDim, dim)
	}
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		return nil, fmt.Errorf("rff: gamma must be positive and finite, got %v", gamma)
	}
	var draw func() float64
	switch kernel {
	case "rbf":
		s := math.Sqrt(2 * gamma)
		draw = func() float64 { return s * noise.Normal() }
	case "laplacian":
		draw = func() float64 { return gamma * noise.Cauchy() }
	case "cauchy":
		draw = func() float64 { return gamma * noise.LaplaceFloat() }
	default:
		return nil, fmt.Errorf("rff: unknown kernel %q (want rbf, laplacian or cauchy)", kernel)
	}
	om := make([][]float64, dim)
	for i := range om {
		om[i] = make([]float64, d)
		for j := range om[i] {
			om[i][j] = draw()
		}
	}
	return &RFF{Kernel: kernel, Gamma: gamma, Omega: om}, nil
}

// Dim returns F = 2·d̂, the dimension of φ̂(x).
func (r *RFF) Dim() int { return 2 * len(r.Omega) }

// Map writes φ̂(x) into dst (allocated if too short) and returns it.
func (r *RFF) Map(dst, x []float64) []float64 {
	f := r.Dim()
	if cap(dst) < f {
		dst = make([]float64, f)
	}
	dst = dst[:f]
	inv := 1 / math.Sqrt(float64(len(r.Omega)))
	for i, w := range r.Omega {
		var t float64
		for j, v := range x {
			t += w[j] * v
		}
		s, c := math.Sincos(t)
		dst[2*i] = c * inv
		dst[2*i+1] = s * inv
	}
	return dst
}
