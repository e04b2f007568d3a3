package agg

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Bound is the public range of a summed column.
type Bound struct{ Lo, Hi float64 }

// MaxGroups bounds the public domain size of one query (memory and the
// Laplace grid inflation 1 + G·2⁻¹⁹ stay small).
const MaxGroups = 1 << 16

// Spec is the public description of a grouped release.
type Spec struct {
	Groups  int     // size of the public group domain (1 without GROUP BY)
	Count   bool    // the count vector is measured (needed by COUNT, SUM, AVG)
	Sums    []Bound // one shifted-sum vector per summed column
	Epsilon float64 // total ε of the query
}

// Plan is a validated Spec with its ε split.
type Plan struct {
	Spec
	EpsCount float64   // ε of the count vector (0 if not measured)
	EpsSum   []float64 // ε of each sum vector
}

// New validates the public parameters and splits ε equally between the
// measurements. The count vector is always measured when a sum is (AVG and
// SUM use it).
func New(s Spec) (*Plan, error) {
	if s.Groups < 1 || s.Groups > MaxGroups {
		return nil, fmt.Errorf("agg: %d groups outside [1, %d]: declare a smaller domain", s.Groups, MaxGroups)
	}
	if !(s.Epsilon > 0) || math.IsInf(s.Epsilon, 0) {
		return nil, fmt.Errorf("agg: epsilon must be positive and finite, got %v", s.Epsilon)
	}
	for i, b := range s.Sums {
		if math.IsNaN(b.Lo) || math.IsNaN(b.Hi) || math.IsInf(b.Lo, 0) || math.IsInf(b.Hi, 0) || !(b.Lo < b.Hi) || math.IsInf(b.Hi-b.Lo, 0) {
			return nil, fmt.Errorf("agg: bounds of sum %d must be finite with lower < upper, got [%v, %v]", i, b.Lo, b.Hi)
		}
	}
	if len(s.Sums) > 0 {
		s.Count = true
	}
	if !s.Count {
		return nil, errors.New("agg: nothing to measure")
	}
	m := len(s.Sums) + 1
	share := s.Epsilon / float64(m)
	if share < noise.LaplaceMinEpsilon(s.Groups) {
		return nil, fmt.Errorf("agg: ε share %v per measurement is below the sampler's minimum %v", share, noise.LaplaceMinEpsilon(s.Groups))
	}
	p := &Plan{Spec: s, EpsCount: share, EpsSum: make([]float64, len(s.Sums))}
	for i := range p.EpsSum {
		p.EpsSum[i] = share
	}
	return p, nil
}

// Events are the accountant's record: one Laplace event per measurement
// (basic composition gives Σ = Epsilon).
func (p *Plan) Events() []budget.Event {
	ev := []budget.Event{{Kind: budget.Laplace, Epsilon: p.EpsCount}}
	for _, e := range p.EpsSum {
		ev = append(ev, budget.Event{Kind: budget.Laplace, Epsilon: e})
	}
	return ev
}

// CountSensitivity is the ℓ₁ sensitivity of the count vector: a row moving
// between two groups changes two counts by one.
const CountSensitivity = 2

// CountScale is the Laplace scale of each noisy count.
func (p *Plan) CountScale() float64 { return CountSensitivity / p.EpsCount }

// SumSensitivity is the ℓ₁ sensitivity of shifted sum vector i over n rows:
// 2w (a row leaves one group and joins another), times SumSlack(n).
func (p *Plan) SumSensitivity(i int, n int64) float64 {
	b := p.Sums[i]
	return 2 * (b.Hi - b.Lo) * mechanism.SumSlack(n)
}

// SumScale is the Laplace scale of each noisy shifted sum of column i.
func (p *Plan) SumScale(i int, n int64) float64 { return p.SumSensitivity(i, n) / p.EpsSum[i] }

// Accumulator is one pass over the rows.
type Accumulator struct {
	p      *Plan
	counts []int64
	sums   [][]mechanism.CompensatedSum // [column][group]
	n      int64
}

