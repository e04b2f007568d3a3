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

// Mid returns the public centre m = fl(lo + fl(hi − lo)/2) of bound b and
// the half-width h = max(fl(hi − m), fl(m − lo)) that bounds every term.
func Mid(b Bound) (m, h float64) {
	m = b.Lo + (b.Hi-b.Lo)/2
	return m, math.Max(b.Hi-m, m-b.Lo)
}

// SumSensitivity is the ℓ₁ sensitivity of centred sum vector i over n rows:
// 2h ≈ w (a row leaves one group and joins another, each side moves by at
// most h), times SumSlack(n) for float64 rounding.
func (p *Plan) SumSensitivity(i int, n int64) float64 {
	_, h := Mid(p.Sums[i])
	return 2 * h * mechanism.SumSlack(n)
}

// SumScale is the Laplace scale of each noisy centred sum of column i.
func (p *Plan) SumScale(i int, n int64) float64 { return p.SumSensitivity(i, n) / p.EpsSum[i] }

// Accumulator is one pass over the rows.
type Accumulator struct {
	p      *Plan
	counts []int64
	sums   [][]splitSum // [column][group]
	n      int64
}

// splitSum is the centred sum Σ (clip(v) − m) of one group and column,
// kept as two compensated sums of non-negative terms (mechanism.SplitSum).
type splitSum = mechanism.SplitSum

// Accumulator starts a pass.
func (p *Plan) Accumulator() *Accumulator {
	a := &Accumulator{p: p, counts: make([]int64, p.Groups), sums: make([][]splitSum, len(p.Sums))}
	for i := range a.sums {
		a.sums[i] = make([]splitSum, p.Groups)
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
		m, _ := Mid(b)
		a.sums[i][group].Add(mechanism.Clip(vals[i], b.Lo, b.Hi), m)
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
		r.SumScale[i] = p.SumScale(i, a.n)
		t, err := a.noisySums(i)
		if err != nil {
			return nil, err
		}
		sum, avg := make([]float64, p.Groups), make([]float64, p.Groups)
		for g := range t {
			sum[g], avg[g] = finish(b, c[g], t[g])
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

// finish is the post-processing of a group's noisy count c and noisy centred
// sum t into SUM and AVG of the clipped column.
func finish(b Bound, c, t float64) (sum, avg float64) {
	m, h := Mid(b)
	cp := math.Max(0, c)
	sum = mechanism.Clip(t, -h*cp, h*cp) + m*cp
	avg = mechanism.Clip(m+t/math.Max(1, c), b.Lo, b.Hi)
	return sum, avg
}

// noisySums is the measurement of column i: centred sums + Laplace(2h·slack/ε_i).
func (a *Accumulator) noisySums(i int) ([]float64, error) {
	t := make([]float64, len(a.counts))
	for g := range t {
		t[g] = a.sums[i][g].Value()
	}
	if err := noise.AddLaplaceVec(t, a.p.SumScale(i, a.n)); err != nil {
		return nil, fmt.Errorf("agg: sum noise: %w", err)
	}
	return t, nil
}
