package lmgc

import (
	"math"

	"github.com/dpsql/dpsql/mechanism/amp"
	"github.com/dpsql/dpsql/noise"
)

// Public calibration constants (docs/mechanisms/lmgc.md §5–§8).
const (
	// DefaultLambda is λ, the weight of Σ_c tr(I_Φ Φ_c I_Φ) on the
	// averaged-loss scale, used when Config.Lambda is 0 (0.01, the previous
	// default, kept the non-private limit far below LDA; lmgc.md §8).
	DefaultLambda = 1e-4
	// DefaultH is the Huber width h, used when Config.H is 0. h = 1 halves
	// the worst-case curvature a = 1/(2h) of h = 0.5, hence κ and the
	// iteration count, at no measurable cost in accuracy (lmgc.md §8).
	DefaultH = 1
	// OutputShare is ρ_out, the share of ε spent on the output noise that
	// covers the solver's remaining error.
	OutputShare = 0.05
	// MaxJacobianShare is ρ_max, the largest share of ε_obj = ε − ε_out the
	// Jacobian term may take (Chaudhuri et al. 2011, Algorithm 2, use 1/2):
	// it bounds Δ from below by privacy; the noise margin c_ν usually
	// sets a larger Δ and a smaller 𝒥.
	MaxJacobianShare = 0.5
	// ToleranceRatio is ρ_r: the output-noise scale in Φ-space as a
	// fraction of the perturbation's, β_Z = ρ_r·β/(nΔ). The output noise
	// is then ≈ 1.4·ρ_r of the perturbation's displacement (+1 % in
	// quadrature for 0.1), and the solver target r_s ∝ ρ_r.
	ToleranceRatio = 0.1
	// NoiseMargin is c_ν: Δ is at least Δ_ν = m·β₀/(n·c_ν·D·√C), the Δ at
	// which the expected displacement of the minimiser by the
	// perturbation, E‖b‖/(nΔ) = m·β/(nΔ), is c_ν·D·√C. That displacement
	// moves a margin x̃ᵀ(Φ_y − Φ_c)x̃ by about 2·c_ν·‖x̃‖² against the
	// hinge's 1 (lmgc.md §5). Chosen once on validation splits of the
	// shared/ training sets (docs/results/lmgc.md).
	NoiseMargin = 3
	// MinStrongConvexity is a floor on Δ: any Δ whose Jacobian term fits
	// the share is private; the floor bounds the condition number L/Δ
	// (hence the solver's running time) for very large ε or n.
	MinStrongConvexity = 1e-5
	// MaxConditionNumber is κ_max: Δ ≥ C·a/κ_max as well, so that the
	// a-priori count T ∝ √κ·log(…) stays bounded for any analyst-chosen h
	// (a public running-time bound; a larger Δ costs no privacy).
	MaxConditionNumber = 1e6
	// MaxIterations bounds the a-priori V-FISTA count T a plan accepts (a
	// public running-time limit: T is fixed before the data is read and
	// every release runs exactly T iterations). With κ ≤ κ_max the count
	// only exceeds it for a tiny h at a large ε (the shared/ sets need at
	// most ≈ 14 000 at ε = 10⁴).
	MaxIterations = 1 << 15
)

// sensitivity returns S = √2·C, the sup over Φ and over two rows of
// ‖∇ℓ(Φ; x, y) − ∇ℓ(Φ; x′, y′)‖_F for the whole parameter (all classes),
// with ‖x̃‖ ≤ 1 and ℓ_h′ ∈ [0, 1] (Lemma A).
func sensitivity(classes int) float64 { return math.Sqrt2 * float64(classes) }

