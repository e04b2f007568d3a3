package lsq

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/noise"
)

// Constants of the squared loss ℓ(θ; x, y) = ½(xᵀθ − y)² on the public
// domain ‖x‖ ≤ 1, |y| ≤ 1, ‖θ‖ ≤ η (docs/mechanisms/lsq.md, "Loss
// constants"):
//
//	smoothness   ‖∇²ℓ‖ = ‖xxᵀ‖ = ‖x‖² ≤ 1                  (λ of the papers)
//	Lipschitz    ‖∇ℓ‖ = |xᵀθ − y|·‖x‖ ≤ η + 1              (ζ of the papers)
//	difference   ‖∇ℓ(θ; z) − ∇ℓ(θ; z′)‖ ≤ η + 2            (replace-one)
//
// The last holds because ∇ℓ(θ; z) − ∇ℓ(θ; z′) = (xxᵀ − x′x′ᵀ)θ − (yx − y′x′)
// with −I ⪯ xxᵀ − x′x′ᵀ ⪯ I and ‖yx − y′x′‖ ≤ 2.
const lossSmoothness = 1

func lossGradDiff(eta float64) float64 { return eta + 2 }

// objGaussSigma returns the standard deviation β of the linear noise term b
// for which the density ratio of b at neighbouring preimages costs at most
// ε/2, except on an event of probability δ_b: with v the gradient
// difference (‖v‖ ≤ ζ_D) confined to a fixed k-dimensional subspace with
// projection P, ln ν(b)/ν(b + v) ≤ (2‖Pb‖‖v‖ + ‖v‖²)/(2β²) and
// P(‖Pb‖ > t·β) = δ_b for t² the upper δ_b-quantile of χ²_k. Requiring
// t·a + a²/2 ≤ ε/2 with a = ζ_D/β gives
//
//	β = ζ_D·(√(t² + ε) + t)/ε.
//
// It is at most Kifer et al.'s ζ_D·√(8 log(2/δ_b) + 4ε)/ε for k = 1, 2.
func objGaussSigma(zetaD, eps, deltaB float64, k int) (float64, error) {
	t2, err := chi2Upper(k, deltaB)
	if err != nil {
		return 0, err
	}
	t := math.Sqrt(t2)
	return zetaD * (math.Sqrt(t2+eps) + t) / eps, nil
}

// autoRidge is the public default of the extra ridge Δ_r (on top of
// Kifer's 2λ/ε): the Δ that balances the bias Δ‖ŵ‖²/(2n) against the noise
// F·β²/(2nΔ) of the perturbed quadratic objective, with ‖ŵ‖ replaced by
// the public bound η: Δ_r = √F·β/η (Fukuchi et al. Theorem 2, Kifer et al.:
// Δ = Θ(ζ√(d log(1/δ))/(ε‖ŵ‖))).
func autoRidge(f int, beta, eta float64) float64 {
	return math.Sqrt(float64(f)) * beta / eta
}

// objectivePlan is the public part of Obj-Gauss.
type objectivePlan struct {
	eta   float64 // radius of the ball ‖θ‖ ≤ η
	kifer float64 // Δ = 2λ/ε, Kifer's strong-convexity term
	ridge float64 // Δ_r = nλ_r, the user's (or auto) convex ridge
	beta  float64 // σ of the linear noise b
}

func (t *Trainer) planObjective(cm common) error {
	cfg := cm.cfg
	if err := requireLinear(cfg); err != nil {
		return err
	}
	if cfg.Delta == 0 {
		return fmt.Errorf("objective perturbation with Gaussian noise needs delta > 0")
	}
	t.fm = newFeatureMap(cm.scaler, nil)
	f := t.fm.f
	eta := cfg.Eta
	if eta == 0 {
		eta = math.Sqrt(float64(f))
	}
	// The gradient difference lies in span{x, x′}: k = 2.
	beta, err := objGaussSigma(lossGradDiff(eta), cfg.Epsilon, cfg.Delta, 2)
	if err != nil {
		return err
	}
	p := &objectivePlan{eta: eta, kifer: 2 * lossSmoothness / cfg.Epsilon, beta: beta}
	if cfg.Lambda == 0 {
		p.ridge = autoRidge(f, beta, eta)
	} else {
		p.ridge = cfg.Lambda * float64(cfg.N)
	}
	if beta/lossGradDiff(eta) > 1/noise.GaussianMinRatio {
		return fmt.Errorf("noise multiplier %v exceeds what the Gaussian sampler supports", beta/lossGradDiff(eta))
	}
	t.lambda = p.ridge / float64(cfg.N)
	t.obj = p
	t.params = map[string]float64{
		"eta": eta, "kifer_delta": p.kifer, "ridge_delta": p.ridge,
		"gaussian_sigma": beta, "grad_diff_bound": lossGradDiff(eta),
	}
	t.events = []budget.Event{{Kind: budget.Generic, Epsilon: cfg.Epsilon, Delta: cfg.Delta}}
	return nil
}

// solve returns argmin_{‖θ‖≤η} ½θᵀ(S + (Δ + Δ_r)I)θ − cᵀθ, which is n times
// Obj-Gauss's (1/n)[Σℓ + (Δ/2)‖θ‖² + r(θ) + bᵀθ] up to a constant when
// c = Σy′x − b.
func (p *objectivePlan) solve(st stats, c []float64) ([]float64, error) {
	return solveBall(st.s, p.kifer+p.ridge, c, p.eta)
}

// releaseObjective draws b ~ N(0, β²I) and returns the exact constrained
// minimiser of the perturbed objective.
func (t *Trainer) releaseObjective(st stats) ([]float64, error) {
	b := make([]float64, t.fm.f)
	if err := noise.AddGaussianVec(b, t.obj.beta); err != nil {
		return nil, fmt.Errorf("drawing b: %w", err)
	}
	c := make([]float64, len(b))
	for i := range c {
		c[i] = st.c[i] - b[i]
	}
	return t.obj.solve(st, c)
}

// solveBall minimises ½θᵀ(G + reg·I)θ − cᵀθ over ‖θ‖ ≤ η.
func solveBall(g *mat.SymDense, reg float64, c []float64, eta float64) ([]float64, error) {
	f := g.SymmetricDim()
	h := mat.NewSymDense(f, nil)
	h.CopySym(g)
	for i := 0; i < f; i++ {
		h.SetSym(i, i, h.At(i, i)+reg)
	}
	return ballMin(h, c, eta)
}
