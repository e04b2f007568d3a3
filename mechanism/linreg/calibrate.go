package linreg

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Public constants of the default rule (docs/mechanisms/linreg.md §4). They
// were chosen on synthetic data and the diabetes TRAINING split only.
const (
	// Failure is AdaSSP's failure probability ρ: the margin subtracted from
	// the noisy λ_min and the tail term of the noise-norm bound hold with
	// probability 1 − ρ each (Wang 2018 uses ρ = 0.05).
	Failure = 0.05
	// LambdaShare is the share of the budget spent on λ_min: of ρ-zCDP
	// (δ > 0) or of ε (δ = 0).
	LambdaShare = 0.05
	// Kappa is the ratio b/a of the precisions 1/σ_c² and 1/σ_A² of the
	// Gaussian releases of Xᵀy and XᵀX (δ > 0): equal noise on both.
	Kappa = 1.0
	// XyShareLaplace is the share of the remaining ε given to Xᵀy when δ = 0.
	XyShareLaplace = 0.5
	// FloorFactor scales the eigenvalue floor of the solve: eigenvalues of
	// XᵀX̂ + λI below FloorFactor·E are raised to it, E the noise-norm bound.
	FloorFactor = 1.0
	// RidgeFactor scales the noise-norm bound E in AdaSSP's ridge
	// λ = max(0, RidgeFactor·E − λ̃_min) (Wang: 1). A post-processing
	// constant: it changes no noise scale. With the eigenvalue floor at E
	// in place, ¼ was better than Wang's 1 by 1.2 % mean RMSE (up to 9 %)
	// and never worse by more than 0.9 % on synthetic d ∈ {10, 50},
	// n ∈ {10³, 10⁴, 10⁵}, ε ∈ {0.1, 1, 10} and the diabetes training
	// split (TestTuneRidgeFloor, docs/results/linreg.md).
	RidgeFactor = 0.25
	// MaxAnyOrderInflation is the largest relative increase of the noise
	// that functions accepts for the any-order rounding allowance of a
	// backend's DOUBLE sums (AnyOrderSums); beyond it (n ≳ 10⁷) the exact
	// DECIMAL statement is used. A cost/accuracy trade-off, not a privacy
	// constant.
	MaxAnyOrderInflation = 0.02
	// MaxFeatures bounds d (the release has (d+1)(d+2)/2 coordinates).
	MaxFeatures = 1000
)

// unitRoundoff is u = 2⁻⁵³ for float64.
const unitRoundoff = 0x1p-53

// gamma is Higham's γ_k = k·u/(1 − k·u).
func gamma(k float64) float64 {
	ku := k * unitRoundoff
	return ku / (1 - ku)
}

// kappaHat bounds the computed ‖x‖₂ of a scaled row: Prepared.Transform
// clamps to [−1, 1] and multiplies by fl(1/fl(√F)), so each coordinate is at
// most (1 + u)³/√F and ‖x‖ ≤ 1 + 4u < 1 + 2⁻⁵⁰.
const kappaHat = 1 + 0x1p-50

// jointA is J(a, b)/a: the largest value of ‖ΔA‖²_F + (b/a)‖Δc‖² over
// replace-one neighbours with ‖x‖, ‖x′‖ ≤ 1 and |y|, |y′| ≤ 1, where
// ΔA = xxᵀ − x′x′ᵀ and Δc = xy − x′y′ (derivation §2.2):
//
//	2 + 2k + k²/2   if k = b/a < 2,
//	4k              otherwise.
func jointA(k float64) float64 {
	if k < 2 {
		return 2 + 2*k + k*k/2
	}
	return 4 * k
}

// depth bounds the length of the longest chain of floating-point additions
// that forms one entry of XᵀX or Xᵀy in accumulate (a block dot product of
// at most statsBatch rows, one addition per block into a worker's sum, one
// per worker at the merge).
func depth(n, workers int) float64 {
	return float64(statsBatch) + math.Ceil(float64(n)/statsBatch) + float64(workers) + 2
}

// anyOrderDepth is the depth that covers statistics summed by a backend in
// any order (docs/scale-out.md, "Fast pushdown"): a summation tree over n
// terms has at most n − 1 additions on any path (Higham, Lemma 3.1 holds
// for any order), plus the rounding of the product, of fl(inv·inv) and of
// the final scaling, and a margin for partial sums passed between shard
// and head (round-trip text, exact) — n + 8 in all, against the reference
// Σ z_j z_k of the embedded path's per-row values.
func anyOrderDepth(n int) float64 { return float64(n) + 8 }

// depth returns the rounding depth the plan covers.
func (t *Trainer) depth() float64 {
	d := depth(t.cfg.N, t.workers)
	if t.cfg.AnyOrderSums {
		d = max(d, anyOrderDepth(t.cfg.N))
	}
	return d
}

