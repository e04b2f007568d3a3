package lsq

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism/amp"
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
//
// The computed features satisfy ‖φ̂‖ ≤ κ̂ = 1 + 10⁻¹⁵ (kappaHat) rather than
// 1, so the constants used are κ̂²·1, κ̂²η + 2κ̂.
const lossSmoothness = kappaHat * kappaHat

func lossGradDiff(eta float64) float64 { return kappaHat*kappaHat*eta + 2*kappaHat }

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

// roundedFraction is the share of the ideal mechanism's δ given to the
// event ‖b‖ > t_F·β when it absorbs a backend's accumulation error
// (objGaussSigmaRounded).
const roundedFraction = 1.0 / 16

// objGaussSigmaRounded is objGaussSigma for an ideal mechanism run on
// statistics Ŝ, ĉ that a backend summed in an order it chose
// (Config.AnyOrderSums, docs/mechanisms/lsq.md §6 "Backend sums"): the
// gradient difference at any θ in the ball is v = v₂ + v_E with v₂ in the
// span of the two differing rows (‖v₂‖ ≤ ζ_D) and ‖v_E‖ ≤ ξ = 2(e_S·η + e_c)
// in any direction. On the good event ‖Pb‖ ≤ t₂β (probability ≥ 1 − δ_a)
// and ‖b‖ ≤ t_F·β (≥ 1 − δ_b, t_F² the upper quantile of χ²_F),
// |ln ν(b)/ν(b + v)| ≤ L/β + s²/(2β²) with L = t₂ζ_D + t_F·ξ, s = ζ_D + ξ;
// requiring ≤ ε gives β = (L + √(L² + 2s²ε))/(2ε). δ_a + δ_b = δ_b total.
// With ξ = 0 and all of δ on the first event it is objGaussSigma.
func objGaussSigmaRounded(zetaD, xi, eps, deltaB float64, f int) (float64, error) {
	da, db := deltaB*(1-roundedFraction), deltaB*roundedFraction
	t2, err := chi2Upper(2, da)
	if err != nil {
		return 0, err
	}
	tf2, err := chi2Upper(f, db)
	if err != nil {
		return 0, err
	}
	l := math.Sqrt(t2)*zetaD + math.Sqrt(tf2)*xi
	s := zetaD + xi
	return (l + math.Sqrt(l*l+2*s*s*eps)) / (2 * eps), nil
}

// jacobianRounded bounds the log-ratio of the Jacobians of neighbouring
// ideal problems whose Hessians are Ŝ + reg·I with ‖Ŝ − S‖ ≤ eS (S the
// exact sum, PSD): det(B + E + hhᵀ)/det(B + E) ∈ [1, 1 + κ̂²/(reg − eS)]
// for each differing row, and det(B + E)/det(B + E′) ∈ (1 ± a)^{±F},
// a = 2eS/(reg − eS). Requires a < 1.
func jacobianRounded(reg, eS float64, f int) (float64, error) {
	m := reg - eS
	a := 2 * eS / m
	if !(m > 0) || !(a < 0.5) {
		return 0, fmt.Errorf("the backend's rounding allowance %v is too large for the ridge %v", eS, reg)
	}
	return (math.Log1p(lossSmoothness/m) - float64(f)*math.Log1p(-a)) * (1 + 1e-12), nil
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
	kifer float64 // Δ = 2λ/ε₁, Kifer's strong-convexity term
	ridge float64 // Δ_r = nλ_r, the user's (or auto) convex ridge
	beta  float64 // σ of the linear noise b
	muMax float64 // public bracket of ballSolve's multiplier
	step  amp.Step
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
	// b is F coupled normals: ratio F·2⁻⁶⁶, tail F·2⁻¹⁰⁰⁰ (|N| > 256).
	ratio := float64(f) * noise.CoupledNormalRatio
	tail := float64(f) * noise.CoupledNormalTail
	sp, err := chooseShare(cfg.Epsilon, cfg.Delta, ratio, tail, func(sh share) (*objectivePlan, float64, error) {
		return objectiveCandidate(cfg, f, eta, sh)
	})
	if err != nil {
		return err
	}
	p, sh := sp.plan, sp.share
	t.lambda = p.ridge / float64(cfg.N)
	t.obj = p
	t.params = map[string]float64{
		"eta": eta, "kifer_delta": p.kifer, "ridge_delta": p.ridge,
		"gaussian_sigma": p.beta, "grad_diff_bound": lossGradDiff(eta),
		"epsilon_objective": sh.epsIdeal, "delta_objective": sh.deltaIdeal,
		"coupling_slack": sh.ratio, "radius": p.step.Radius,
		"output_epsilon": p.step.Epsilon, "output_delta": p.step.Delta, "output_sigma": p.step.Scale,
	}
	t.events = []budget.Event{sh.idealEvent(), p.step.Event()}
	return nil
}

