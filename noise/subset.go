package noise

import "fmt"

// Subset is a set of positions {0, …, n−1} stored as a bitset (n/8 bytes).
type Subset struct {
	n    int
	bits []uint64
}

// Len returns n, the size of the ground set.
func (s Subset) Len() int { return s.n }

// Has reports whether position i is in the subset.
func (s Subset) Has(i int) bool {
	if i < 0 || i >= s.n {
		return false
	}
	return s.bits[i>>6]&(1<<(uint(i)&63)) != 0
}

func (s Subset) add(i int) { s.bits[i>>6] |= 1 << (uint(i) & 63) }

// SampleSubset returns a uniformly random k-subset of {0, …, n−1}, drawn
// with crypto randomness by Floyd's algorithm (Bentley & Floyd 1987): for
// j = n−k, …, n−1 draw t uniform in [0, j]; insert t, or j if t is already
// in. Every k-subset has probability 1/C(n, k); k draws, n/8 bytes.
func SampleSubset(n, k int) (Subset, error) {
	if n < 0 || k < 0 || k > n {
		return Subset{}, fmt.Errorf("noise: subset of size %d of %d positions", k, n)
	}
	s := Subset{n: n, bits: make([]uint64, (n+63)/64)}
	for j := n - k; j < n; j++ {
		t := int(IntN(uint64(j) + 1))
		if s.Has(t) {
			s.add(j)
		} else {
			s.add(t)
		}
	}
	return s, nil
}

// SubsetOf returns the subset of {0, …, n−1} holding the given positions
// (tests and audits build fixed or deliberately broken splits with it; the
// SQL path draws with SampleSubset).
func SubsetOf(n int, members []int) (Subset, error) {
	s := Subset{n: n, bits: make([]uint64, (n+63)/64)}
	for _, i := range members {
		if i < 0 || i >= n {
			return Subset{}, fmt.Errorf("noise: position %d outside 0..%d", i, n-1)
		}
		s.add(i)
	}
	return s, nil
}