// AnyOrderSumBound bounds |computed − exact| of one entry of XᵀX or Xᵀy
// summed in any order over n rows whose exact terms have absolute sum
// absSum (the allowance of a plan with AnyOrderSums, per entry; for tests
// comparing a backend's sums with the embedded ones).
func AnyOrderSumBound(n int, absSum float64) float64 {
	return gamma(anyOrderDepth(n)+2)*absSum + float64(n+8)*underflowUnit
}

// underflowUnit is the absolute error of one product or sum that underflows
// (half the smallest subnormal, 2⁻¹⁰⁷⁵; taken as 2⁻¹⁰⁷⁴).
const underflowUnit = 0x1p-1074

// roundingBounds returns t_A, t_c: bounds on the ℓ₂ distance between the
// computed and the exact release vectors of XᵀX (diagonal and √2·upper
// triangle) and Xᵀy on any table of n rows. Each entry errs by at most
// γ_m·Σᵢ|xᵢⱼxᵢₖ| (Higham, Lemma 3.1 and §3.1, any summation order of depth
// m; the ×√2 adds one rounding), and the matrix Σᵢ|xᵢ||xᵢ|ᵀ has Frobenius
// norm ≤ Σᵢ‖xᵢ‖² ≤ n·κ̂²; Σᵢ|yᵢ||xᵢ| has norm ≤ n·κ̂.
func roundingBounds(n int, dep float64) (tA, tc float64) {
	g := gamma(dep + 2)
	// A product that underflows errs by at most 2⁻¹⁰⁷⁴ (absolute; sums
	// that underflow are exact): ≤ (n + 2)·2⁻¹⁰⁷⁴ per entry, times ≤ 2048
	// ≥ F for the ℓ₂ norm over the entries. Negligible, but counted.
	uf := float64(n+2) * underflowUnit * 2048
	tA = g*float64(n)*kappaHat*kappaHat + uf
	tc = g*float64(n)*kappaHat + uf
	return tA, tc
}

// rayleighRounding bounds the error of the computed λ-statistic
// min_k v_kᵀ A v_k (A the computed XᵀX, v_k normalised in floating point to
// ‖v_k‖ ≤ 1 + γ_{F+3}): the quadratic form of F² terms errs by at most
// γ_{F²+2}·|v|ᵀ|A||v| ≤ γ_{F²+2}(1 + γ_{F+3})²·n·κ̂², and ‖v‖² > 1 scales
// the exact form by at most (1 + γ_{F+3})².
func rayleighRounding(n, f int) float64 {
	fv := float64(f)
	nv := (1 + gamma(fv+3)) * (1 + gamma(fv+3))
	return (gamma(fv*fv+2)*nv + (nv - 1)) * float64(n) * kappaHat * kappaHat
}

// gaussPlan holds the Gaussian (δ > 0) calibration.
type gaussPlan struct {
	sigmaA, sigmaC, sigmaL float64 // noise of the XᵀX vector, of Xᵀy, of λ_min
	ratio                  float64 // the joint ratio R (Δ/σ) charged
}

// planGaussian calibrates the three Gaussian releases jointly so that their
// composition is exactly one Gaussian event of ratio R, with R the ratio
// that mechanism.GaussianSigma gives a unit-sensitivity query at (ε, δ).
//
// Shape: precisions a = 1/σ_A², b = kappa·a (Kappa by default), and e = 1/σ_λ² with
// e/(J(a,b) + e) = LambdaShare. The exact joint ratio is
// κ̂²·√(J(a, b) + e); floating-point rounding adds at most
// 2·√(a·t_A² + b·t_c² + e·t_λ²) (Minkowski). Both scale linearly in √a, so
// one division fixes the scale.
func planGaussian(eps, delta float64, n, f int, dep float64, kappa float64) (gaussPlan, error) {
	unit, err := mechanism.GaussianSigma(1, eps, delta)
	if err != nil {
		return gaussPlan{}, err
	}
	return planGaussianRatio(1/unit, eps, delta, n, f, dep, kappa)
}