// objectiveCandidate plans Obj-Gauss for one split of (ε, δ) between the
// ideal mechanism and the output step: the ideal's β, Δ and Δ_r, the
// a-priori radius r between the computed minimiser and the ideal one, and
// the output step (docs/mechanisms/lsq.md §6, §9). It returns the plan and
// the public utility proxy used to choose the split.
func objectiveCandidate(cfg Config, f int, eta float64, sh share) (*objectivePlan, float64, error) {
	n := cfg.N
	zetaD := lossGradDiff(eta)
	beta, err := objGaussSigma(zetaD, sh.epsIdeal, sh.deltaIdeal, 2)
	if err != nil {
		return nil, 0, err
	}
	kifer := 2 * lossSmoothness / sh.epsIdeal
	ridge := func(beta float64) float64 {
		if cfg.Lambda != 0 {
			return cfg.Lambda * float64(n)
		}
		r := autoRidge(f, beta, eta)
		if cfg.ridgeMult > 0 {
			r *= cfg.ridgeMult
		}
		return r
	}
	u := unitRoundoff
	gS := gammaN(sumDepth(n, cfg.AnyOrderSums) + 1)
	nk := float64(n) * kappaHat
	nk2 := nk * kappaHat
	// accS, accC: the accumulation error of Ŝ, ĉ. The embedded plan covers
	// it in the output step's radius (Ŝ is compared with the ideal's exact
	// S); a plan for a backend's DOUBLE sums in any order (error ≈ n²u,
	// which through the radius would cost a 1/reg-amplified output step)
	// lets the ideal mechanism run on the sums as received instead and pays
	// for them in its ε (§6 "Backend sums"): a larger β, and the radius
	// keeps only the rounding after the sums.
	accS, accC := gS*nk2, gS*nk
	absorbed := 0.0
	if cfg.AnyOrderSums {
		absorbed = 1
		// With centring the backend shifts the labels of the rows inside
		// its box through the sums (ShiftAlgebraic), so ĉ errs relative to
		// the raw labels' magnitude, not y′'s.
		accC *= algebraicShiftFactor(cfg)
		// The Jacobian bound with the rounding, on the ridge of the
		// first β: the final β is larger, its auto ridge too, and the
		// bound decreases in the ridge.
		jac, err := jacobianRounded(kifer+ridge(beta), accS, f)
		if err != nil {
			return nil, 0, err
		}
		// Kifer's Δ = 2λ/ε₁ keeps log(1 + λ/Δ) ≤ ε₁/2 for the exact sums;
		// the excess of the rounded bound over it comes off the noise's ε₁/2.
		epsNoise := sh.epsIdeal/2 - math.Max(0, jac-math.Log1p(sh.epsIdeal/2))
		if !(epsNoise > sh.epsIdeal/4) {
			return nil, 0, fmt.Errorf("the backend's rounding allowance costs more than a quarter of epsilon")
		}
		xi := 2 * (accS*eta + accC)
		if beta, err = objGaussSigmaRounded(zetaD, xi, epsNoise, sh.deltaIdeal, f); err != nil {
			return nil, 0, err
		}
	}
	if !(beta > 0) || beta > 1e290 {
		return nil, 0, fmt.Errorf("noise scale β = %v is out of range", beta)
	}
	p := &objectivePlan{eta: eta, kifer: kifer, beta: beta, ridge: ridge(beta)}
	reg := p.kifer + p.ridge
	if !(reg < 1e300) {
		return nil, 0, fmt.Errorf("lambda %v is too large", cfg.Lambda)
	}
	// Ideal: H* = S + reg·I (λ_min ≥ reg), c* = Σy′φ − b*, b* = β·N*
	// (absorbed: H* = Ŝ + reg·I with λ_min ≥ reg − accS, c* = ĉ − b*).
	// Stored: Ŝ, ĉ from the accumulation (depth d), b̂ = β·N̂ with N̂ in
	// the cell of N* (|N*| ≤ 256 on the typical region).
	ff := math.Sqrt(float64(f))
	bMax := noise.CoupledNormalMax * beta
	mIdeal := reg - absorbed*accS
	eH := (1-absorbed)*accS + u*(nk2*(1+gS)+reg)
	eC := (1-absorbed)*accC + ff*(beta*0x1p-41+u*bMax+u*(nk*(1+gS)+bMax))
	r1 := strongMonotoneBound(mIdeal, eH, eC, eta)
	trH := nk2*(1+gS) + float64(f)*reg*(1+u)
	r2, err := ballSolveBound(f, trH, mIdeal-eH, eta)
	if err != nil {
		return nil, 0, fmt.Errorf("%w (increase lambda)", err)
	}
	// Every implemented b̂ has |b̂ᵢ| ≤ 2¹³·β (the cap of the discrete draw).
	cMax := (nk*(1+gS) + ff*0x1p13*beta) * (1 + 4*u)
	p.muMax = 2 * cMax / eta * (1 + 4*u)
	if p.step, err = amp.NewGaussian(r1+r2, f, sh.epsOut, sh.deltaOut); err != nil {
		return nil, 0, err
	}
	// Proxy: per-coordinate noise in θ from b along a typical data
	// direction (curvature n/F + reg) and from the output step.
	proxy := math.Hypot(beta/(float64(n)/float64(f)+reg), p.step.Scale)
	return p, proxy, nil
}

