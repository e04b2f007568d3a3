package agg

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Quantile is DP_QUANTILE: the q-quantile of a column with public bounds
// [Lo, Hi], chosen among K public grid points x_j = Lo + (Hi − Lo)·j/(K − 1)
// by report-noisy-max (Dwork & Roth 2014, §3.3, for utilities of
// sensitivity Δ with Laplace noise of scale 2Δ/ε): the utility of x_j is
// u_j = −|r_j − round(q·n)|, r_j = #{rows with clip(v) ≤ x_j} (NULL rows
// not counted), n the public row count. Replacing one row changes every r_j, so
// every u_j, by at most Δ = 1. Only the winning index is released (ties go
// to the lowest index, a data-independent rule); the noise is the snapped
// discrete Laplace of noise.AddLaplace on integer utilities, which are
// exactly on its grid (g ≤ 1 for every scale ≤ 2⁴⁰), and the proof of
// report-noisy-max only uses P[z ≥ t]/P[z ≥ t + 2Δ] ≤ exp(2Δ/b), which the
// two-sided geometric distribution satisfies.
type Quantile struct {
	Lo, Hi  float64
	Q       float64
	Epsilon float64
	K       int
}

// MaxQuantileGrid bounds K.
const MaxQuantileGrid = 1 << 16

// NewQuantile validates public parameters.
func NewQuantile(lo, hi, q, eps float64, k int) (*Quantile, error) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo < hi) || math.IsInf(hi-lo, 0) {
		return nil, fmt.Errorf("quantile: bounds must be finite with lower < upper, got [%v, %v]", lo, hi)
	}
	if math.IsNaN(q) || q < 0 || q > 1 {
		return nil, fmt.Errorf("quantile: q must be in [0, 1], got %v", q)
	}
	if !(eps > 0) || math.IsInf(eps, 0) || eps < noise.LaplaceMinEpsilon(1) {
		return nil, fmt.Errorf("quantile: epsilon must be positive and finite, got %v", eps)
	}
	if k < 2 || k > MaxQuantileGrid {
		return nil, fmt.Errorf("quantile: grid size %d outside [2, %d]", k, MaxQuantileGrid)
	}
	return &Quantile{Lo: lo, Hi: hi, Q: q, Epsilon: eps, K: k}, nil
}

// Scale is the Laplace scale 2Δ/ε with Δ = 1.
func (m *Quantile) Scale() float64 { return 2 / m.Epsilon }

// Event is the accountant's record.
func (m *Quantile) Event() budget.Event {
	return budget.Event{Kind: budget.Laplace, Epsilon: m.Epsilon}
}

// Point returns grid point j.
func (m *Quantile) Point(j int) float64 {
	if j == m.K-1 {
		return m.Hi
	}
	return m.Lo + (m.Hi-m.Lo)*float64(j)/float64(m.K-1)
}

// QuantileAccumulator counts values per grid cell.
type QuantileAccumulator struct {
	m     *Quantile
	cells []int64 // cells[j]: values v with Point(j−1) < v ≤ Point(j)
	n     int64
}

// Accumulator starts a pass.
func (m *Quantile) Accumulator() *QuantileAccumulator {
	return &QuantileAccumulator{m: m, cells: make([]int64, m.K)}
}

// Add adds one row's value (NaN = NULL: counted in n, in no rank).
func (a *QuantileAccumulator) Add(v float64) {
	a.n++
	if math.IsNaN(v) {
		return
	}
	a.cells[a.m.Cell(v)]++
}

// Cell is the grid cell of a non-NaN value: the smallest j with
// Point(j) ≥ clip(v) (cell j holds Point(j−1) < v ≤ Point(j)).
func (m *Quantile) Cell(v float64) int {
	v = mechanism.Clip(v, m.Lo, m.Hi)
	j := int(math.Ceil((v - m.Lo) / (m.Hi - m.Lo) * float64(m.K-1)))
	if j < 0 {
		j = 0
	}
	if j >= m.K {
		j = m.K - 1
	}
	for j > 0 && m.Point(j-1) >= v {
		j--
	}
	for j < m.K-1 && m.Point(j) < v {
		j++
	}
	return j
}

// utilities returns u_j = −|r_j − round(q·n)|.
func (a *QuantileAccumulator) utilities() []float64 {
	u := make([]float64, a.m.K)
	var r int64
	// An integer target (public: n is public) keeps every utility an integer,
	// exactly on the noise grid, so AddLaplace does not round it.
	target := math.Round(a.m.Q * float64(a.n))
	for j, c := range a.cells {
		r += c
		u[j] = -math.Abs(float64(r) - target)
	}
	return u
}

// ReleaseIndex returns the index chosen by report-noisy-max.
func (a *QuantileAccumulator) ReleaseIndex() (int, error) {
	if a.n < 1 {
		return 0, errors.New("quantile: the table is empty")
	}
	return NoisyMax(a.utilities(), a.m.Scale())
}

// NoisyMax is report-noisy-max: the index of the largest u_j plus Laplace
// noise of scale (noise.AddLaplace, fresh per index); ties go to the lowest
// index. The caller's scale is 2Δ/ε for utilities of sensitivity Δ.
func NoisyMax(u []float64, scale float64) (int, error) {
	best, bestV := 0, math.Inf(-1)
	for j, x := range u {
		v, err := noise.AddLaplace(x, scale)
		if err != nil {
			return 0, fmt.Errorf("quantile: %w", err)
		}
		if v > bestV {
			best, bestV = j, v
		}
	}
	return best, nil
}

// Release returns the chosen grid point.
func (a *QuantileAccumulator) Release() (float64, error) {
	j, err := a.ReleaseIndex()
	if err != nil {
		return 0, err
	}
	return a.m.Point(j), nil
}
