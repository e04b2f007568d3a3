package bound

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/noise"
)

// One row per person (docs/privacy/units.md §10): the generic reduction
// that runs a row-level mechanism — proved for replace-one-row neighbours
// with a public row count n — on the tables of a privacy unit.
//
//  1. each person keeps ONE of their rows, uniformly chosen (a reservoir
//     per person, crypto RNG);
//  2. ε₁ = CountShare·ε buys a noisy person count P̃ = P + Lap(1/ε₁), and
//     the public size is m = max(MinRows, ⌊P̃ − margin⌋), margin =
//     ⌈ln(1/β)/ε₁⌉, so that m ≤ P with probability ≥ 1 − β/2;
//  3. the data set is exactly m rows: a uniform m-subset of the kept rows
//     if m ≤ P, else all P kept rows and m − P copies of a public padding
//     row; its order is a uniform permutation;
//  4. the row-level mechanism runs on it at (ε₂ = ε − ε₁, δ) with n = m.
//
// For each fixed m the m-row data sets of D and D + person p can be coupled
// to differ in at most one position, so step 4 is (ε₂, δ)-DP for adding or
// removing a person given m; step 2 is ε₁-DP; sequential composition
// gives (ε, δ).

// Public constants of the reduction (units.md §10 says why).
const (
	// CountShare is the fraction of ε spent on the person count.
	CountShare = 0.05
	// SizeBeta is β: m exceeds P (and rows are padded) with probability at
	// most β/2.
	SizeBeta = 0.05
	// MinRows is the smallest m (an all-padding set when P̃ is tiny).
	MinRows = 1
	// MaxRows caps m (a public bound on memory; reached only if the noise
	// or the table is absurd).
	MaxRows = 1 << 31
)

// OneRow is the public plan of the reduction for one release.
type OneRow struct {
	Epsilon    float64 // total ε of the release
	Eps1, Eps2 float64 // person count; row-level mechanism
	Margin     float64 // ⌈ln(1/β)/ε₁⌉
}

// NewOneRow plans the reduction for a release of total ε.
func NewOneRow(eps float64) (*OneRow, error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("one row per person: ε must be finite and > 0, got %v", eps)
	}
	e1 := CountShare * eps
	if e1 < noise.LaplaceMinEpsilon(1) {
		return nil, fmt.Errorf("one row per person: ε = %v is too small: the person count's share %v·ε is below the Laplace sampler's minimum %v", eps, CountShare, noise.LaplaceMinEpsilon(1))
	}
	return &OneRow{Epsilon: eps, Eps1: e1, Eps2: eps - e1, Margin: math.Ceil(math.Log(1/SizeBeta) / e1)}, nil
}

// CountEvent is the accountant's record of the noisy person count.
func (o *OneRow) CountEvent() budget.Event {
	return budget.Event{Kind: budget.Laplace, Epsilon: o.Eps1}
}

// CountScale is the Laplace scale of the person count (sensitivity 1).
func (o *OneRow) CountScale() float64 { return 1 / o.Eps1 }

// Size is the public m for a released noisy count P̃ (post-processing).
func (o *OneRow) Size(noisy float64) int {
	m := math.Floor(noisy - o.Margin)
	if !(m >= MinRows) { // NaN too
		return MinRows
	}
	if m > MaxRows {
		return MaxRows
	}
	return int(m)
}

// Sampler keeps one uniformly chosen row per person.
type Sampler struct {
	o     *OneRow
	kept  map[string]*slot
	order []*slot // persons in first-seen order (any order: Build draws)
}

type slot struct {
	rows uint64
	row  []any
}

// Sampler starts a scan.
func (o *OneRow) Sampler() *Sampler {
	return &Sampler{o: o, kept: map[string]*slot{}}
}

// Row offers one row of person (row is copied if kept; it may be reused
// by the caller). The c-th row of a person replaces the kept one with
// probability 1/c (reservoir sampling of size 1: each of a person's rows is
// kept with probability 1/#rows, independently of everyone else).
func (s *Sampler) Row(person string, row []any) {
	sl := s.kept[person]
	if sl == nil {
		sl = &slot{}
		s.kept[person] = sl
		s.order = append(s.order, sl)
	}
	sl.rows++
	if noise.IntN(sl.rows) == 0 {
		sl.row = append(sl.row[:0], row...)
	}
}

// Release draws the noisy person count and returns the public m and the
// m-row data set (pad is the public padding row, copied).
func (s *Sampler) Release(pad []any) (rows [][]any, m int, err error) {
	p := len(s.order)
	noisy, err := noise.AddLaplace(float64(p), s.o.CountScale())
	if err != nil {
		return nil, 0, fmt.Errorf("person count: %w", err)
	}
	m = s.o.Size(noisy)
	rows, err = Build(s.Kept(), m, pad)
	return rows, m, err
}

// Build returns exactly m rows in a uniformly random order: a uniform
// m-subset of kept if m ≤ len(kept), else every kept row and m − len(kept)
// copies of pad.
func Build(kept [][]any, m int, pad []any) ([][]any, error) {
	if m < 0 {
		return nil, fmt.Errorf("one row per person: size %d", m)
	}
	out := make([][]any, 0, m)
	if m <= len(kept) {
		sub, err := noise.SampleSubset(len(kept), m)
		if err != nil {
			return nil, err
		}
		for i, r := range kept {
			if sub.Has(i) {
				out = append(out, r)
			}
		}
	} else {
		out = append(out, kept...)
		for len(out) < m {
			out = append(out, append([]any(nil), pad...))
		}
	}
	// Fisher–Yates with the crypto RNG: the coupled data sets then differ
	// in one position, whatever order the mechanism reads them in.
	for i := len(out) - 1; i > 0; i-- {
		j := int(noise.IntN(uint64(i) + 1))
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Persons is P, the number of persons seen (tests only: never released).
func (s *Sampler) Persons() int { return len(s.order) }

// Kept returns the kept rows, one per person (tests).
func (s *Sampler) Kept() [][]any {
	out := make([][]any, len(s.order))
	for i, sl := range s.order {
		out[i] = sl.row
	}
	return out
}
