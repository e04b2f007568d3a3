package noise

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// Gaussian noise is the exact discrete Gaussian N_ℤ(0, s²) of Canonne,
// Kamath & Steinke (2020), "The Discrete Gaussian for Differential Privacy"
// (CKS), placed on a power-of-two grid g: the release is r_g(x) + g·Z with
// r_g rounding to the nearest multiple of g and Z ~ N_ℤ(0, s²). Sampling
// uses only uniform integers and exact integer/rational arithmetic
// (math/big where 64 bits do not suffice), so the noise distribution is
// exactly the one analysed; the float output is the correctly rounded exact
// sum, a post-processing.
//
// Grid and scale, for σ requested on F coordinates (docs/privacy/noise.md):
//
//	g    = largest power of two with g ≤ σ·2⁻³⁰/√F   (data-independent)
//	s    = ⌈(1 + 2⁻¹⁰)·σ/g⌉ + 1                       (an integer, so s² is exact)
//
// Rounding moves the ℓ₂ distance of neighbours by at most √F·g ≤ 2⁻³⁰σ, and
// the scale is inflated by 1 + 2⁻¹⁰, so the integer shift μ satisfies
// ‖μ‖₂/s ≤ Δ₂/σ whenever Δ₂ ≥ GaussianMinRatio·σ. The release then has the
// privacy of a Gaussian with ratio Δ₂/σ: ½(Δ₂/σ)²-zCDP (CKS for one
// coordinate; independent coordinates add up), i.e. Rényi divergence
// α(Δ₂/σ)²/2 at every order α.

// GaussianMinRatio is the smallest ratio Δ₂/σ for which the grid rounding of
// AddGaussian/AddGaussianVec is covered by the internal inflation: 2⁻²⁰
// (noise multipliers σ/Δ₂ up to about 10⁶).
const GaussianMinRatio = 0x1p-20

const (
	// gaussianGridBits: σ/g ≥ 2³⁰·√F, so rounding costs ≤ 2⁻³⁰σ in ℓ₂.
	gaussianGridBits = 30
	// gaussianInflation is 1 + 2⁻¹⁰: it covers 2⁻³⁰σ of extra sensitivity
	// for every Δ₂ ≥ 2⁻²⁰σ.
	gaussianInflation = 1 + 0x1p-10
	// maxGaussianDim bounds F so that s < 2⁴² and |Z| < 2⁵³ is a ≥ 2¹¹σ cap.
	maxGaussianDim = 1 << 20
	// maxDiscreteMagnitude: draws are conditioned on |Z| < 2⁵³ so that g·Z is
	// an exact float64; with s < 2⁴² the conditioning event has probability
	// below exp(−2²¹), far below any δ of interest.
	maxDiscreteMagnitude = 1 << 53
	minGaussianSigma     = 0x1p-900
	maxGaussianSigma     = 0x1p900
)

// gaussianParams returns the grid g and integer scale s for σ on f
// coordinates.
func gaussianParams(sigma float64, f int) (g float64, s uint64, err error) {
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma <= 0 {
		return 0, 0, fmt.Errorf("noise: Gaussian sigma %v must be finite and > 0", sigma)
	}
	if sigma < minGaussianSigma || sigma > maxGaussianSigma {
		return 0, 0, fmt.Errorf("noise: Gaussian sigma %v outside supported range [2^-900, 2^900]", sigma)
	}
	if f < 1 || f > maxGaussianDim {
		return 0, 0, fmt.Errorf("noise: Gaussian dimension %d outside [1, %d]", f, maxGaussianDim)
	}
	// The factor (1 − 2⁻⁴⁰) absorbs the rounding of √F and of the division,
	// so the power of two below it certainly satisfies g·√F ≤ 2⁻³⁰σ.
	bound := sigma / (math.Ldexp(math.Sqrt(float64(f)), gaussianGridBits)) * (1 - 0x1p-40)
	_, exp := math.Frexp(bound) // bound = frac·2^exp, frac ∈ [½, 1)
	g = math.Ldexp(1, exp-1)
	// σ/g is exact (g is a power of two); the +1 covers the rounding of the
	// product, so s ≥ (1 + 2⁻¹⁰)·σ/g.
	s = uint64(math.Ceil(sigma/g*gaussianInflation)) + 1
	return g, s, nil
}

