package noise

import (
	"math"
	"math/big"
)

// Coupled samplers: noise that is NOT released directly but enters a
// computation (objective perturbation, the Gram noise of input
// perturbation), whose privacy proof is written for a continuous law. Each
// draw is an exact discrete object on a fine grid whose probabilities are
// within a factor e^(±η) of the continuous law's mass on the matching grid
// cell, so a mechanism built on them is the continuous ("ideal") mechanism
// with (i) its noise density tilted by at most e^(±η) and (ii) every noise
// value moved by at most half a cell. docs/privacy/noise.md ("Coupled
// samplers") proves the constants below; mechanism/amp turns them into a
// privacy statement.
//
// The draws are NOT grid-safe releases: a value computed from them must be
// followed by a snapped-grid output step (AddGaussianVec / AddLaplaceVec)
// before it is released.

const (
	// CoupledGridBits: a standard normal draw is Z·2⁻⁴⁰ with
	// Z ~ N_ℤ(0, 2⁸⁰), so the cell half-width is 2⁻⁴¹.
	CoupledGridBits = 40
	// CoupledNormalRatio bounds |ln P(Z = k) − ln P(N ∈ cell k)| for one
	// standard normal draw on every cell with |k| ≤ 2⁴⁸ (256 standard
	// deviations); both laws put at most CoupledNormalTail outside.
	CoupledNormalRatio = 0x1p-66
	// CoupledNormalTail bounds the mass of |N| > 256 under either law
	// (2·e^(−2¹⁵), written as a float that is far larger).
	CoupledNormalTail = 0x1p-1000
	// CoupledNormalMax is the typical-region bound on |N| (256).
	CoupledNormalMax = 256
	// CoupledChiRatio bounds the log-ratio of one Chi draw's law to the
	// continuous χ law on the matching cells of its typical region, for
	// MinChiDegrees ≤ ν ≤ MaxChiDegrees (docs/privacy/noise.md derives it:
	// grid, acceptance evaluated in float64, tilt of the acceptance over a
	// cell; it assumes math.Exp and math.Log1p err by less than 1 ulp, as
	// the FreeBSD msun analyses they are ported from state).
	CoupledChiRatio = 0x1p-24
	// MinChiDegrees and MaxChiDegrees bound ν for the ratio analysis of Chi.
	MinChiDegrees = 64
	MaxChiDegrees = 1 << 36
	// ChiDeviationMax is the typical region |x − μ| ≤ 38 of a Chi draw (μ =
	// √(ν−1)); with x ≥ e^(−1.5)·√ν it carries all but ChiTail(ν) of the
	// mass under both laws.
	ChiDeviationMax = 38
)

// ChiTail bounds the mass outside the typical region of a Chi(ν) draw,
// under the continuous law and under the sampler's law alike:
// 4·e^(−0.7(ν−1)) (the region x < e^(−1.5)√ν, where the acceptance is below
// e^(−0.7(ν−1))) plus the normal tail beyond 38 standard deviations.
func ChiTail(nu int) float64 {
	return 4*math.Exp(-0.7*float64(nu-1)) + 2*CoupledNormalTail
}

// coupledScale is the integer scale s = 2⁴⁰ of the underlying discrete
// Gaussian: Z·2⁻⁴⁰ has the grid 2⁻⁴⁰ and, as a continuous counterpart,
// exactly N(0, 1).
const coupledScale = uint64(1) << CoupledGridBits

// StandardNormal returns one coupled standard normal draw: Z·2⁻⁴⁰ with Z the
// exact discrete Gaussian N_ℤ(0, 2⁸⁰) (conditioned on |Z| < 2⁵³, so the
// product is an exact float64). It is ratio-coupled to N(0, 1) on the cells
// [(k − ½)2⁻⁴⁰, (k + ½)2⁻⁴⁰) with constant CoupledNormalRatio.
func StandardNormal() float64 {
	return newDiscreteGaussian(coupledScale).coupledNormal()
}

// StandardNormalVec returns k independent coupled standard normal draws.
func StandardNormalVec(k int) []float64 {
	out := make([]float64, k)
	if k == 0 {
		return out
	}
	dg := newDiscreteGaussian(coupledScale)
	for i := range out {
		out[i] = dg.coupledNormal()
	}
	return out
}

func (d *discreteGaussian) coupledNormal() float64 {
	// |Z| < 2⁵³ and 2⁻⁴⁰ is a power of two: the product is exact.
	return math.Ldexp(float64(d.sample()), -CoupledGridBits)
}

// Chi returns one draw from the χ distribution with ν ≥ 2 degrees of
// freedom (density ∝ x^(ν−1)·e^(−x²/2) on x > 0; its square is χ²_ν). ν = 1
// returns |N|. For ν ≥ 2 it is rejection sampling from the proposal
// μ + N, μ = √(ν−1), N a coupled standard normal, accepted with the exact
// probability a = exp(−(ν−1)(w − log1p w)), w = N/μ (the ratio of the two
// densities, maximal 1 at x = μ), evaluated in float64 and decided by an
// exact Bernoulli trial on the float. The output is μ + N rounded once.
// ν outside [1, MaxChiDegrees] is clamped into it; the ratio coupling
// (CoupledChiRatio, ChiTail) is proved for ν ≥ MinChiDegrees, which callers
// check when they plan.
func Chi(nu int) float64 {
	if nu <= 1 {
		return math.Abs(StandardNormal())
	}
	if nu > MaxChiDegrees {
		nu = MaxChiDegrees
	}
	k := float64(nu - 1) // exact: ν ≤ 2⁴⁰
	mu := math.Sqrt(k)
	dg := newDiscreteGaussian(coupledScale)
	for {
		n := dg.coupledNormal()
		x := mu + n
		if !(x > 0) {
			continue
		}
		w := n / mu
		// w − log1p(w) ≥ 0 in exact arithmetic; rounding can make it a few
		// ulps negative near w = 0, where a = 1 within the tolerance.
		a := math.Exp(-k * math.Max(w-math.Log1p(w), 0))
		if bernoulliFloat(a) {
			return x
		}
	}
}

// bernoulliFloat returns true with probability exactly p for a float64
// p ∈ [0, 1] (a dyadic rational m·2^e): one comparison of a lazily drawn
// uniform integer with m, by bernoulliRatioBig.
func bernoulliFloat(p float64) bool {
	if !(p > 0) {
		return false
	}
	if p >= 1 {
		return true
	}
	frac, exp := math.Frexp(p) // p = frac·2^exp, frac ∈ [½, 1), exp ≤ 0
	mant := uint64(math.Ldexp(frac, 53))
	var num, den big.Int
	num.SetUint64(mant)
	den.Lsh(big.NewInt(1), uint(53-exp))
	return bernoulliRatioBig(&num, &den)
}
