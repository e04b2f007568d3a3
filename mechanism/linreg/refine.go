package linreg

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Noisy refinement of the AdaSSP solution (docs/mechanisms/linreg.md §15).
//
// AdaSSP's eigenvalue floor at E shrinks every direction of XᵀX whose
// eigenvalue is below the noise edge, even where the statistics are exact:
// at n = 10⁴, d = 50, ε = 1 that bias alone costs ≈ 4 % RMSE. A
// preconditioned gradient step on the least-squares objective,
//
//	θ ← θ + η·H⁻¹·(Σᵢ xᵢ·clip(yᵢ − xᵢᵀθ, −τ, τ) + N(0, σ_g²I)),
//
// with H the floored XᵀX̂ of the release (post-processing), moves θ towards
// the (Huber-)least-squares solution along those directions: its fixed point
// does not depend on H, which only sets the speed. Each step is a Gaussian
// release of the clipped-residual gradient, whose replace-one ℓ₂
// sensitivity is 2τ (‖x‖ ≤ 1, |residual| ≤ τ), far below Xᵀy's when the
// residuals of θ are small. θ before the step is a function of earlier
// releases only, so the steps compose adaptively with AdaSSP in zCDP: they
// take a share of the stage's r² and the one event of §11 is unchanged.

// Public constants of the refinement, chosen on §12's training-side
// generators (refine_results_test.go; linreg.md §15).
const (
	// RefineShare is the share of the AdaSSP stage's r² (zCDP ρ) spent on
	// the gradient releases (all steps together). At n = 10⁴, d = 50,
	// ε = 1: 0.2 / 0.3 / 0.5 gave 1.040 / 1.031 / 1.026× OLS, but 0.5 lost
	// 2 % at (10⁴, 50, 0.3).
	RefineShare = 0.3
	// RefineSteps is the number of gradient releases: 1 step left more of
	// the floor's bias (1.035), 3 split the share thinner and were
	// unstable at n·ε = 1000.
	RefineSteps = 2
	// RefineClip is τ, the residual clip on the stage's label scale y″ ∈
	// [−1, 1]: at τ = 1 the gradient is as sensitive as Xᵀy (1.080),
	// 0.35–0.5 tie; the larger keeps the Huber fixed point nearer least
	// squares under skewed label noise.
	RefineClip = 0.5
	// RefineStep is η, the step length along H⁻¹g (0.7 was steadier at
	// n/F ≈ 10–20 but lost 1–4 % where the floor's bias dominates).
	RefineStep = 1.0
	// RefineMinFeatures is the smallest d that is refined (the measured
	// range is d ∈ {10, 50}).
	RefineMinFeatures = 10
	// RefineMinNEps and RefineMinRowsPerDim keep AdaSSP alone where n·ε and
	// n/F are both small: at n·ε = 1000 and n/F ≈ 10–20 the least-squares
	// fixed point overfits and the floor was a useful ridge (unif, d = 50:
	// 1.14 → 1.22× the mean predictor with the steps; syn_r_n1000_d50 at
	// ε = 1 gained 0.952 → 0.937, about one standard error), while every
	// measured cell with n·ε ≥ 3000, or n·ε = 1000 with n/F ≥ 90, gained
	// (linreg.md §15, training-side generators only).
	RefineMinNEps       = 3000.0
	RefineMinRowsPerDim = 50
)

// useRefine is the public rule for a private-bounds plan with one zCDP
// event: refine from RefineMinFeatures features on, when n·ε ≥
// RefineMinNEps or n ≥ RefineMinRowsPerDim·F.
func useRefine(d, n, f int, eps float64) bool {
	if d < RefineMinFeatures {
		return false
	}
	return float64(n)*eps >= RefineMinNEps || n >= RefineMinRowsPerDim*f
}

// refinePlan is the calibration of the gradient releases: steps releases of
// F coordinates, each with discrete Gaussian noise sigma (ratio each, all
// steps together ratio·√steps).
type refinePlan struct {
	steps      int
	tau, step  float64
	sigma      float64
	ratio      float64 // per step
	totalRatio float64 // √steps·ratio
	stage      float64 // the stage ratio r split between AdaSSP and the steps
}

// refineSensitivity bounds the ℓ₂ distance between the computed gradients
// of replace-one neighbours with n rows summed by at most workers
// goroutines: each row adds fl(x̂ᵢ·r̂ᵢ) with ‖x̂ᵢ‖ ≤ κ̂ and r̂ᵢ ∈ [−τ, τ]
// exactly (clip), so a term has norm ≤ κ̂τ(1 + 2u) (1 + u would round to 1)
// and neighbours' exact sums of computed terms differ by at most twice
// that; each worker sums its rows in order and the partial sums are added
// in a fixed order, a chain of at most n + workers additions, so the sum
// errs by at most γ_{n+W+1}·Σᵢ‖termᵢ‖ ≤ γ_{n+W+1}·n·κ̂τ(1 + 2u) on each side
// (Higham, Lemma 3.1), and underflowing products by 2⁻¹⁰⁷⁴ each (counted as
// in roundingBounds).
func refineSensitivity(n, workers int, tau float64) float64 {
	term := kappaHat * tau * (1 + 2*unitRoundoff)
	uf := float64(n+2) * underflowUnit * 2048
	return 2*term + 2*(gamma(float64(n+workers)+1)*float64(n)*term+uf)
}

