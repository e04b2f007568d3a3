package lmgc

import (
	"math"

	"github.com/dpsql/dpsql/mechanism/amp"
	"github.com/dpsql/dpsql/noise"
)

// Gaussian objective perturbation for δ > 0 (docs/mechanisms/lmgc.md §10).

// OutputDeltaShare is the share of δ given to the Gaussian output step; the
// rest, δ_b, goes to the objective perturbation. The perturbation's σ
// depends on δ_b only through √log(1/δ_b), so the split matters little.
const OutputDeltaShare = 0.1

// chiSquareEvenSurvival returns P(χ²_k > x) for even k = 2j:
// e^(−x/2)·Σ_{i<j} (x/2)^i/i!, summed in log space (stable for large j).
func chiSquareEvenSurvival(k int, x float64) float64 {
	if x <= 0 {
		return 1
	}
	j := k / 2
	half := x / 2
	lh := math.Log(half)
	// Terms rise up to i ≈ half and fall after; log-sum-exp around the max.
	mx := math.Inf(-1)
	logs := make([]float64, j)
	for i := 0; i < j; i++ {
		lg, _ := math.Lgamma(float64(i + 1))
		logs[i] = float64(i)*lh - lg - half
		mx = math.Max(mx, logs[i])
	}
	var s float64
	for _, l := range logs {
		s += math.Exp(l - mx)
	}
	return math.Min(1, math.Exp(mx+math.Log(s)))
}

// chiSquareEvenQuantile returns an x (rounded up, the safe end of a
// bisection) with P(χ²_k > x) ≤ p, k even.
func chiSquareEvenQuantile(k int, p float64) float64 {
	lo, hi := 0.0, amp.ChiSquareUpper(k, -math.Log(p))*(1+1e-9) // Laurent–Massart: already ≤ p
	for chiSquareEvenSurvival(k, hi) > p {                      // guards rounding
		hi *= 2
	}
	return bisectUp(lo, hi, func(x float64) bool { return chiSquareEvenSurvival(k, x) <= p })
}

// gradientSubspaceDim is k = 2(C−1): the difference of two rows' loss
// gradients lies in {u⊗P̂ + u′⊗P̂′ : u, u′ ⊥ 1} (each row's class weights α
// sum to zero), a subspace fixed by the two rows alone (§10).
func gradientSubspaceDim(classes int) int { return 2 * (classes - 1) }

// gaussNoiseRatio returns u = S/σ for the objective part: the privacy loss
// of the Gaussian density is at most u·q + u²/2 when the projection of b on
// the k-dimensional gradient subspace has norm ≤ σ·q, which holds with
// probability ≥ 1 − δ for q² the χ²_k (1 − δ)-quantile; u·q + u²/2 = ε_b
// gives u = √(q² + 2ε_b) − q (written to avoid cancellation).
func gaussNoiseRatio(epsB, q float64) float64 {
	return 2 * epsB / (math.Sqrt(q*q+2*epsB) + q)
}

// gaussStrongConvexity returns t_ν for the Gaussian perturbation: the
// smallest t ≥ lo (to float64 bisection, safe end kept) with
//
//	√m·σ(t)/t ≤ c_ν·D·√C,   σ(t) = S/u(ε_obj − 𝒥(t)),
//
// i.e. E‖b‖/(nΔ) ≈ √m·σ/(nΔ) is at most c_ν·D·√C. The left side is strictly
// decreasing in t (σ falls as 𝒥 falls), so the root is unique.
func gaussStrongConvexity(m, classes, dim int, a, s, epsObj, q, lo, noiseMargin float64) float64 {
	target := noiseMargin * float64(dim) * math.Sqrt(float64(classes))
	ok := func(t float64) bool {
		u := gaussNoiseRatio(epsObj-jacobianTerm(classes, a, t), q)
		return math.Sqrt(float64(m))*s/u <= target*t
	}
	if ok(lo) {
		return lo
	}
	hi := 2 * lo
	for !ok(hi) {
		lo, hi = hi, 2*hi
	}
	return bisectUp(lo, hi, ok)
}

