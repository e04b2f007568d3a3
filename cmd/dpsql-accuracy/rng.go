package main

import "math"

// rng is a small deterministic generator (xoshiro256**, seeded by
// splitmix64) for the public split and the synthetic data: the benchmark's
// randomness is public and reproducible from its seeds, and no privacy
// noise comes from here (the server draws that from noise/).
type rng struct{ s [4]uint64 }

func newRNG(seed uint64) *rng {
	r := &rng{}
	x := seed
	for i := range r.s {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		r.s[i] = z ^ (z >> 31)
	}
	return r
}

func rotl(x uint64, k uint) uint64 { return (x << k) | (x >> (64 - k)) }

func (r *rng) next() uint64 {
	s := &r.s
	out := rotl(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = rotl(s[3], 45)
	return out
}

// float64 is uniform in [0, 1).
func (r *rng) float64() float64 { return float64(r.next()>>11) / (1 << 53) }

// intN is uniform in [0, n) (n small; the modulo bias is below 2⁻⁴⁰).
func (r *rng) intN(n int) int { return int(r.next() % uint64(n)) }

// norm is a standard normal draw (Box–Muller).
func (r *rng) norm() float64 {
	u := 1 - r.float64() // (0, 1]
	v := r.float64()
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}

// perm is a uniformly random permutation of 0..n-1 (Fisher–Yates).
func (r *rng) perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.intN(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// seedOf derives a public seed from a set name (FNV-1a).
func seedOf(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return h
}