// jacobianTerm returns 𝒥(t) = (C−2)·log(1 + a/t) + log(1 + C·a/t), the
// bound on the log Jacobian ratio for t = nΔ and curvature bound a = 1/(2h):
// a row's Hessian is dominated by a times the star-graph Laplacian on the
// C classes (eigenvalues 1 with multiplicity C−2 and C).
func jacobianTerm(classes int, a, t float64) float64 {
	c := float64(classes)
	return (c-2)*math.Log1p(a/t) + math.Log1p(c*a/t)
}

// solveStrongConvexity returns t = nΔ with jacobianTerm(t) ≤ target, as
// small as float64 bisection allows (𝒥 is strictly decreasing in t).
func solveStrongConvexity(classes int, a, target float64) float64 {
	// 𝒥(t) ≤ (2C−2)·a/t, so hi satisfies 𝒥(hi) ≤ target.
	hi := (2*float64(classes) - 2) * a / target
	lo := hi
	for jacobianTerm(classes, a, lo) <= target {
		lo /= 2
	}
	for range 200 {
		mid := math.Sqrt(lo * hi)
		if mid <= lo || mid >= hi {
			break
		}
		if jacobianTerm(classes, a, mid) <= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// noiseStrongConvexity returns t_ν, the smallest t = nΔ (to float64
// bisection, keeping the safe end) with
//
//	m·β(t)/t ≤ c_ν·D·√C,   β(t) = S/(ε_obj − 𝒥(t)),
//
// i.e. the expected displacement E‖b‖/(nΔ) of the minimiser by the
// perturbation is at most c_ν·D·√C, searched above lo = t_J(ρ_max·ε_obj)
// (where 𝒥 ≤ ρ_max·ε_obj < ε_obj). t·(ε_obj − 𝒥(t)) is increasing in t, so
// the root is unique; lo is returned when it already satisfies the bound.
func noiseStrongConvexity(m, classes, dim int, a, s, epsObj, lo, noiseMargin float64) float64 {
	k := float64(m) * s / (noiseMargin * float64(dim) * math.Sqrt(float64(classes)))
	ok := func(t float64) bool { return t*(epsObj-jacobianTerm(classes, a, t)) >= k }
	if ok(lo) {
		return lo
	}
	hi := lo + k/((1-MaxJacobianShare)*epsObj)
	for !ok(hi) { // not reached: 𝒥(hi) ≤ 𝒥(lo) ≤ ρ_max·ε_obj; guards rounding
		hi *= 2
	}
	return bisectUp(lo, hi, ok)
}

// bisectUp returns the safe (upper) end of a bisection of [lo, hi] for the
// smallest x with ok(x), ok monotone and ok(hi) true; lo is never returned.
func bisectUp(lo, hi float64, ok func(float64) bool) float64 {
	for range 200 {
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
	return hi
}

// Calibration holds every public quantity a plan derives; all of them may
// be shown to the analyst.
type Calibration struct {
	Dim                 int     // m = C·D(D+1)/2, dimension of the parameter space
	Sensitivity         float64 // S = √2·C
	Curvature           float64 // a = 1/(2h)
	StrongConvexity     float64 // Δ
	Smoothness          float64 // L = C·a + Δ, Lipschitz bound of the gradient
	JacobianEpsilon     float64 // 𝒥(nΔ)
	PerturbationEpsilon float64 // ε_b
	OutputEpsilon       float64 // ε_out
	CouplingSlack       float64 // η: ratio slack of the coupled noise sampler (charged as 2η)
	PerturbationScale   float64 // β = S/ε_b, ‖b‖ ~ Gamma(m, β); σ when Gaussian
	OutputScale         float64 // β_Z = ρ_r·β/(nΔ), the design scale of the output noise
	Radius              float64 // r_s = ε_out·β_Z/2: solver target r_s/2 plus float margin r_s/2
	SamplingRadius      float64 // r_b: ‖b̂ − b*‖/(nΔ) on the typical region of the coupled sampler
	ReleaseRadius       float64 // r = r_s + r_b, ‖Φ̂ − Φ*‖_F ≤ r
	OutputLaplaceScale  float64 // √m·2r/ε_out, Laplace scale per upper-triangle entry
	GradientBound       float64 // G = √(C(C−1)) + λ√(C(D−1)), gradient of the data part
	StartRadius         float64 // R₀ ≥ ‖Φ⁰‖ = ‖Π_K(−b/(nΔ))‖ on the typical region of b
	StartGap            float64 // min(G²/Δ, 2·g(Φ⁰) bound): V-FISTA's potential at Φ⁰
	Iterations          int     // T, the a-priori V-FISTA count (public)

	// δ > 0 only (§10): b ~ N(0, σ²I_m) with σ = PerturbationScale.
	Gaussian          bool    // Gaussian objective perturbation (δ > 0)
	Delta             float64 // δ requested (0: the pure-ε release)
	PerturbationDelta float64 // δ_b of the objective part
	OutputDelta       float64 // δ_out of the Gaussian output step (0 for a Laplace step)
	SubspaceQuantile  float64 // q: √ of the χ²_{2(C−1)} (1 − δ_b(1−η))-quantile
}

// calibrate derives the calibration for ε, n, C, D, h, λ (validated) and
// the Jacobian cap ρ_max and noise margin c_ν (MaxJacobianShare and
// NoiseMargin in every release).
func calibrate(eps float64, n, classes, dim int, h, lambda, jacobianShare, noiseMargin float64) Calibration {
	a := 1 / (2 * h)
	m := classes * dim * (dim + 1) / 2
	epsOut := OutputShare * eps
	// The perturbation is 2m + 1 coupled normals (noise.StandardNormalVec):
	// their law is within e^(±η) of the continuous one, η = (2m+1)·2⁻⁶⁶,
	// and the ideal mechanism is calibrated for ε − ε_out − 2η.
	slack := float64(2*m+1) * noise.CoupledNormalRatio
	epsObj := eps - epsOut - 2*slack
	s := sensitivity(classes)
	// t = nΔ: the larger of the Jacobian cap (𝒥 ≤ ρ_max·ε_obj), the
	// noise-margin rule t_ν and the floor n·max(Δ_min, C·a/κ_max) (lmgc.md §5).
	tJ := solveStrongConvexity(classes, a, jacobianShare*epsObj)
	floor := float64(n) * math.Max(MinStrongConvexity, float64(classes)*a/MaxConditionNumber)
	t := math.Max(noiseStrongConvexity(m, classes, dim, a, s, epsObj, tJ, noiseMargin), floor)
	jac := jacobianTerm(classes, a, t)
	epsB := epsObj - jac
	delta := t / float64(n)
	beta := s / epsB
	betaZ := ToleranceRatio * beta / t
	radius := epsOut * betaZ / 2
	rb := samplingRadius(m, beta, eps) / t
	r := radius + rb
	c := Calibration{
		Dim:                 m,
		Sensitivity:         s,
		Curvature:           a,
		StrongConvexity:     delta,
		JacobianEpsilon:     jac,
		PerturbationEpsilon: epsB,
		OutputEpsilon:       epsOut,
		CouplingSlack:       slack,
		PerturbationScale:   beta,
		OutputScale:         betaZ,
		Radius:              radius,
		SamplingRadius:      rb,
		ReleaseRadius:       r,
		OutputLaplaceScale:  math.Sqrt(float64(m)) * 2 * r / epsOut,
	}
	c.setSolver(classes, dim, h, lambda, perturbationNormBound(m, beta, eps)/t)
	return c
}

// setSolver fills the solver's geometry (§6), shared by the pure and the
// Gaussian calibration: smoothness, the gradient bound, the start's radius
// and gap, and the public iteration count that reaches Radius/2.
func (c *Calibration) setSolver(classes, dim int, h, lambda, r0 float64) {
	c.Smoothness = float64(classes)*c.Curvature + c.StrongConvexity
	c.GradientBound = math.Sqrt(float64(classes*(classes-1))) + lambda*math.Sqrt(float64(classes*(dim-1)))
	c.StartRadius = r0
	c.StartGap = math.Min(c.GradientBound*c.GradientBound/c.StrongConvexity,
		2*startDataBound(classes, dim, h, lambda, r0))
	c.Iterations = iterationsForGap(c.StartGap, c.StrongConvexity, c.Smoothness, c.Radius/2)
}

// perturbationNormBound bounds ‖b̂‖ = β·‖ĥ‖·‖ĝ‖ on the typical region of
// the coupled normals used by samplingRadius (‖h*‖² ≤ χ²-bound(m+1, x),
// ‖g*‖² ≤ χ²-bound(m, x), x = amp.TailLevel(ε), each normal within 2⁻⁴¹ of
// its ideal value), with a relative margin for rounding.
func perturbationNormBound(m int, beta, eps float64) float64 {
	x := amp.TailLevel(eps)
	const cell = 0x1p-41
	hT := math.Sqrt(amp.ChiSquareUpper(m+1, x)) + math.Sqrt(float64(m+1))*cell
	gT := math.Sqrt(amp.ChiSquareUpper(m, x)) + math.Sqrt(float64(m))*cell
	return beta * hT * gT * (1 + 1e-9)
}

// startDataBound bounds g(Φ⁰), the data part of the objective (average
// loss + λ-trace term, ≥ 0 on K) at any Φ⁰ ∈ K with ‖Φ⁰‖_F ≤ r0: a margin
// argument is z_c = 1 + x̃ᵀ(Φ_y − Φ_c)x̃ ≤ 1 + r0 (‖x̃‖ ≤ 1, Φ_c ⪰ 0) and
// ℓ_h(z) ≤ (z + h)⁺, so the loss is at most (C−1)(1 + h + r0); the trace
// term is at most λ·√(C(D−1))·r0 (docs/mechanisms/lmgc.md §6).
func startDataBound(classes, dim int, h, lambda, r0 float64) float64 {
	return float64(classes-1)*(1+h+r0) + lambda*math.Sqrt(float64(classes*(dim-1)))*r0
}

// samplingRadius bounds ‖b̂ − b*‖ for the perturbation b̂ = β·‖ĥ‖·ĝ built from
// coupled normals ĥ ∈ ℝ^(m+1), ĝ ∈ ℝ^m, against the ideal b* = β‖h*‖g*
// with h*, g* in the matching cells (|ĥᵢ − h*ᵢ| ≤ 2⁻⁴¹), on the typical
// region ‖h*‖² ≤ χ²-bound(m+1), ‖g*‖² ≤ χ²-bound(m) at the tail level
// x = amp.TailLevel(ε) (docs/mechanisms/lmgc.md §6):
//
//	‖b̂ − b*‖ ≤ β[√(m+1)·2⁻⁴¹·‖ĝ‖ + ‖h*‖·√m·2⁻⁴¹ + (γ_{m+1} + 4u)‖ĥ‖‖ĝ‖].
//
// ‖Φ*(b̂) − Φ*(b*)‖ ≤ ‖b̂ − b*‖/(nΔ) (strong convexity nΔ of the summed
// objective), which the caller divides by.
func samplingRadius(m int, beta, eps float64) float64 {
	x := amp.TailLevel(eps)
	const cell = 0x1p-41
	hT := math.Sqrt(amp.ChiSquareUpper(m+1, x))
	gT := math.Sqrt(amp.ChiSquareUpper(m, x))
	eh := math.Sqrt(float64(m+1)) * cell
	eg := math.Sqrt(float64(m)) * cell
	u := 0x1p-53
	gam := float64(m+1) * u / (1 - float64(m+1)*u)
	return beta * (eh*(gT+eg) + hT*eg + (gam+4*u)*(hT+eh)*(gT+eg)) * (1 + 1e-9)
}
