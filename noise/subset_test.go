package noise

import (
	"math"
	"testing"
)

// TestSampleSubsetSize: exactly k distinct positions, all in range.
func TestSampleSubsetSize(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {1, 0}, {1, 1}, {10, 3}, {64, 64}, {65, 13}, {1000, 200}} {
		s, err := SampleSubset(c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for i := 0; i < c[0]; i++ {
			if s.Has(i) {
				got++
			}
		}
		if got != c[1] || s.Len() != c[0] || s.Has(-1) || s.Has(c[0]) {
			t.Fatalf("n=%d k=%d: %d members", c[0], c[1], got)
		}
	}
	if _, err := SampleSubset(3, 4); err == nil {
		t.Fatal("k > n accepted")
	}
}

// TestSampleSubsetUniform: every one of the C(6, 2) = 15 subsets of a
// 6-set appears with probability 1/15 (chi-square, 14 degrees of freedom,
// threshold at p ≈ 1e-6), which also makes every position's inclusion
// probability k/n and pairs exchangeable.
func TestSampleSubsetUniform(t *testing.T) {
	const n, k, draws = 6, 2, 150000
	counts := map[int]int{}
	for range draws {
		s, err := SampleSubset(n, k)
		if err != nil {
			t.Fatal(err)
		}
		key := 0
		for i := 0; i < n; i++ {
			if s.Has(i) {
				key |= 1 << i
			}
		}
		counts[key]++
	}
	if len(counts) != 15 {
		t.Fatalf("%d distinct subsets, want 15", len(counts))
	}
	exp := float64(draws) / 15
	var chi2 float64
	for _, c := range counts {
		chi2 += math.Pow(float64(c)-exp, 2) / exp
	}
	if chi2 > 46 { // χ²₁₄ 1 − 1e-6 quantile ≈ 45.3
		t.Fatalf("chi-square %.1f over 15 subsets: not uniform (%v)", chi2, counts)
	}
}
