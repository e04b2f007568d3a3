package linreg

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/noise"
)

// Private preconditioning (docs/mechanisms/linreg.md §12).
//
// AdaSSP's noise on XᵀX is isotropic, and ‖x‖ ≤ 1 caps the trace of XᵀX at
// n. On correlated features a few large eigenvalues (shared factors) take
// most of that trace and push the rest below the noise edge E, where the
// eigenvalue floor loses them. A first Gaussian release of the feature
// block of XᵀX (a share PrecondShare of the Gaussian stage's zCDP budget)
// gives a preconditioner M = V diag(min(1, √(τ/w_k)))Vᵀ / s that flattens
// those spikes (τ the median noisy eigenvalue plus PrecondLift times the
// first stage's noise edge, s restoring the mean square row norm); the
// rows are mapped x_f ↦ M x_f, norm-clipped back into the unit ball, and
// AdaSSP runs on them with the rest. M is a function of a released value,
// so the second stage is an adaptively chosen Gaussian release whose
// sensitivities (§3) hold for every M: they only use ‖x‖ ≤ 1.

// Public constants of the preconditioning.
const (
	// PrecondShare is the share of the Gaussian stage's r² (zCDP ρ) spent
	// on the first-stage covariance.
	PrecondShare = 0.1
	// PrecondLift sets the flattening level τ = median noisy eigenvalue +
	// PrecondLift·E₁ (E₁ the first stage's noise-norm bound): 0 flattened
	// noise on flat spectra, 1 left some spikes (§12 table).
	PrecondLift = 0.5
	// PrecondMinFeatures is the smallest d that is preconditioned (the
	// measured range is d ∈ {10, 50}, where it was never worse).
	PrecondMinFeatures = 10
)

// precondPlan is the first-stage release: the feature block of XᵀX (upper
// triangle, off-diagonal ×√2) with discrete Gaussian noise σ.
type precondPlan struct {
	sigma, ratio float64
	// edge is PrecondLift·E₁, E₁ = σ(√(2d) + √(2 ln 1/ρ)) the (1 − ρ)
	// bound on the spectral norm of the first stage's noise (§6's rule).
	edge float64
}

// planPrecond calibrates the first stage to ratio r: the feature block of
// ΔA = xxᵀ − x′x′ᵀ has Frobenius norm ≤ √2·κ̂² for computed rows with
// ‖x‖ ≤ κ̂ (the block of a matrix is no larger), and two computed tables
// differ from the exact ones by at most t_A each (§5).
func planPrecond(r float64, n, d int, dep float64) (precondPlan, error) {
	tA, _ := roundingBounds(n, dep)
	p := precondPlan{sigma: (math.Sqrt2*kappaHat*kappaHat + 2*tA) / r, ratio: r}
	p.edge = PrecondLift * p.sigma * (math.Sqrt(2*float64(d)) + math.Sqrt(2*math.Log(1/Failure)))
	if err := noise.AddGaussianVec(nil, p.sigma); err != nil {
		return precondPlan{}, err
	}
	return p, nil
}

// packFeat writes the feature block (rows and columns 0..d−1) of the F×F
// matrix a: upper triangle, off-diagonal entries ×√2, so that the vector's
// ℓ₂ norm is the block's Frobenius norm.
func packFeat(a []float64, f int) []float64 {
	d := f - 1
	v := make([]float64, 0, d*(d+1)/2)
	for j := 0; j < d; j++ {
		for k := j; k < d; k++ {
			if j == k {
				v = append(v, a[j*f+k])
			} else {
				v = append(v, math.Sqrt2*a[j*f+k])
			}
		}
	}
	return v
}

// preconditioner returns M (d×d, row-major) from the released feature
// block v: with τ = median eigenvalue + edge (the noise's spectral bound:
// a flat spectrum stays untouched), eigenvalues w_k above τ are scaled by
// √(τ/w_k), then everything by 1/s with s² = Σ p_k² w_k⁺ / Σ w_k⁺ (the mean
// square norm of the rows is kept). A post-processing of a released value;
// if the eigensolver fails or the spectrum is not positive, M = I.
func preconditioner(v []float64, d int, edge float64) []float64 {
	m := make([]float64, d*d)
	for j := 0; j < d; j++ {
		m[j*d+j] = 1
	}
	s := mat.NewSymDense(d, nil)
	i := 0
	for j := 0; j < d; j++ {
		for k := j; k < d; k++ {
			if j == k {
				s.SetSym(j, k, v[i])
			} else {
				s.SetSym(j, k, v[i]/math.Sqrt2)
			}
			i++
		}
	}
	var es mat.EigenSym
	if !es.Factorize(s, true) {
		return m
	}
	w := es.Values(nil)
	sorted := append([]float64(nil), w...)
	sort.Float64s(sorted)
	tau := sorted[d/2] + edge
	if !(tau > 0) {
		return m
	}
	p := make([]float64, d)
	var num, den float64
	for k, wk := range w {
		p[k] = 1
		if wk > tau {
			p[k] = math.Sqrt(tau / wk)
		}
		wp := math.Max(wk, 0)
		num += p[k] * p[k] * wp
		den += wp
	}
	scale := 1 / math.Sqrt(num/den)
	if math.IsNaN(scale) || math.IsInf(scale, 0) {
		return m
	}
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	for j := 0; j < d; j++ {
		for k := 0; k < d; k++ {
			var sum float64
			for c := 0; c < d; c++ {
				sum += vecs.At(j, c) * p[c] * vecs.At(k, c)
			}
			m[j*d+k] = sum * scale
		}
	}
	for _, x := range m {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			clear(m)
			for j := 0; j < d; j++ {
				m[j*d+j] = 1
			}
			return m
		}
	}
	return m
}

// releasePrecond performs the first stage on the clipped rows' statistics
// and returns M.
func (t *Trainer) releasePrecond(st stats) ([]float64, error) {
	v := packFeat(st.a, t.f)
	if err := addGaussianFeat(v, t.pre.sigma); err != nil {
		return nil, err
	}
	return preconditioner(v, t.f-1, t.pre.edge), nil
}

// addGaussianFeat is the first stage's noise: the discrete Gaussian on
// its own grid, as each AdaSSP release (§3.4 composes four such calls).
func addGaussianFeat(v []float64, sigma float64) error {
	return noise.AddGaussianVec(v, sigma)
}

// usePrecond is the public rule for a private-bounds plan with one zCDP
// event: precondition from PrecondMinFeatures features on.
func usePrecond(d int) bool { return d >= PrecondMinFeatures }
