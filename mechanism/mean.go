package mechanism

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/noise"
)

// Mean is DP_MEAN: the mean of a column with public bounds [Lo, Hi], each
// value clipped to the bounds, released with Laplace noise.
//
// Under replace-one neighbours with public n, changing one clipped value
// moves the mean by at most (Hi − Lo)/n, so the Laplace scale is
// b = (Hi − Lo)/(n·ε), inflated by SumSlack(n) for the float64 rounding of
// the sum. The sum is of the shifted values clip(v) − Lo ∈ [0, Hi − Lo], the
// noise is added to their mean, and Lo is added back afterwards: rounding
// stays at the scale of Hi − Lo, however large |Lo| is. The noisy mean is
// then clamped to [Lo, Hi] (post-processing).
type Mean struct {
	Lo, Hi  float64
	Epsilon float64
	N       int64
}

// NewMean validates public parameters.
func NewMean(lo, hi, eps float64, n int64) (*Mean, error) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo < hi) {
		return nil, fmt.Errorf("mean: bounds must be finite with lower < upper, got [%v, %v]", lo, hi)
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("mean: epsilon must be positive and finite, got %v", eps)
	}
	if n < 1 {
		return nil, errors.New("mean: the table is empty (n = 0), its mean is undefined")
	}
	if n > MaxSumRows {
		return nil, fmt.Errorf("mean: %d rows exceed the supported %d", n, int64(MaxSumRows))
	}
	if w := hi - lo; math.IsInf(w, 0) {
		return nil, fmt.Errorf("mean: bounds [%v, %v] are too far apart for float64", lo, hi)
	}
	return &Mean{Lo: lo, Hi: hi, Epsilon: eps, N: n}, nil
}

// Sensitivity returns the ℓ₁ sensitivity of the computed mean:
// (Hi − Lo)/n, inflated by SumSlack(n) for float64 rounding.
func (m *Mean) Sensitivity() float64 { return (m.Hi - m.Lo) / float64(m.N) * SumSlack(m.N) }

// Scale returns the Laplace scale b = (Hi − Lo)/(n·ε).
func (m *Mean) Scale() float64 { return m.Sensitivity() / m.Epsilon }

// Event is the accountant's record of this release.
func (m *Mean) Event() budget.Event { return budget.Event{Kind: budget.Laplace, Epsilon: m.Epsilon} }

// MeanAccumulator sums clipped values shifted by the lower bound.
type MeanAccumulator struct {
	m   *Mean
	sum CompensatedSum
}

// Accumulator starts a pass over the data.
func (m *Mean) Accumulator() *MeanAccumulator { return &MeanAccumulator{m: m} }

// Add adds one value (NaN, i.e. NULL, counts as the midpoint).
func (a *MeanAccumulator) Add(v float64) {
	// fl(clip(v) − Lo) ∈ [0, fl(Hi − Lo)] by monotonicity of rounding.
	a.sum.Add(Clip(v, a.m.Lo, a.m.Hi) - a.m.Lo)
}

// Release returns the noisy, clamped mean. The scale is calibrated on the n of
// the snapshot actually read (public: the row count is public), which may
// differ from the n seen at planning time when owners write concurrently.
func (a *MeanAccumulator) Release() (float64, error) {
	n := a.sum.N()
	if n < 1 {
		return 0, errors.New("mean: the table is empty (n = 0), its mean is undefined")
	}
	snap := Mean{Lo: a.m.Lo, Hi: a.m.Hi, Epsilon: a.m.Epsilon, N: n}
	v, err := noise.AddLaplace(a.sum.Sum()/float64(n), snap.Scale())
	if err != nil {
		return 0, fmt.Errorf("mean: %w", err)
	}
	// Post-processing of the noisy shifted mean: clamp, then add Lo back.
	return Clip(a.m.Lo+Clip(v, 0, a.m.Hi-a.m.Lo), a.m.Lo, a.m.Hi), nil
}
