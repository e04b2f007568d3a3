package noise

import (
	"errors"
	"fmt"
	"math"

	gdp "github.com/google/differential-privacy/go/v3/noise"
)

// Laplace noise comes from the secure sampler of google/differential-privacy:
// a two-sided geometric variable on the grid g·ℤ, where g is the power of two
// ceil₂(b′/2⁴⁰) and b′ the scale handed to the library. Adding it to a value
// rounded to the same grid is exactly a discrete Laplace mechanism, so the
// floating-point output is a post-processing of an exactly analysed integer
// mechanism (Mironov 2012's attack has nothing to read in the low bits).
//
// Rounding x to the grid moves each coordinate by up to g/2, so neighbours
// whose true values differ by Δ₁ in ℓ₁ can differ by up to Δ₁ + F·g after
// rounding. The library's geometric parameter is λ = g/(b′+g), so the privacy
// loss is at most (Δ₁ + F·g)/(b′+g). With b′ = b·laplaceInflation(F) this is
// at most Δ₁/b = ε for every ε ≥ LaplaceMinEpsilon(F); see
// docs/privacy/noise.md for the derivation.

// laplaceGranularityParam is the library's granularityParam (2⁴⁰, unexported
// there). The grid g = ceil₂(b′/2⁴⁰) is recomputed here so that the input can
// be rounded without the overflow the library's x/g would hit for huge |x|;
// TestLaplaceGridMatchesLibrary pins this to the library's behaviour.
const laplaceGranularityParam = 1 << 40

// Scale limits keep the grid g a normal float64 and b′ far from overflow.
const (
	minLaplaceScale = 0x1p-900
	maxLaplaceScale = 0x1p900
)

// laplaceInflation returns c(F) = 1 + F·2⁻¹⁹, the factor by which the scale is
// inflated for an F-coordinate release so that grid rounding is paid for.
func laplaceInflation(f int) float64 {
	return 1 + float64(f)*0x1p-19
}

// LaplaceMinEpsilon returns ε_min(F) = 2⁻¹⁹·(1 + F·2⁻¹⁹): an F-coordinate
// release by AddLaplace/AddLaplaceVec at scale b is ε-DP for ℓ₁ sensitivity
// b·ε for every ε ≥ ε_min(F) (at most 2⁻¹⁸ ≈ 3.8e-6 whenever F ≤ 2¹⁹). For
// smaller ε the release is still (ε + F·2⁻³⁹)-DP.
func LaplaceMinEpsilon(f int) float64 {
	return 0x1p-19 * laplaceInflation(f)
}

// laplaceInflatedScale returns b′ ≥ b·c(F), rounded up.
func laplaceInflatedScale(scale float64, f int) float64 {
	return math.Nextafter(scale*laplaceInflation(f), math.Inf(1))
}

// laplaceGrid returns the library's granularity for scale b′ (ε = 1,
// sensitivity b′): the smallest power of two ≥ b′/2⁴⁰.
func laplaceGrid(inflated float64) float64 {
	x := inflated / laplaceGranularityParam
	frac, exp := math.Frexp(x)
	if frac == 0.5 {
		return x
	}
	return math.Ldexp(1, exp)
}

// roundToGrid rounds x to the nearest multiple of the power of two g without
// overflowing: once |x| ≥ 2⁵²·g, x is already a multiple of g.
func roundToGrid(x, g float64) float64 {
	if math.Abs(x) >= 0x1p52*g {
		return x
	}
	return math.Round(x/g) * g
}

func checkLaplaceScale(scale float64) error {
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale <= 0 {
		return fmt.Errorf("noise: Laplace scale %v must be finite and > 0", scale)
	}
	if scale < minLaplaceScale || scale > maxLaplaceScale {
		return fmt.Errorf("noise: Laplace scale %v outside supported range [2^-900, 2^900]", scale)
	}
	return nil
}

var errNonFinite = errors.New("noise: input value is not finite")

// laplaceDraw returns one draw of g·G, G two-sided geometric with parameter
// g/(b′+g), from the google library (called with x = 0, so the result is
// exactly the noise).
func laplaceDraw(inflated float64) (float64, error) {
	z, err := gdp.Laplace().AddNoiseFloat64(0, 1, inflated, 1, 0)
	if err != nil {
		return 0, fmt.Errorf("noise: secure Laplace sampler: %w", err)
	}
	return z, nil
}