// AddGaussian returns x rounded to a fine grid plus discrete Gaussian noise of
// standard deviation about σ·(1 + 2⁻¹⁰). The release has the privacy of a
// Gaussian mechanism with ratio Δ₂/σ for |x − x′| ≤ Δ₂ whenever
// Δ₂ ≥ GaussianMinRatio·σ.
func AddGaussian(x, sigma float64) (float64, error) {
	v := []float64{x}
	if err := AddGaussianVec(v, sigma); err != nil {
		return 0, err
	}
	return v[0], nil
}

// AddGaussianVec adds i.i.d. discrete Gaussian noise to every coordinate of x
// in place (grid and scale chosen from σ and len(x) only). The release has
// the privacy of a Gaussian mechanism with ratio Δ₂/σ for ‖x − x′‖₂ ≤ Δ₂
// whenever Δ₂ ≥ GaussianMinRatio·σ. On error x is left unchanged.
func AddGaussianVec(x []float64, sigma float64) error {
	if len(x) == 0 {
		if _, _, err := gaussianParams(sigma, 1); err != nil {
			return err
		}
		return nil
	}
	g, s, err := gaussianParams(sigma, len(x))
	if err != nil {
		return err
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errNonFinite
		}
	}
	dg := newDiscreteGaussian(s)
	out := make([]float64, len(x))
	for i, v := range x {
		// g·Z is exact (|Z| < 2⁵³, g a normal power of two).
		out[i] = roundToGrid(v, g) + g*float64(dg.sample())
	}
	copy(x, out)
	return nil
}

// discreteGaussian samples N_ℤ(0, s²) for an integer s ≥ 1, i.e.
// P[Z = z] ∝ exp(−z²/(2s²)), by CKS Algorithm 3 with t = ⌊s⌋ + 1 = s + 1.
// It keeps scratch big.Ints, so one value must not be shared by goroutines.
type discreteGaussian struct {
	s, t uint64
	tBig big.Int // t
	sSq  big.Int // s²
	den  big.Int // 2·s²·t², the denominator of the acceptance exponent
	// scratch
	a, num, q, r, denK, k big.Int
}

func newDiscreteGaussian(s uint64) *discreteGaussian {
	d := &discreteGaussian{s: s, t: s + 1}
	d.sSq.SetUint64(s)
	d.sSq.Mul(&d.sSq, &d.sSq)
	d.tBig.SetUint64(d.t)
	d.den.Mul(&d.sSq, &d.tBig)
	d.den.Mul(&d.den, &d.tBig)
	d.den.Lsh(&d.den, 1)
	return d
}

// sample returns one draw of N_ℤ(0, s²) conditioned on |Z| < 2⁵³.
func (d *discreteGaussian) sample() int64 {
	for {
		y, ok := discreteLaplace(d.t)
		if !ok {
			continue
		}
		// Accept with probability exp(−(|Y| − σ²/t)²/(2σ²))
		// = exp(−(|Y|·t − s²)² / (2·s²·t²)).
		abs := y
		if abs < 0 {
			abs = -abs
		}
		d.a.SetInt64(abs)
		d.a.Mul(&d.a, &d.tBig)
		d.a.Sub(&d.a, &d.sSq)
		d.num.Mul(&d.a, &d.a)
		if d.bernoulliExpBig(&d.num, &d.den) {
			return y
		}
	}
}

// bernoulliExpBig returns true with probability exp(−num/den) (CKS
// Algorithm 1, with the integer part peeled off as Bernoulli(exp(−1)) draws).
func (d *discreteGaussian) bernoulliExpBig(num, den *big.Int) bool {
	d.q.QuoRem(num, den, &d.r)
	// Each Bernoulli(exp(−1)) fails with probability 1 − 1/e, so a quotient
	// beyond 2⁶⁴ is rejected with probability 1 − e^(−2⁶⁴) either way.
	q := uint64(math.MaxUint64)
	if d.q.IsUint64() {
		q = d.q.Uint64()
	}
	for i := uint64(0); i < q; i++ {
		if !bernoulliExpMinusOne() {
			return false
		}
	}
	if d.r.Sign() == 0 {
		return true
	}
	// Bernoulli(exp(−γ)) for γ = r/den ∈ (0, 1): count K until a
	// Bernoulli(γ/K) fails; return whether K is odd.
	k := uint64(1)
	for {
		d.k.SetUint64(k)
		d.denK.Mul(den, &d.k)
		if !bernoulliRatioBig(&d.r, &d.denK) {
			break
		}
		k++
	}
	return k%2 == 1
}