// planRefine calibrates steps gradient releases of joint ratio r (zCDP:
// each step ratio r/√steps, ½r² in all) for residual clip tau.
func planRefine(r float64, steps int, tau, step float64, n, workers int) (refinePlan, error) {
	if steps < 1 || !(tau > 0) || !(step > 0) {
		return refinePlan{}, fmt.Errorf("refinement needs steps ≥ 1, tau > 0 and step > 0, got %d, %v, %v", steps, tau, step)
	}
	per := r / math.Sqrt(float64(steps)) * (1 - 1e-12)
	if per < noise.GaussianMinRatio {
		return refinePlan{}, fmt.Errorf("refinement ratio %v is below the Gaussian sampler's minimum", per)
	}
	p := refinePlan{steps: steps, tau: tau, step: step, ratio: per, totalRatio: per * math.Sqrt(float64(steps))}
	p.sigma = refineSensitivity(n, workers, tau) / per
	if err := noise.AddGaussianVec(nil, p.sigma); err != nil {
		return refinePlan{}, fmt.Errorf("refinement noise: %w", err)
	}
	return p, nil
}

// residualGradient returns Σᵢ xᵢ·clip(y″ᵢ − xᵢᵀθ, −τ, τ) over the rows
// mapped exactly as the statistics pass maps them (declared or released
// box, radii, preconditioner). Up to t.workers goroutines sum contiguous
// row ranges in order and their sums are added in a fixed order (the
// chain refineSensitivity covers). A NaN residual (from an overflowing
// xᵀθ) counts as 0, still within [−τ, τ].
func (t *Trainer) residualGradient(X [][]float64, y []float64, clip *privClip, theta []float64, tau float64) []float64 {
	prep := t.prep
	if clip != nil && clip.prep != nil {
		prep = *clip.prep
	}
	n := len(X)
	w := min(t.workers, max(n/minRowsPerWorker, 1))
	parts := make([][]float64, w)
	var wg sync.WaitGroup
	for k := range parts {
		from, to := k*n/w, (k+1)*n/w
		g := make([]float64, t.f)
		parts[k] = g
		wg.Add(1)
		go func() {
			defer wg.Done()
			row := make([]float64, t.f)
			for i := from; i < to; i++ {
				prep.Transform(row, X[i])
				yv := labelUnit(y[i], t.cfg.LabelLo, t.cfg.LabelHi)
				if clip != nil {
					yv = clip.apply(row, yv)
				}
				rv := blas64.Vector{N: len(row), Inc: 1, Data: row}
				p := blas64.Dot(rv, blas64.Vector{N: len(theta), Inc: 1, Data: theta})
				r := mechanism.Clip(yv-p, -tau, tau)
				// g += r·x coordinate-wise: each coordinate is still one
				// chain of additions over the worker's rows.
				blas64.Axpy(r, rv, blas64.Vector{N: len(g), Inc: 1, Data: g})
			}
		}()
	}
	wg.Wait()
	out := make([]float64, t.f)
	for _, g := range parts {
		for j, v := range g {
			out[j] += v
		}
	}
	return out
}

// refine runs the planned gradient steps from θ₀ (AdaSSP's estimate):
// release g̃_t = g(θ_t) + noise, then θ_{t+1} = θ_t + η·H⁻¹g̃_t, where H is
// the released XᵀX̂ + λI with every eigenvalue raised to the floor (as §6).
// θ_t is a function of earlier releases only (adaptive composition).
func (t *Trainer) refine(r noisy, lambda float64, theta0 []float64, X [][]float64, y []float64, clip *privClip) ([]float64, error) {
	p := t.ref
	h := t.refineSolver(r, lambda)
	theta := append([]float64(nil), theta0...)
	for s := 0; s < p.steps; s++ {
		g := t.residualGradient(X, y, clip, theta, p.tau)
		if err := t.addRefineNoise(g); err != nil {
			return nil, err
		}
		theta = h.step(theta, g, p.step)
	}
	return theta, nil
}

// addRefineNoise is one gradient release's noise (discrete Gaussian σ_g).
func (t *Trainer) addRefineNoise(g []float64) error {
	if err := noise.AddGaussianVec(g, t.ref.sigma); err != nil {
		return fmt.Errorf("linreg: refinement noise: %w", err)
	}
	return nil
}

// refineSolver is H⁻¹ as eigenvectors and floored reciprocal eigenvalues.
type refineSolver struct {
	vecs *mat.Dense
	inv  []float64
}

