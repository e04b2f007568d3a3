package mechanism

// Float sums inside DP releases (docs/mechanisms/mean.md, "Floating point").
//
// A DP sum is computed in float64, so two neighbouring data sets can give
// computed sums that differ by more than the exact sensitivity w. With every
// term tᵢ ∈ [0, w], Kahan's compensated sum satisfies
// |Ŝ − S| ≤ (2u + O(n·u²))·Σtᵢ ≤ (2u + O(n·u²))·n·w (Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., §4.3), u = 2⁻⁵³, so computed
// neighbouring sums differ by at most w + 2(2u + O(nu²))nw, and after the
// division by n (one more rounding of each quotient) computed means differ by
// at most (w/n)(1 + 6nu + O(n²u²) + 2u). SumSlack(n) = 1 + 8(n+1)u covers
// all of it for n ≤ MaxSumRows (then n·u ≤ 2⁻¹³ and the O(n²u²) terms are
// below n·u/256). Terms must be non-negative: shift by the public lower
// bound before summing (Σ(clip(v) − lo), not Σclip(v)), otherwise the
// rounding is at the scale of |lo| rather than of w.

// u is the unit roundoff of float64.
const unitRoundoff = 0x1p-53

// MaxSumRows bounds the row count for which SumSlack is proved.
const MaxSumRows = 1 << 40

// SumSlack returns the factor by which a sum's (or mean's) sensitivity must
// be inflated to cover float64 rounding of a compensated sum of n
// non-negative terms.
func SumSlack(n int64) float64 { return 1 + 8*float64(n+1)*unitRoundoff }

// CompensatedSum is a Kahan sum of non-negative terms.
type CompensatedSum struct {
	sum, c float64
	n      int64
}

// Add adds one term.
func (k *CompensatedSum) Add(t float64) {
	y := t - k.c
	s := k.sum + y
	k.c = (s - k.sum) - y
	k.sum = s
	k.n++
}

// Sum returns the compensated sum.
func (k *CompensatedSum) Sum() float64 { return k.sum }

// N returns the number of terms added.
func (k *CompensatedSum) N() int64 { return k.n }

// SplitSum is a centred sum Σ (v − m) kept as two compensated sums of
// non-negative terms: pos of fl(v − m) for v ≥ m, neg of fl(m − v)
// otherwise (rounding is monotone, so a term never exceeds the half-width
// of v's bounds around m). Its value is fl(pos − neg); the error analysis is
// in docs/mechanisms/agg.md ("Floating point"). mechanism/agg and
// mechanism/bound keep their grouped sums in it.
type SplitSum struct{ pos, neg CompensatedSum }

// Add adds the term v − m.
func (s *SplitSum) Add(v, m float64) {
	if v >= m {
		s.pos.Add(v - m)
	} else {
		s.neg.Add(m - v)
	}
}

// Value is the centred sum.
func (s *SplitSum) Value() float64 { return s.pos.Sum() - s.neg.Sum() }