// discreteLaplace runs one round of CKS Algorithm 2 with s = 1: on success
// (ok) y has P[y] ∝ exp(−|y|/t). Rounds fail by design (rejection) and, with
// negligible probability, when |y| would reach 2⁵³.
func discreteLaplace(t uint64) (y int64, ok bool) {
	u := IntN(t)
	if !bernoulliExpRatio(u, t) {
		return 0, false
	}
	v := uint64(0)
	for bernoulliExpMinusOne() {
		v++
	}
	// x = u + t·v must stay below 2⁵³ (see maxDiscreteMagnitude).
	if v > (maxDiscreteMagnitude-1-u)/t {
		return 0, false
	}
	x := int64(u + t*v)
	negative := Uint64()&1 == 1
	if negative && x == 0 {
		return 0, false
	}
	if negative {
		return -x, true
	}
	return x, true
}

// bernoulliExpMinusOne returns true with probability exp(−1) (CKS
// Algorithm 1 with γ = 1: A ~ Bernoulli(1/K)).
func bernoulliExpMinusOne() bool {
	k := uint64(1)
	for IntN(k) == 0 {
		k++
	}
	return k%2 == 1
}

// bernoulliExpRatio returns true with probability exp(−u/t) for 0 ≤ u < t
// (CKS Algorithm 1 with γ = u/t: A ~ Bernoulli(u/(t·K))).
func bernoulliExpRatio(u, t uint64) bool {
	if u == 0 {
		return true
	}
	k := uint64(1)
	for {
		hi, tk := bits.Mul64(t, k)
		var a bool
		if hi == 0 {
			a = IntN(tk) < u
		} else {
			// t·K ≥ 2⁶⁴ needs K > 2²², reached with probability < 1/(2²²)!;
			// handled exactly all the same.
			var n, dk big.Int
			n.SetUint64(u)
			dk.SetUint64(t)
			dk.Mul(&dk, new(big.Int).SetUint64(k))
			a = bernoulliRatioBig(&n, &dk)
		}
		if !a {
			break
		}
		k++
	}
	return k%2 == 1
}

// bernoulliRatioBig returns true with probability num/den for 0 ≤ num ≤ den,
// den > 0. It compares a lazily generated uniform U ∈ [0, den) with num,
// most significant word first: U is built from uniform words of the bit
// length of den and rejected if U ≥ den, which makes it exactly uniform on
// [0, den); nearly always the first word decides.
func bernoulliRatioBig(num, den *big.Int) bool {
	nw, dw := num.Bits(), den.Bits()
	top := len(dw) - 1
	topBits := den.BitLen() - top*bits.UintSize
	topMask := big.Word(math.MaxUint)
	if topBits < bits.UintSize {
		topMask = big.Word(1)<<uint(topBits) - 1
	}
	word := func(ws []big.Word, i int) big.Word {
		if i < len(ws) {
			return ws[i]
		}
		return 0
	}
	for {
		eqDen, eqNum := true, true
		decided, result, rejected := false, false, false
		for i := top; i >= 0; i-- {
			u := big.Word(Uint64())
			if i == top {
				u &= topMask
			}
			if eqDen {
				if di := dw[i]; u > di {
					rejected = true
					break
				} else if u < di {
					eqDen = false
				}
			}
			if !decided && eqNum {
				if ni := word(nw, i); u < ni {
					decided, result = true, true
				} else if u > ni {
					decided, result = true, false
				}
			}
			if decided && !eqDen {
				return result
			}
		}
		if rejected || eqDen {
			continue // U ≥ den: draw again
		}
		// U == num (undecided until the end) means U < num is false.
		return result
	}
}
