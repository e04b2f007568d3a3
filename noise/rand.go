package noise

import (
	"crypto/rand"
	"encoding/binary"
	"math"
)

// Uint64 returns 64 uniformly random bits from crypto/rand. A failing system
// randomness source is unrecoverable for a DP system, so it panics rather
// than returning weak randomness.
func Uint64() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("noise: crypto/rand failed: " + err.Error())
	}
	return binary.LittleEndian.Uint64(b[:])
}

// Uniform returns a uniform draw from [0, 1) with 53 random bits.
func Uniform() float64 {
	return float64(Uint64()>>11) / (1 << 53)
}

// UniformOpen returns a uniform draw from (0, 1), safe to pass to log.
func UniformOpen() float64 {
	for {
		if u := Uniform(); u > 0 {
			return u
		}
	}
}

// IntN returns a uniform integer in [0, n) without modulo bias. n must be > 0.
func IntN(n uint64) uint64 {
	if n == 0 {
		panic("noise: IntN with n == 0")
	}
	// Rejection sampling on the largest multiple of n below 2^64.
	limit := math.MaxUint64 - math.MaxUint64%n
	for {
		v := Uint64()
		if v < limit {
			return v % n
		}
	}
}

// Normal returns a standard normal draw (Box–Muller). It is meant for
// data-independent randomness (directions, random features); calibrated
// Gaussian privacy noise must use the discrete Gaussian instead.
func Normal() float64 {
	u1 := UniformOpen()
	u2 := Uniform()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// Exponential returns a draw from the exponential distribution with rate 1.
func Exponential() float64 {
	return -math.Log(UniformOpen())
}

// Cauchy returns a standard Cauchy draw (location 0, scale 1).
func Cauchy() float64 {
	return math.Tan(math.Pi * (UniformOpen() - 0.5))
}

// LaplaceFloat returns a Laplace(0, 1) draw computed in plain floating point.
// Use it only for data-independent randomness (e.g. random Fourier
// frequencies of the Cauchy kernel); privacy noise goes through Laplace.
func LaplaceFloat() float64 {
	e := Exponential()
	if Uint64()&1 == 0 {
		return -e
	}
	return e
}