// AddLaplace returns x rounded to the noise grid plus Laplace noise of scale
// b = scale (= Δ₁/ε). The result is ε-DP for |x − x′| ≤ b·ε whenever
// ε ≥ LaplaceMinEpsilon(1); the scale actually used is b·(1 + 2⁻¹⁹).
func AddLaplace(x, scale float64) (float64, error) {
	if err := checkLaplaceScale(scale); err != nil {
		return 0, err
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errNonFinite
	}
	inflated := laplaceInflatedScale(scale, 1)
	z, err := laplaceDraw(inflated)
	if err != nil {
		return 0, err
	}
	// Both terms are exact multiples of g; their float sum is the correctly
	// rounded exact sum, a post-processing of the discrete mechanism.
	return roundToGrid(x, laplaceGrid(inflated)) + z, nil
}

// AddLaplaceVec adds i.i.d. Laplace noise of scale b = scale to every
// coordinate of x in place. The release is ε-DP for ‖x − x′‖₁ ≤ b·ε whenever
// ε ≥ LaplaceMinEpsilon(len(x)); the scale actually used is
// b·(1 + len(x)·2⁻¹⁹). On error x is left unchanged.
func AddLaplaceVec(x []float64, scale float64) error {
	if err := checkLaplaceScale(scale); err != nil {
		return err
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errNonFinite
		}
	}
	if len(x) == 0 {
		return nil
	}
	inflated := laplaceInflatedScale(scale, len(x))
	g := laplaceGrid(inflated)
	out := make([]float64, len(x))
	for i, v := range x {
		z, err := laplaceDraw(inflated)
		if err != nil {
			return err
		}
		out[i] = roundToGrid(v, g) + z
	}
	copy(x, out)
	return nil
}

// laplaceLambda returns the grid g and the geometric parameter λ = g/(b′+g)
// of a one-coordinate AddLaplace at scale b: the noise is Z = g·G with
// P[G = k] ∝ e^{−λ|k|}.
func laplaceLambda(scale float64) (g, lambda float64) {
	inflated := laplaceInflatedScale(scale, 1)
	g = laplaceGrid(inflated)
	return g, g / (inflated + g)
}

// LaplaceTail returns P[Z > t] exactly for the noise Z that AddLaplace(x,
// scale) adds (a two-sided geometric on the grid g·ℤ, not the continuous
// Laplace): with m = ⌊t/g⌋ + 1, P[G ≥ m] = e^{−λm}/(1 + e^{−λ}) for m ≥ 1.
func LaplaceTail(scale, t float64) float64 {
	g, lambda := laplaceLambda(scale)
	tailG := func(m float64) float64 { return math.Exp(-lambda*m) / (1 + math.Exp(-lambda)) }
	m := math.Floor(t/g) + 1
	if m <= 0 {
		return 1 - tailG(1-m) // P[G ≥ m] = 1 − P[G ≤ m−1] = 1 − P[G ≥ 1−m] by symmetry
	}
	return tailG(m)
}

// LaplaceTailThreshold returns the smallest grid point t ≥ 0 with
// P[Z > t] ≤ p for the noise Z of AddLaplace(x, scale), computed for the
// discrete distribution actually sampled and the inflated scale actually
// used. A value x on the grid (every integer, for scales below 2⁴⁰) plus
// that noise exceeds x + t with probability at most p: the exact tail that
// partition selection's δ needs (docs/mechanisms/agg.md).
func LaplaceTailThreshold(scale, p float64) (float64, error) {
	if err := checkLaplaceScale(scale); err != nil {
		return 0, err
	}
	if math.IsNaN(p) || !(p > 0 && p < 0.5) {
		return 0, fmt.Errorf("noise: tail probability %v must be in (0, 0.5)", p)
	}
	g, lambda := laplaceLambda(scale)
	// e^{−λm}/(1+e^{−λ}) ≤ p  ⇔  m ≥ (ln(1/p) − ln(1+e^{−λ}))/λ.
	m := math.Max(1, math.Ceil((-math.Log(p)-math.Log1p(math.Exp(-lambda)))/lambda))
	t := (m - 1) * g
	// Floating-point rounding of the logarithms: step up until the exact
	// tail formula holds (at most a step or two).
	for LaplaceTail(scale, t) > p {
		t += g
	}
	return t, nil
}