// calibrateGauss derives the calibration of the δ > 0 release: b ~ N(0, σ²I_m)
// (σ = S/u), the same Jacobian cap and noise-margin rule with E‖b‖ ≈ √m·σ,
// and a Gaussian output step (ε_out, δ_out) whose σ_out is ρ_r·σ/(nΔ).
// gaussOut is false when m exceeds the Gaussian sampler's limit; the
// output step is then the Laplace step of the pure release and δ_out = 0.
func calibrateGauss(eps, delta float64, n, classes, dim int, h, lambda, jacobianShare, noiseMargin float64) Calibration {
	a := 1 / (2 * h)
	m := classes * dim * (dim + 1) / 2
	gaussOut := m <= amp.MaxGaussianDim
	epsOut := OutputShare * eps
	deltaOut := 0.0
	if gaussOut {
		deltaOut = OutputDeltaShare * delta
	}
	deltaB := delta - deltaOut
	// m coupled normals: the implemented law is within e^(±η) of the ideal,
	// η = m·2⁻⁶⁶; the ideal is calibrated at ε_obj = ε − ε_out − 2η and
	// δ_b·(1 − η) ≤ δ_b·e^(−η), so the implemented part is (ε_b + 𝒥 + 2η, δ_b).
	slack := float64(m) * noise.CoupledNormalRatio
	epsObj := eps - epsOut - 2*slack
	k := gradientSubspaceDim(classes)
	q := math.Sqrt(chiSquareEvenQuantile(k, deltaB*(1-slack)))
	s := sensitivity(classes)
	tJ := solveStrongConvexity(classes, a, jacobianShare*epsObj)
	floor := float64(n) * math.Max(MinStrongConvexity, float64(classes)*a/MaxConditionNumber)
	t := math.Max(gaussStrongConvexity(m, classes, dim, a, s, epsObj, q, tJ, noiseMargin), floor)
	jac := jacobianTerm(classes, a, t)
	epsB := epsObj - jac
	sigma := s / gaussNoiseRatio(epsB, q)
	nDelta := t / float64(n)
	betaZ := ToleranceRatio * sigma / t
	var radius float64
	if gaussOut {
		// σ_out = GaussianSigma(2r, ε_out, δ_out) is linear in r: r_s is set
		// so that σ_out = β_Z (up to r_b ≪ r_s).
		unit, err := amp.GaussianSigma(1, epsOut, deltaOut)
		if err != nil || !(unit > 0) {
			unit = math.NaN() // Plan refuses the degenerate calibration
		}
		radius = betaZ / (2 * unit)
	} else {
		radius = epsOut * betaZ / 2 // as in the pure release (§6)
	}
	rb := gaussSamplingRadius(m, sigma, eps) / t
	r := radius + rb
	c := Calibration{
		Dim:                 m,
		Sensitivity:         s,
		Curvature:           a,
		StrongConvexity:     nDelta,
		JacobianEpsilon:     jac,
		PerturbationEpsilon: epsB,
		OutputEpsilon:       epsOut,
		CouplingSlack:       slack,
		PerturbationScale:   sigma,
		OutputScale:         betaZ,
		Radius:              radius,
		SamplingRadius:      rb,
		ReleaseRadius:       r,
		OutputLaplaceScale:  math.Sqrt(float64(m)) * 2 * r / epsOut,
		Gaussian:            true,
		Delta:               delta,
		PerturbationDelta:   deltaB,
		OutputDelta:         deltaOut,
		SubspaceQuantile:    q,
	}
	c.setSolver(classes, dim, h, lambda, gaussNormBound(m, sigma, eps)/t)
	return c
}

// gaussNormBound bounds ‖b̂‖ = σ‖ĝ‖ on the typical region ‖g*‖² ≤
// χ²-bound(m, x) (x = amp.TailLevel(ε), each normal within 2⁻⁴¹ of its
// ideal value), with a relative margin for rounding.
func gaussNormBound(m int, sigma, eps float64) float64 {
	x := amp.TailLevel(eps)
	gT := math.Sqrt(amp.ChiSquareUpper(m, x)) + math.Sqrt(float64(m))*0x1p-41
	return sigma * gT * (1 + 1e-9)
}

// gaussSamplingRadius bounds ‖b̂ − b*‖ for b̂ = σ·ĝ (svec coordinates, the
// off-diagonal entries computed as fl(fl(σĝ)/√2)) against b* = σg* with g* in
// ĝ's cells: σ‖ĝ − g*‖ ≤ σ√m·2⁻⁴¹, plus at most 4u relative rounding per
// coordinate, ≤ 4u·σ‖ĝ‖ on the typical region.
func gaussSamplingRadius(m int, sigma, eps float64) float64 {
	x := amp.TailLevel(eps)
	eg := math.Sqrt(float64(m)) * 0x1p-41
	gT := math.Sqrt(amp.ChiSquareUpper(m, x)) + eg
	return sigma * (eg + 4*0x1p-53*gT) * (1 + 1e-9)
}