// planGaussianRatio is planGaussian for a given joint ratio r (the SSP
// share of a larger zCDP release, §11); eps and delta only label errors.
func planGaussianRatio(r, eps, delta float64, n, f int, dep float64, kappa float64) (gaussPlan, error) {
	// The noise package covers its own grid rounding for each call when the
	// joint ratio is at least √3·2⁻²⁰ (docs §3.4).
	if r < math.Sqrt(3)*noise.GaussianMinRatio {
		return gaussPlan{}, fmt.Errorf("epsilon %v with delta %v needs more noise than the Gaussian sampler supports", eps, delta)
	}
	a, b := 1.0, kappa
	j := jointA(kappa)
	e := LambdaShare / (1 - LambdaShare) * j
	tA, tc := roundingBounds(n, dep)
	tl := 2*tA + rayleighRounding(n, f) // |Δq| ≤ ‖ΔA‖ + the errors of both forms
	exact := kappaHat * kappaHat * math.Sqrt(j+e)
	slack := 2 * math.Sqrt(a*tA*tA+b*tc*tc+e*tl*tl)
	s := r / (exact + slack) // multiply √a, √b, √e by s
	p := gaussPlan{
		sigmaA: 1 / (s * math.Sqrt(a)),
		sigmaC: 1 / (s * math.Sqrt(b)),
		sigmaL: 1 / (s * math.Sqrt(e)),
		ratio:  r,
	}
	for _, sg := range []float64{p.sigmaA, p.sigmaC, p.sigmaL} {
		if err := noise.AddGaussianVec(nil, sg); err != nil {
			return gaussPlan{}, fmt.Errorf("noise scale out of range for epsilon %v, delta %v: %w", eps, delta, err)
		}
	}
	return p, nil
}

// event is the single accountant event of the Gaussian release.
func (p gaussPlan) event(eps, delta float64) budget.Event {
	return mechanism.GaussianEvent(p.ratio, 1, eps, delta)
}

// laplacePlan holds the pure-ε calibration: three Laplace releases.
type laplacePlan struct {
	epsA, epsC, epsL    float64 // ε of each release (sum = ε)
	scaleA, scaleC      float64 // per-coordinate Laplace scales
	scaleL              float64
	sensA, sensC, sensL float64 // ℓ₁ sensitivities including rounding
}

// l1SensA is the ℓ₁ sensitivity of the upper triangle of XᵀX (diagonal
// once, without the public intercept entry) in exact arithmetic, for
// ‖x‖ ≤ 1 (§2.3): Σ_{j≤k}|ΔA_jk| = ⟨S, ΔA⟩ for a symmetric S with ±1 on the
// diagonal (0 for the intercept) and ±½ off it, and ⟨S, xxᵀ − x′x′ᵀ⟩ ≤
// λ_max(S)⁺ − λ_min(S)⁻ ≤ √2·‖S‖_F = √((F − 1)(F + 4)/2).
func l1SensA(f int) float64 {
	fv := float64(f)
	return math.Sqrt((fv - 1) * (fv + 4) / 2)
}

// planLaplace splits ε into ε_λ = LambdaShare·ε and the rest between XᵀX and
// Xᵀy, and sets each Laplace scale to its ℓ₁ sensitivity over its ε.
func planLaplace(eps float64, n, f int, dep float64) (laplacePlan, error) {
	p := laplacePlan{epsL: LambdaShare * eps}
	rest := eps - p.epsL
	p.epsC = XyShareLaplace * rest
	p.epsA = rest - p.epsC
	tA, tc := roundingBounds(n, dep)
	fv := float64(f)
	// ℓ₁ ≤ √(#coordinates)·ℓ₂ for the rounding errors.
	entries := fv*(fv+1)/2 - 1
	p.sensA = kappaHat*kappaHat*l1SensA(f) + 2*math.Sqrt(entries)*tA
	p.sensC = 2*kappaHat*math.Sqrt(fv) + 2*math.Sqrt(fv)*tc
	p.sensL = kappaHat*kappaHat + 2*(2*tA+rayleighRounding(n, f))
	p.scaleA = p.sensA / p.epsA
	p.scaleC = p.sensC / p.epsC
	p.scaleL = p.sensL / p.epsL
	checks := []struct {
		eps   float64
		dim   int
		scale float64
	}{{p.epsA, int(entries), p.scaleA}, {p.epsC, f, p.scaleC}, {p.epsL, 1, p.scaleL}}
	for _, c := range checks {
		if min := noise.LaplaceMinEpsilon(c.dim); c.eps < min {
			return laplacePlan{}, fmt.Errorf("epsilon share %v is below the Laplace sampler's minimum %v for %d coordinates", c.eps, min, c.dim)
		}
		if err := noise.AddLaplaceVec(nil, c.scale); err != nil {
			return laplacePlan{}, fmt.Errorf("noise scale out of range for epsilon %v: %w", eps, err)
		}
	}
	return p, nil
}

// events are the three pure-ε Laplace releases (sequential composition).
func (p laplacePlan) events() []budget.Event {
	return []budget.Event{
		{Kind: budget.Laplace, Epsilon: p.epsA},
		{Kind: budget.Laplace, Epsilon: p.epsC},
		{Kind: budget.Laplace, Epsilon: p.epsL},
	}
}
