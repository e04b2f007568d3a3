package mechanism

import (
	"errors"
	"fmt"

	"github.com/dpsql/dpsql/noise"
)

// Scale-out (issue 14): entry points for statistics computed next to the
// data by a MariaDB/Spider backend (engine/mysqlstore) instead of a pass
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
	if n < 1 {
		return 0, errors.New("mean: the table is empty (n = 0), its mean is undefined")
	}
	snap := Mean{Lo: m.Lo, Hi: m.Hi, Epsilon: m.Epsilon, N: n}
	v, err := noise.AddLaplace(sum/float64(n), snap.Scale())
	if err != nil {
		return 0, fmt.Errorf("mean: %w", err)
	}
	return Clip(m.Lo+Clip(v, 0, m.Hi-m.Lo), m.Lo, m.Hi), nil
}
