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
// b = (Hi − Lo)/(n·ε). The noisy mean is then clamped to [Lo, Hi]
// (post-processing).
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
	return &Mean{Lo: lo, Hi: hi, Epsilon: eps, N: n}, nil
}

// Sensitivity returns the ℓ₁ sensitivity (Hi − Lo)/n.
func (m *Mean) Sensitivity() float64 { return (m.Hi - m.Lo) / float64(m.N) }

// Scale returns the Laplace scale b = (Hi − Lo)/(n·ε).
func (m *Mean) Scale() float64 { return m.Sensitivity() / m.Epsilon }

// Event is the accountant's record of this release.
func (m *Mean) Event() budget.Event { return budget.Event{Kind: budget.Laplace, Epsilon: m.Epsilon} }

// MeanAccumulator sums clipped values.
type MeanAccumulator struct {
	m   *Mean
	sum float64
	c   float64 // Kahan compensation: keeps the sum exact enough for 1e6+ rows
	n   int64
}

// Accumulator starts a pass over the data.
func (m *Mean) Accumulator() *MeanAccumulator { return &MeanAccumulator{m: m} }

// Add adds one value (NaN, i.e. NULL, counts as the midpoint).
func (a *MeanAccumulator) Add(v float64) {
	y := Clip(v, a.m.Lo, a.m.Hi) - a.c
	t := a.sum + y
	a.c = (t - a.sum) - y
	a.sum = t
	a.n++
}

// Release returns the noisy, clamped mean. The scale is calibrated on the n of
// the snapshot actually read (public: the row count is public), which may
// differ from the n seen at planning time when owners write concurrently.
func (a *MeanAccumulator) Release() (float64, error) {
	if a.n < 1 {
		return 0, errors.New("mean: the table is empty (n = 0), its mean is undefined")
	}
	snap := Mean{Lo: a.m.Lo, Hi: a.m.Hi, Epsilon: a.m.Epsilon, N: a.n}
	v, err := noise.AddLaplace(a.sum/float64(a.n), snap.Scale())
	if err != nil {
		return 0, fmt.Errorf("mean: %w", err)
	}
	return Clip(v, a.m.Lo, a.m.Hi), nil
}