// refineSolver builds H from the released XᵀX̂ + λI and the floor
// (post-processing). If the eigensolver fails (never observed) H = floor·I.
func (t *Trainer) refineSolver(r noisy, lambda float64) refineSolver {
	m := mat.NewSymDense(t.f, nil)
	m.CopySym(r.a)
	for j := 0; j < t.f; j++ {
		m.SetSym(j, j, m.At(j, j)+lambda)
	}
	vecs, inv := floorInverse(m, t.floor*t.noiseNorm)
	return refineSolver{vecs: vecs, inv: inv}
}

// step returns θ + η·H⁻¹g; a non-finite result is dropped (θ is kept), a
// function of released values only.
func (h refineSolver) step(theta, g []float64, eta float64) []float64 {
	f := len(theta)
	next := append([]float64(nil), theta...)
	for k := 0; k < f; k++ {
		var proj float64
		for j := 0; j < f; j++ {
			proj += h.vecs.At(j, k) * g[j]
		}
		proj *= eta * h.inv[k]
		for j := 0; j < f; j++ {
			next[j] += proj * h.vecs.At(j, k)
		}
	}
	for _, v := range next {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return append([]float64(nil), theta...)
		}
	}
	return next
}

// floorInverse returns the eigenvectors of m and the reciprocals of its
// eigenvalues raised to floor (> 0); if the eigensolver fails, the identity
// and 1/floor.
func floorInverse(m *mat.SymDense, floor float64) (*mat.Dense, []float64) {
	f := m.SymmetricDim()
	inv := make([]float64, f)
	var es mat.EigenSym
	if !es.Factorize(m, true) {
		id := mat.NewDense(f, f, nil)
		for k := range inv {
			id.Set(k, k, 1)
			inv[k] = 1 / floor
		}
		return id, inv
	}
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	for k, w := range es.Values(nil) {
		inv[k] = 1 / math.Max(w, floor)
	}
	return &vecs, inv
}

// planRefineShare moves a share of the AdaSSP stage's r² (g.ratio²) to
// the gradient releases: r_ref² = share·r², AdaSSP re-planned at
// r_ssp² = (1 − share)·r² (rounded down), so r_ref² + r_ssp² ≤ r² and the
// plan's one zCDP event is unchanged (adaptive composition).
func (t *Trainer) planRefineShare(g *gaussPlan, share float64, steps int, tau, step float64) error {
	if !(share > 0 && share < 1) {
		return fmt.Errorf("refinement share must be in (0, 1), got %v", share)
	}
	r := g.ratio
	ref, err := planRefine(math.Sqrt(share)*r, steps, tau, step, t.cfg.N, t.workers)
	if err != nil {
		return err
	}
	g2, err := planGaussianRatio(math.Sqrt(1-share)*r*(1-1e-12), t.cfg.Epsilon, t.cfg.Delta, t.cfg.N, t.f, t.depth(), Kappa)
	if err != nil {
		return err
	}
	*g = g2
	ref.stage = r
	t.ref = &ref
	t.params["refine_steps"] = float64(steps)
	t.params["refine_clip"] = tau
	t.params["sigma_refine"] = ref.sigma
	t.params["gaussian_ratio_refine"] = ref.totalRatio
	return nil
}

// setNoiseNorm sets E and the λ-statistic's margin from the Gaussian plan
// (after a re-split of the stage's ratio).
func (t *Trainer) setNoiseNorm() {
	f := float64(t.f)
	t.noiseNorm = t.gauss.sigmaA * (math.Sqrt(2*f) + math.Sqrt(2*math.Log(1/Failure)))
	t.margin = t.gauss.sigmaL * normalQuantile(1-Failure)
	t.params["sigma_xx"], t.params["sigma_xy"], t.params["sigma_lambda"] = t.gauss.sigmaA, t.gauss.sigmaC, t.gauss.sigmaL
	t.params["gaussian_ratio"] = t.gauss.ratio
	t.params["noise_norm"] = t.noiseNorm
}

// withoutRefine returns a copy of the plan whose AdaSSP stage has the whole
// ratio r the refinement shared (r_ssp² + r_ref² ≤ r²: the same one event).
// TrainVariants uses it: its variants are post-processings of ONE release,
// and gradient steps from each variant's θ would be further releases.
func (t *Trainer) withoutRefine() (*Trainer, error) {
	c := *t
	g, err := planGaussianRatio(t.ref.stage, t.cfg.Epsilon, t.cfg.Delta, t.cfg.N, t.f, t.depth(), Kappa)
	if err != nil {
		return nil, fmt.Errorf("linreg: %w", err)
	}
	c.gauss, c.ref = &g, nil
	c.params = t.Params()
	for _, k := range []string{"refine_steps", "refine_clip", "sigma_refine", "gaussian_ratio_refine"} {
		delete(c.params, k)
	}
	c.setNoiseNorm()
	return &c, nil
}