// solve returns the exact-in-exact-arithmetic ball minimiser used by the
// noise-free reference (tests and results): ballSolve on
// ½θᵀ(S + (Δ + Δ_r)I)θ − cᵀθ.
func (p *objectivePlan) solve(st stats, c []float64) ([]float64, error) {
	h := shifted(st.s, p.kifer+p.ridge)
	w, _ := ballSolve(h, c, p.eta, p.muMax)
	return w, nil
}

// releaseObjective draws b = β·N̂ with coupled normals, solves the
// perturbed problem by ballSolve and releases the result through the
// output step.
func (t *Trainer) releaseObjective(st stats) ([]float64, error) {
	p := t.obj
	nrm := noise.StandardNormalVec(t.fm.f)
	c := make([]float64, len(nrm))
	for i := range c {
		c[i] = st.c[i] - p.beta*nrm[i]
	}
	theta, steps := ballSolve(shifted(st.s, p.kifer+p.ridge), c, p.eta, p.muMax)
	t.solverSteps = steps
	if err := p.step.Apply(theta); err != nil {
		return nil, err
	}
	return theta, nil
}

// shifted returns G + reg·I as a new matrix.
func shifted(g *mat.SymDense, reg float64) *mat.SymDense {
	f := g.SymmetricDim()
	h := mat.NewSymDense(f, nil)
	h.CopySym(g)
	for i := 0; i < f; i++ {
		h.SetSym(i, i, h.At(i, i)+reg)
	}
	return h
}
