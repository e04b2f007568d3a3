package noise

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"math/bits"
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

// coupledBits: the discrete Gaussian behind the coupled normals has scale
// s = 2^coupledBits, and Z·2^(−coupledBits) has, as a continuous
// counterpart, exactly N(0, 1).
const coupledBits = CoupledGridBits

// StandardNormal returns one coupled standard normal draw: Z·2⁻⁴⁰ with Z the
// exact discrete Gaussian N_ℤ(0, 2⁸⁰) (conditioned on |Z| < 2⁵³, so the
// product is an exact float64). It is ratio-coupled to N(0, 1) on the cells
// [(k − ½)2⁻⁴⁰, (k + ½)2⁻⁴⁰) with constant CoupledNormalRatio.
func StandardNormal() float64 {
	var r pow2Gaussian
	return r.normal()
}

// StandardNormalVec returns k independent coupled standard normal draws.
func StandardNormalVec(k int) []float64 {
	out := make([]float64, k)
	var r pow2Gaussian
	for i := range out {
		out[i] = r.normal()
	}
	return out
}

// pow2Gaussian samples the exact discrete Gaussian N_ℤ(0, s²) for a
// power of two s = 2^k by CKS Algorithm 3 with t = s (any t > 0 is correct;
// ⌊s⌋ + 1 is only CKS's choice for speed). With s = t = 2^k every rational
// in the algorithm has a power-of-two denominator, so every Bernoulli trial
// is a comparison of random bits with an integer of at most 128 bits:
//
//   - Lap_ℤ(t) (CKS Algorithm 2): U = k random bits; accept with
//     Bernoulli(exp(−U/t)), i.e. Algorithm 1 with Bernoulli(U/(tK)) =
//     Bernoulli(1/K)·Bernoulli(U/2^k); V counts Bernoulli(exp(−1))
//     successes; X = U + tV; random sign, rejecting (−, 0).
//   - accept Y with Bernoulli(exp(−(|Y| − s)²/(2s²))): γ = d²/2^(2k+1),
//     d = |Y| − s, |d| < 2⁵³, so d² < 2¹⁰⁶ is a 128-bit integer; its integer
//     part is peeled off as Bernoulli(exp(−1)) trials and the fraction r is
//     used as Bernoulli(1/K)·Bernoulli(r/2^(2k+1)).
//
// Draws are conditioned on |Z| < 2⁵³ as in discreteGaussian. Random bits
// come from crypto/rand through a small buffer. It is the same distribution
// as newDiscreteGaussian(2^k) (TestPow2GaussianExactPMF checks the pmf for
// small k), without big.Int arithmetic.
type pow2Gaussian struct {
	buf  [512]byte
	pos  int
	res  uint64 // reservoir of unused random bits
	nres uint   // number of bits left in res
	k    uint   // s = t = 2^k; 0 means CoupledGridBits
}

func (r *pow2Gaussian) u64() uint64 {
	if r.pos == 0 || r.pos+8 > len(r.buf) {
		if _, err := rand.Read(r.buf[:]); err != nil {
			panic("noise: crypto/rand failed: " + err.Error())
		}
		r.pos = 0
	}
	v := binary.LittleEndian.Uint64(r.buf[r.pos:])
	r.pos += 8
	return v
}

// bitsN returns n ≤ 64 uniform random bits, taken from a reservoir of
// unused bits of earlier words (disjoint bits of uniform words are
// independent and uniform), so that short trials do not consume 64 bits.
func (r *pow2Gaussian) bitsN(n uint) uint64 {
	switch {
	case n == 0:
		return 0
	case n == 64:
		return r.u64()
	}
	if r.nres < n {
		r.res, r.nres = r.u64(), 64
	}
	v := r.res & (uint64(1)<<n - 1)
	r.res >>= n
	r.nres -= n
	return v
}

// intn returns a uniform integer in [0, n), n > 0, by rejection on
// bits.Len64(n − 1) random bits (at most two tries on average).
func (r *pow2Gaussian) intn(n uint64) uint64 {
	if n == 1 {
		return 0
	}
	w := uint(bits.Len64(n - 1))
	for {
		if v := r.bitsN(w); v < n {
			return v
		}
	}
}

// bernInvK returns true with probability 1/K.
func (r *pow2Gaussian) bernInvK(k uint64) bool { return r.intn(k) == 0 }

// bernDyadic returns true with probability (hi·2⁶⁴ + lo)/2^n for a
// numerator below 2^n, n ≤ 128: the n random bits, most significant first,
// compared with the numerator.
func (r *pow2Gaussian) bernDyadic(hi, lo uint64, n uint) bool {
	if n > 64 {
		h := r.bitsN(n - 64)
		if h != hi {
			return h < hi
		}
		return r.u64() < lo
	}
	return r.bitsN(n) < lo
}

