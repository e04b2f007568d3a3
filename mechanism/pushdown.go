package mechanism

import (
	"errors"
	"fmt"

	"github.com/dpsql/dpsql/noise"
)

// Scale-out (issue 14): entry points for statistics computed next to the
// data by a MariaDB/Spider backend (mysqlstore) instead of a pass
// over rows in Go.

// Affine returns copies of the per-feature maps (z = v·mul + add before
// the clamp) and the final factor inv, so that a backend can evaluate
// Transform with the same double operations.
func (p *Prepared) Affine() (mul, add []float64, inv float64) {
	return append([]float64(nil), p.mul...), append([]float64(nil), p.add...), p.inv
}

// ReleaseShiftedSum is MeanAccumulator.Release for a sum computed
// elsewhere: sum must be Σ fl(clip(v) − Lo) over the n rows of one
// snapshot, computed exactly and rounded to float64 once (a backend's
// DECIMAL aggregate). Its rounding error, ≤ 2⁻⁵³·sum plus one rounding per
// term, is below the SumSlack(n) allowance of the compensated sum the scale
// already covers.
func (m *Mean) ReleaseShiftedSum(sum float64, n int64) (float64, error) {
	return m.releaseSum(sum, n, 1)
}

// AnyOrderSumSlack is SumSlack for Σ fl(clip(v) − lo) summed as DOUBLE by
// a backend in an order it chooses (any summation tree over n terms in
// [0, w(1 + u)]: error ≤ γ_{n−1}·n·w(1 + u), Higham Lemma 3.1, on each of
// two neighbouring sums; the partial sums Spider passes on round-trip;
// dpsql adds parts exactly and rounds once). It adds
// 2(n + 1)·γ_{n+8}·(1 + 2⁻²⁰) to SumSlack(n), which keeps covering the
// division and the term rounding; for n ≤ MaxSumRows.
func AnyOrderSumSlack(n int64) float64 {
	k := float64(n+8) * unitRoundoff
	return SumSlack(n) + 2*float64(n+1)*k/(1-k)*(1+0x1p-20)
}

// ReleaseAnyOrderSum is ReleaseShiftedSum for a sum a backend added as
// DOUBLE in any order: the scale is inflated by AnyOrderSumSlack(n)/
// SumSlack(n). The event is the same Laplace{ε}.
func (m *Mean) ReleaseAnyOrderSum(sum float64, n int64) (float64, error) {
	if n < 1 || n > MaxSumRows {
		return 0, fmt.Errorf("mean: %d rows are outside the any-order sum's range", n)
	}
	return m.releaseSum(sum, n, AnyOrderSumSlack(n)/SumSlack(n))
}

func (m *Mean) releaseSum(sum float64, n int64, inflate float64) (float64, error) {
	if n < 1 {
		return 0, errors.New("mean: the table is empty (n = 0), its mean is undefined")
	}
	snap := Mean{Lo: m.Lo, Hi: m.Hi, Epsilon: m.Epsilon, N: n}
	scale := snap.Scale()
	if inflate != 1 {
		scale *= inflate * (1 + 1e-12)
	}
	v, err := noise.AddLaplace(sum/float64(n), scale)
	if err != nil {
		return 0, fmt.Errorf("mean: %w", err)
	}
	return Clip(m.Lo+Clip(v, 0, m.Hi-m.Lo), m.Lo, m.Hi), nil
}
