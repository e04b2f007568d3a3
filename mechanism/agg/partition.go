package agg

import (
	"fmt"
	"math"
	"sort"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Private partition selection (docs/mechanisms/agg.md, "Partition
// selection"): GROUP BY over keys with no declared domain. Only partitions
// present in the data get a noisy count ĉ = c + Lap(b), b = 2/ε_c, and a
// partition is released iff ĉ > τ = 1 + b·ln(1/(2δ)) (Laplace thresholding,
// Wilson et al. PETS 2020; Desfontaines et al. PETS 2022). Under
// replace-one a row leaves partition a and joins partition b: if a had one
// row it disappears, if b had none it appears. Each such partition has one
// row on the side where it exists, and is released there with probability
// P[1 + Z > τ] ≤ δ, where τ − 1 is the exact (1 − δ) tail point of the noise
// Z that noise.AddLaplace actually samples (a two-sided geometric on a fine
// grid at the slightly inflated scale b·(1 + 2⁻¹⁹)), not of the continuous
// Laplace: the continuous τ = 1 + b·ln(1/(2δ)) released a singleton with
// probability δ·(1 + 2.5·10⁻⁵) (issue 25). On every other partition the
// counts differ by at most 2 in ℓ₁ (ε_c) and the centred sums by 2h·slack
// (ε_i). Hence (ε, δ)-DP. Each coordinate is noised by AddLaplace (grid of
// a one-coordinate release), so the noise grid does not depend on how many
// partitions the data has.

// SelectPlan is a validated partition-selection release.
type SelectPlan struct {
	*Plan
	Delta float64
	tau   float64
}

// NewSelect validates the public parameters; ε is split as in New.
func NewSelect(sums []Bound, eps, delta float64) (*SelectPlan, error) {
	if math.IsNaN(delta) || !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("agg: partition selection needs 0 < δ < 1, got %v", delta)
	}
	p, err := New(Spec{Groups: 1, Count: true, Sums: sums, Epsilon: eps})
	if err != nil {
		return nil, err
	}
	if delta >= 0.5 {
		return nil, fmt.Errorf("agg: partition selection needs δ < 0.5, got %v", delta)
	}
	t, err := noise.LaplaceTailThreshold(p.CountScale(), delta)
	if err != nil {
		return nil, fmt.Errorf("agg: partition selection threshold: %w", err)
	}
	return &SelectPlan{Plan: p, Delta: delta, tau: 1 + t}, nil
}

// Threshold is τ on the noisy count: 1 plus the smallest point t of the
// noise grid with P[Z > t] ≤ δ (≈ 1 + b·ln(1/(2δ))).
func (p *SelectPlan) Threshold() float64 { return p.tau }

// Events: the noisy counts with the selection are one (ε_c, δ) event, each
// sum a Laplace event.
func (p *SelectPlan) Events() []budget.Event {
	ev := []budget.Event{{Kind: budget.Generic, Epsilon: p.EpsCount, Delta: p.Delta}}
	for _, e := range p.EpsSum {
		ev = append(ev, budget.Event{Kind: budget.Laplace, Epsilon: e})
	}
	return ev
}

// SelectAccumulator is one pass: partitions are discovered as rows come.
type SelectAccumulator struct {
	p      *SelectPlan
	index  map[string]int
	keys   []string
	counts []int64
	sums   [][]splitSum // [partition][column]
	n      int64
}

// Accumulator starts a pass.
func (p *SelectPlan) Accumulator() *SelectAccumulator {
	return &SelectAccumulator{p: p, index: map[string]int{}}
}

// Row records one row; ok = false when it is in no partition (WHERE, NULL key).
func (a *SelectAccumulator) Row(key string, ok bool, vals []float64) {
	a.n++
	if !ok {
		return
	}
	i, seen := a.index[key]
	if !seen {
		i = len(a.keys)
		a.index[key] = i
		a.keys = append(a.keys, key)
		a.counts = append(a.counts, 0)
		a.sums = append(a.sums, make([]splitSum, len(a.p.Sums)))
	}
	a.counts[i]++
	for j, b := range a.p.Sums {
		m, _ := Mid(b)
		a.sums[i][j].Add(mechanism.Clip(vals[j], b.Lo, b.Hi), m)
	}
}

// N is the number of rows seen.
func (a *SelectAccumulator) N() int64 { return a.n }

// Release returns the released partitions in key order, with their noisy,
// post-processed aggregates (Result.Keys names them).
func (a *SelectAccumulator) Release() (*Result, error) {
	if a.n > mechanism.MaxSumRows {
		return nil, fmt.Errorf("agg: %d rows exceed the supported %d", a.n, int64(mechanism.MaxSumRows))
	}
	p := a.p
	order := make([]int, len(a.keys))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(x, y int) bool { return a.keys[order[x]] < a.keys[order[y]] })
	r := &Result{CountScale: p.CountScale(), SumScale: make([]float64, len(p.Sums)), Threshold: p.Threshold()}
	for j := range p.Sums {
		r.SumScale[j] = p.SumScale(j, a.n)
		r.Sum = append(r.Sum, nil)
		r.Avg = append(r.Avg, nil)
	}
	tau := p.Threshold()
	for _, i := range order {
		c, err := noise.AddLaplace(float64(a.counts[i]), r.CountScale)
		if err != nil {
			return nil, fmt.Errorf("agg: count noise: %w", err)
		}
		if !(c > tau) {
			continue
		}
		r.Keys = append(r.Keys, a.keys[i])
		r.Count = append(r.Count, math.Max(0, math.Round(c)))
		for j, b := range p.Sums {
			t, err := noise.AddLaplace(a.sums[i][j].Value(), r.SumScale[j])
			if err != nil {
				return nil, fmt.Errorf("agg: sum noise: %w", err)
			}
			sum, avg := finish(b, c, t)
			r.Sum[j] = append(r.Sum[j], sum)
			r.Avg[j] = append(r.Avg[j], avg)
		}
	}
	return r, nil
}