// bernExpMinusOne returns true with probability exp(−1) (CKS Algorithm 1).
func (r *pow2Gaussian) bernExpMinusOne() bool {
	k := uint64(1)
	for r.bernInvK(k) {
		k++
	}
	return k%2 == 1
}

// bernExpFrac returns true with probability exp(−num/2^n) for a numerator
// num = hi·2⁶⁴ + lo < 2^n (CKS Algorithm 1: count K until a
// Bernoulli(num/(2^n·K)) fails; return whether K is odd).
func (r *pow2Gaussian) bernExpFrac(hi, lo uint64, n uint) bool {
	if hi == 0 && lo == 0 {
		return true
	}
	k := uint64(1)
	for r.bernInvK(k) && r.bernDyadic(hi, lo, n) {
		k++
	}
	return k%2 == 1
}

// laplace runs one round of CKS Algorithm 2 with t = 2^k.
func (r *pow2Gaussian) laplace() (int64, bool) {
	k := r.k
	u := r.bitsN(k)
	if !r.bernExpFrac(0, u, k) {
		return 0, false
	}
	v := uint64(0)
	for r.bernExpMinusOne() {
		v++
	}
	t := uint64(1) << k
	if v > (maxDiscreteMagnitude-1-u)/t {
		return 0, false
	}
	x := int64(u + t*v)
	neg := r.u64()&1 == 1
	if neg && x == 0 {
		return 0, false
	}
	if neg {
		return -x, true
	}
	return x, true
}

// sample returns one draw of N_ℤ(0, 2^(2k)) conditioned on |Z| < 2⁵³.
func (r *pow2Gaussian) sample() int64 {
	if r.k == 0 {
		r.k = coupledBits
	}
	k := r.k
	s := int64(1) << k
	for {
		y, ok := r.laplace()
		if !ok {
			continue
		}
		a := y
		if a < 0 {
			a = -a
		}
		d := a - s
		if d < 0 {
			d = -d
		}
		hi, lo := bits.Mul64(uint64(d), uint64(d))
		// γ = d²/2^(2k+1): integer part q, fraction (rhi, rlo)/2^(2k+1).
		n := 2*k + 1
		var q, rhi, rlo uint64
		if n < 64 && hi>>n != 0 {
			// q ≥ 2⁶⁴: acceptance below exp(−2⁶⁴); rejected (as
			// bernoulliExpBig does in effect), only for tiny k in tests.
			continue
		}
		if n >= 64 {
			q = hi >> (n - 64)
			rhi = hi & (uint64(1)<<(n-64) - 1)
			rlo = lo
		} else {
			q = hi<<(64-n) | lo>>n
			rlo = lo & (uint64(1)<<n - 1)
		}
		accept := true
		for i := uint64(0); i < q && accept; i++ {
			accept = r.bernExpMinusOne()
		}
		if accept && r.bernExpFrac(rhi, rlo, n) {
			return y
		}
	}
}

func (r *pow2Gaussian) normal() float64 {
	// |Z| < 2⁵³ and 2⁻⁴⁰ is a power of two: the product is exact.
	return math.Ldexp(float64(r.sample()), -CoupledGridBits)
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
	k := float64(nu - 1) // exact: ν ≤ 2³⁶
	mu := math.Sqrt(k)
	var dg pow2Gaussian
	for {
		n := dg.normal()
		x := mu + n
		if !(x > 0) {
			continue
		}
		w := n / mu
		// w − log1p(w) ≥ 0 in exact arithmetic; rounding can make it a few
		// ulps negative near w = 0, where a = 1 within the tolerance.
		a := math.Exp(-k * math.Max(w-math.Log1p(w), 0))
		if dg.bernFloat(a) {
			return x
		}
	}
}

// bernoulliFloat returns true with probability exactly p for a float64
// p ∈ [0, 1] (a dyadic rational m·2^e).
func bernoulliFloat(p float64) bool {
	var r pow2Gaussian
	return r.bernFloat(p)
}

// bernFloat returns true with probability exactly p for a float64
// p ∈ [0, 1]: with p = m/2^n (m < 2⁵³ an integer, n ≤ 1127), compare n
// uniform random bits, most significant first, with m — the first n − 53
// must all be 0, then 53 bits must be below m.
func (r *pow2Gaussian) bernFloat(p float64) bool {
	if !(p > 0) {
		return false
	}
	if p >= 1 {
		return true
	}
	frac, exp := math.Frexp(p) // p = frac·2^exp, frac ∈ [½, 1), exp ≤ 0
	m := uint64(math.Ldexp(frac, 53))
	for zeros := uint(-exp); zeros > 0; {
		c := min(zeros, 64)
		if r.bitsN(c) != 0 {
			return false
		}
		zeros -= c
	}
	return r.bitsN(53) < m
}