// Accumulator starts a pass.
func (p *Plan) Accumulator() *Accumulator {
	a := &Accumulator{p: p, counts: make([]int64, p.Groups), sums: make([][]mechanism.CompensatedSum, len(p.Sums))}
	for i := range a.sums {
		a.sums[i] = make([]mechanism.CompensatedSum, p.Groups)
	}
	return a
}

// Row records one row of the table. group is its group index, or −1 when
// the row is in no group (dropped by the predicate, NULL or foreign key);
// vals holds the summed columns (NaN for NULL, counted as the midpoint).
// Every row of the table must be passed, so that n is the table's n.
func (a *Accumulator) Row(group int, vals []float64) {
	a.n++
	if group < 0 || group >= len(a.counts) {
		return
	}
	a.counts[group]++
	for i, b := range a.p.Sums {
		// fl(clip(v) − lo) ∈ [0, fl(hi − lo)]: non-negative, at most w.
		a.sums[i][group].Add(mechanism.Clip(vals[i], b.Lo, b.Hi) - b.Lo)
	}
}

// N is the number of rows seen.
func (a *Accumulator) N() int64 { return a.n }

// Result is the released, post-processed answer.
type Result struct {
	Count      []float64   // noisy counts, rounded and clamped at 0
	Sum        [][]float64 // [column][group] SUM of the clipped column
	Avg        [][]float64 // [column][group] AVG of the clipped column, in [lo, hi]
	CountScale float64
	SumScale   []float64
	// Partition selection only: the released partitions' keys, in order,
	// and the threshold on the noisy count.
	Keys      []string `json:",omitempty"`
	Threshold float64  `json:",omitempty"`
}

// Release adds the noise. Nothing it returns is computed from the rows
// except through the noisy vectors.
func (a *Accumulator) Release() (*Result, error) {
	if a.n > mechanism.MaxSumRows {
		return nil, fmt.Errorf("agg: %d rows exceed the supported %d", a.n, int64(mechanism.MaxSumRows))
	}
	p := a.p
	r := &Result{CountScale: p.CountScale(), SumScale: make([]float64, len(p.Sums))}
	c, err := a.noisyCounts()
	if err != nil {
		return nil, err
	}
	r.Count = make([]float64, p.Groups)
	for g, v := range c {
		r.Count[g] = math.Max(0, math.Round(v))
	}
	for i, b := range p.Sums {
		w := b.Hi - b.Lo
		r.SumScale[i] = p.SumScale(i, a.n)
		t, err := a.noisySums(i)
		if err != nil {
			return nil, err
		}
		sum, avg := make([]float64, p.Groups), make([]float64, p.Groups)
		for g := range t {
			// Post-processing of (noisy count, noisy shifted sum).
			cg := math.Max(0, c[g])
			sum[g] = mechanism.Clip(t[g], 0, w*cg) + b.Lo*cg
			avg[g] = mechanism.Clip(b.Lo+mechanism.Clip(t[g]/math.Max(1, c[g]), 0, w), b.Lo, b.Hi)
		}
		r.Sum = append(r.Sum, sum)
		r.Avg = append(r.Avg, avg)
	}
	return r, nil
}

// noisyCounts is the count measurement: exact counts + Laplace(2/ε_c).
func (a *Accumulator) noisyCounts() ([]float64, error) {
	c := make([]float64, len(a.counts))
	for g, v := range a.counts {
		c[g] = float64(v)
	}
	if err := noise.AddLaplaceVec(c, a.p.CountScale()); err != nil {
		return nil, fmt.Errorf("agg: count noise: %w", err)
	}
	return c, nil
}

// noisySums is the measurement of column i: shifted sums + Laplace(2w·slack/ε_i).
func (a *Accumulator) noisySums(i int) ([]float64, error) {
	t := make([]float64, len(a.counts))
	for g := range t {
		t[g] = a.sums[i][g].Sum()
	}
	if err := noise.AddLaplaceVec(t, a.p.SumScale(i, a.n)); err != nil {
		return nil, fmt.Errorf("agg: sum noise: %w", err)
	}
	return t, nil
}
