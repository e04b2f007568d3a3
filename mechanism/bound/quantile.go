package bound

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism/agg"
	"github.com/dpsql/dpsql/noise"
)

// Quantile is the person-level q-quantile (docs/privacy/units.md §8): each
// person keeps at most C of their non-NULL values (a uniform C-subset drawn
// with the crypto RNG when they have more), and report-noisy-max chooses
// among the K public grid points of agg.Quantile with utility
// u_j = −|r_j − round(q·n)|, r_j the kept values ≤ x_j and n all kept values.
//
// Adding a person with m ≤ C kept values moves r_j by a ∈ [0, m] and
// round(q·n) by ⌊qm⌋ or ⌈qm⌉ (the target is computed exactly), so every
// utility moves by at most Δ = ⌈C·max(q, 1 − q)⌉, an integer; the noise is
// Laplace of scale 2Δ/ε on integer utilities (exactly on the sampler's
// grid, as agg.Quantile). Nothing here uses a public n.
type Quantile struct {
	Grid    *agg.Quantile // bounds, q, ε, K
	MaxRows int           // C: values per person
}

// NewQuantile validates public parameters.
func NewQuantile(lo, hi, q, eps float64, k, maxRows int) (*Quantile, error) {
	if maxRows < 1 || maxRows > MaxRowsCap {
		return nil, specErr("max_rows_contributed_per_group must be in [1, %d], got %d", MaxRowsCap, maxRows)
	}
	g, err := agg.NewQuantile(lo, hi, q, eps, k)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	return &Quantile{Grid: g, MaxRows: maxRows}, nil
}

// Sensitivity is Δ = ⌈C·max(q, 1 − q)⌉ (≥ 1 for C ≥ 1 since max(q, 1−q) ≥ ½).
func (m *Quantile) Sensitivity() float64 {
	return math.Ceil(float64(m.MaxRows) * math.Max(m.Grid.Q, 1-m.Grid.Q))
}

// Scale is the report-noisy-max Laplace scale 2Δ/ε.
func (m *Quantile) Scale() float64 { return 2 * m.Sensitivity() / m.Grid.Epsilon }

// Event is the accountant's record.
func (m *Quantile) Event() budget.Event { return m.Grid.Event() }

// QuantileAccumulator holds each person's non-NULL values (memory ∝ rows,
// as the grouped accumulator, docs/privacy/units.md §6).
type QuantileAccumulator struct {
	m       *Quantile
	persons map[string][]int // grid cells of the person's values
}

// Accumulator starts a pass.
func (m *Quantile) Accumulator() *QuantileAccumulator {
	return &QuantileAccumulator{m: m, persons: map[string][]int{}}
}

// Row records one value of person (NaN or ±Inf: NULL, not recorded).
func (a *QuantileAccumulator) Row(person string, v float64) {
	if !finite(v) {
		return
	}
	a.persons[person] = append(a.persons[person], a.m.Grid.Cell(v))
}

// Cells bounds each person to C values and returns the kept values per
// grid cell and their number n (tests and audits read it).
func (a *QuantileAccumulator) Cells() (cells []int64, n int64, err error) {
	cells = make([]int64, a.m.Grid.K)
	c := a.m.MaxRows
	for _, vs := range a.persons {
		if len(vs) <= c {
			for _, j := range vs {
				cells[j]++
			}
			n += int64(len(vs))
			continue
		}
		sub, err := noise.SampleSubset(len(vs), c)
		if err != nil {
			return nil, 0, fmt.Errorf("bound: quantile sample: %w", err)
		}
		for i, j := range vs {
			if sub.Has(i) {
				cells[j]++
			}
		}
		n += int64(c)
	}
	return cells, n, nil
}

// Target is round(q·n) computed exactly (q·n is a dyadic rational; a float
// product could round across a half and break the sensitivity bound).
func Target(q float64, n int64) float64 {
	x := new(big.Float).SetPrec(256).SetFloat64(q)
	x.Mul(x, new(big.Float).SetPrec(256).SetInt64(n))
	x.Add(x, big.NewFloat(0.5))
	i, _ := x.Int(nil) // truncation = floor for x ≥ 0
	f, _ := new(big.Float).SetInt(i).Float64()
	return f
}

// Utilities are u_j = −|r_j − round(q·n)| over the bounded cells.
func Utilities(q float64, cells []int64, n int64) []float64 {
	u := make([]float64, len(cells))
	t := Target(q, n)
	var r int64
	for j, c := range cells {
		r += c
		u[j] = -math.Abs(float64(r) - t)
	}
	return u
}

// ReleaseIndex bounds the persons and chooses a grid index by
// report-noisy-max (ties to the lowest index). With no value at all the
// utilities are all 0 and the choice is uniform noise: nothing fails on
// data.
func (a *QuantileAccumulator) ReleaseIndex() (int, error) {
	cells, n, err := a.Cells()
	if err != nil {
		return 0, err
	}
	return agg.NoisyMax(Utilities(a.m.Grid.Q, cells, n), a.m.Scale())
}

// Release returns the chosen grid point.
func (a *QuantileAccumulator) Release() (float64, error) {
	j, err := a.ReleaseIndex()
	if err != nil {
		return 0, err
	}
	return a.m.Grid.Point(j), nil
}
