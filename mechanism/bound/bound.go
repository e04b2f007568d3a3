package bound

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Kind is an aggregate.
type Kind int

const (
	Count Kind = iota + 1 // rows with a non-NULL value (COUNT(*) passes 1), at most C per person and group
	Sum                   // the person's per-group sum, clamped to [Lo, Hi]
	Avg                   // the average over persons of each person's per-group mean, clamped to [Lo, Hi]
)

func (k Kind) String() string {
	switch k {
	case Count:
		return "COUNT"
	case Sum:
		return "SUM"
	case Avg:
		return "AVG"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Measure is one aggregate of the release with its public bounds (Sum,
// Avg).
type Measure struct {
	Kind   Kind
	Lo, Hi float64
	// Auto (SUM only): [Lo, Hi] (Lo ≤ 0 ≤ Hi) are the outer limits and the
	// clamp is chosen privately inside them (auto.go).
	Auto bool
}

// Limits on public parameters (memory and the noise grid stay small).
const (
	MaxDomain    = 1 << 16 // groups of a declared domain
	MaxGroupsCap = 1 << 16 // max_groups_contributed
	MaxRowsCap   = 1 << 20 // max_rows_contributed_per_group
)

// Sigma is the floating-point slack of the per-group sums over persons:
// SumSlack at the largest proved term count, a public constant (a slack from
// the actual count would put a non-public number in the noise scale).
var Sigma = mechanism.SumSlack(mechanism.MaxSumRows)

// Spec is the public description of one release.
type Spec struct {
	MaxGroups int // k: groups a person may contribute to
	MaxRows   int // C: rows a person may contribute to one group's COUNT
	// AutoRows: C is chosen privately in [1, AutoMaxRows] (auto.go);
	// MaxRows must then be AutoMaxRows.
	AutoRows bool
	Measures []Measure
	// Domain lists the public group keys in output order; nil means the
	// groups are selected privately among those present (needs Delta).
	Domain  []string
	Epsilon float64
	Delta   float64
}

// Plan is a validated Spec with its ε split equally over the measured
// vectors (COUNT and SUM one each, AVG two: persons and centred sum; the
// private selection one more).
type Plan struct {
	Spec
	Share     float64 // ε of each vector
	EpsSelect float64 // ε of the selection counts (0 with a domain)
	EpsAuto   float64 // ε of each automatic-bound selection (0: none)
	autos     int
	vectors   int
	tau       float64
}

// ErrSpec wraps every refusal of a Spec (all before any charge).
var ErrSpec = errors.New("bound")

func specErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSpec}, a...)...)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// New validates s.
func New(s Spec) (*Plan, error) {
	if s.MaxGroups < 1 || s.MaxGroups > MaxGroupsCap {
		return nil, specErr("max_groups_contributed must be in [1, %d], got %d", MaxGroupsCap, s.MaxGroups)
	}
	if s.MaxRows < 1 || s.MaxRows > MaxRowsCap {
		return nil, specErr("max_rows_contributed_per_group must be in [1, %d], got %d", MaxRowsCap, s.MaxRows)
	}
	if len(s.Measures) == 0 {
		return nil, specErr("nothing to measure")
	}
	if s.AutoRows && s.MaxRows != AutoMaxRows {
		return nil, specErr("automatic max_rows_contributed_per_group needs MaxRows = %d (its upper limit), got %d", AutoMaxRows, s.MaxRows)
	}
	if !(s.Epsilon > 0) || !finite(s.Epsilon) {
		return nil, specErr("epsilon must be positive and finite, got %v", s.Epsilon)
	}
	if s.Domain != nil {
		if len(s.Domain) < 1 || len(s.Domain) > MaxDomain {
			return nil, specErr("%d groups outside [1, %d]: declare a smaller domain", len(s.Domain), MaxDomain)
		}
		seen := make(map[string]bool, len(s.Domain))
		for _, k := range s.Domain {
			if seen[k] {
				return nil, specErr("group %q listed twice in the domain", k)
			}
			seen[k] = true
		}
	} else if !(s.Delta > 0 && s.Delta < 1) {
		return nil, specErr("private partition selection needs 0 < δ < 1, got %v", s.Delta)
	}
	v := 0
	for i, m := range s.Measures {
		if m.Auto && (m.Kind != Sum || m.Lo > 0 || m.Hi < 0) {
			return nil, specErr("automatic bounds are for SUM with outer limits around 0 (measure %d: %s [%v, %v])", i, m.Kind, m.Lo, m.Hi)
		}
		switch m.Kind {
		case Count:
			v++
		case Sum, Avg:
			if !finite(m.Lo) || !finite(m.Hi) || !(m.Lo < m.Hi) || !finite(m.Hi-m.Lo) {
				return nil, specErr("bounds of %s (measure %d) must be finite with lower < upper, got [%v, %v]", m.Kind, i, m.Lo, m.Hi)
			}
			v++
			if m.Kind == Avg {
				v++
			}

		default:
			return nil, specErr("unknown aggregate %v", m.Kind)
		}
	}
	if s.Domain == nil {
		v++
	}
	p := &Plan{Spec: s, Share: s.Epsilon / float64(v), vectors: v, autos: autoCount(s)}
	if p.autos > 0 {
		// Sequential composition: AutoFraction·ε for the selections,
		// the rest for the release's vectors.
		p.EpsAuto = AutoFraction * s.Epsilon / float64(p.autos)
		p.Share = (1 - AutoFraction) * s.Epsilon / float64(v)
		if p.EpsAuto < noise.LaplaceMinEpsilon(1) {
			return nil, specErr("ε share %v per automatic bound is below the sampler's minimum %v", p.EpsAuto, noise.LaplaceMinEpsilon(1))
		}
	}
	g := 1
	if s.Domain != nil {
		g = len(s.Domain)
	} else {
		p.EpsSelect = p.Share
	}
	if p.Share < noise.LaplaceMinEpsilon(g) {
		return nil, specErr("ε share %v per measurement is below the sampler's minimum %v", p.Share, noise.LaplaceMinEpsilon(g))
	}
	if s.Domain == nil {
		// τ from the exact tail of the discrete noise actually sampled.
		t, err := noise.LaplaceTailThreshold(p.SelectScale(), s.Delta/float64(s.MaxGroups))
		if err != nil {
			return nil, specErr("partition selection: %v", err)
		}
		p.tau = 1 + t
	}
	return p, nil
}

// mid is the public centre and half-width of [lo, hi] (as agg.Mid).
func mid(lo, hi float64) (m, h float64) {
	m = lo + (hi-lo)/2
	return m, math.Max(hi-m, m-lo)
}

// Sensitivities (ℓ₁, add/remove one person; docs/privacy/units.md §3) of
// measure i: the first vector (COUNT rows, SUM, AVG persons) and, for AVG,
// the second (centred sum of person means).
func (p *Plan) Sensitivity(i int) (first, second float64) {
	k := float64(p.MaxGroups)
	m := p.Measures[i]
	switch m.Kind {
	case Count:
		return k * float64(p.MaxRows), 0
	case Sum:
		return k * math.Max(math.Abs(m.Lo), math.Abs(m.Hi)) * Sigma, 0
	default:
		_, h := mid(m.Lo, m.Hi)
		return k, k * h * Sigma
	}
}

// Scales are the Laplace scales of measure i's vectors.
func (p *Plan) Scales(i int) (first, second float64) {
	a, b := p.Sensitivity(i)
	return a / p.Share, b / p.Share
}

// SelectScale is the Laplace scale b = k/ε_τ of the person counts of the
// partition selection.
func (p *Plan) SelectScale() float64 { return float64(p.MaxGroups) / p.EpsSelect }

// Threshold is τ = 1 + t with t the smallest grid point where the
// sampled noise exceeds t with probability ≤ δ/k (≈ b·ln(k/(2δ))): a group
// present only because of one person (u = 1), who reaches at most k
// groups, is released with probability ≤ δ/k each.
func (p *Plan) Threshold() float64 { return p.tau }

// Events are the accountant's record: one Laplace event per vector, and
// the selection as one generic (ε_τ, δ) event.
func (p *Plan) Events() []budget.Event {
	n := p.vectors
	ev := p.autoEvents()
	if p.Domain == nil {
		ev = append(ev, budget.Event{Kind: budget.Generic, Epsilon: p.EpsSelect, Delta: p.Delta})
		n--
	}
	for i := 0; i < n; i++ {
		ev = append(ev, budget.Event{Kind: budget.Laplace, Epsilon: p.Share})
	}
	return ev
}

// cell is one person's rows in one group: per measure the rows with a
// value and their (compensated) sum.
type cell struct {
	all  int64 // every row (the value of C's selection)
	rows []int64
	sums []mechanism.CompensatedSum
}

type person struct {
	cells map[string]*cell
	order []string // groups in first-seen order
	keep  []string // the kept groups (Bound)
}

// Accumulator collects the rows of one release. Its memory is linear in
// the distinct (person, group) pairs (docs/privacy/units.md §6).
type Accumulator struct {
	p       *Plan
	domain  map[string]bool
	persons map[string]*person
}

// Accumulator starts a pass.
func (p *Plan) Accumulator() *Accumulator {
	a := &Accumulator{p: p, persons: map[string]*person{}}
	if p.Domain != nil {
		a.domain = make(map[string]bool, len(p.Domain))
		for _, k := range p.Domain {
			a.domain[k] = true
		}
	}
	return a
}

// Row records one row of person in group; vals[i] is measure i's value
// (NaN: NULL, the row does not count for that measure; COUNT(*) passes 1).
// A non-finite value counts as NULL. A group outside a declared domain is
// in no group.
func (a *Accumulator) Row(personID, group string, vals []float64) {
	c := a.cell(personID, group)
	if c == nil {
		return
	}
	c.all++
	for i := range a.p.Measures {
		if v := vals[i]; finite(v) {
			c.rows[i]++
			c.sums[i].Add(v)
		}
	}
}

// cell is person's cell of group (created on first use); nil for a group
// outside a declared domain.
func (a *Accumulator) cell(personID, group string) *cell {
	if a.domain != nil && !a.domain[group] {
		return nil
	}
	ps := a.persons[personID]
	if ps == nil {
		ps = &person{cells: map[string]*cell{}}
		a.persons[personID] = ps
	}
	c := ps.cells[group]
	if c == nil {
		n := len(a.p.Measures)
		c = &cell{rows: make([]int64, n), sums: make([]mechanism.CompensatedSum, n)}
		ps.cells[group] = c
		ps.order = append(ps.order, group)
	}
	return c
}

// Partial records a batch of all rows of person in group, n[i] of which
// have a value for measure i, summing to sums[i] (a partial aggregate
// computed elsewhere, e.g. by a database backend: docs/privacy/units.md
// §11). It is Row for a batch of one person's rows of one group: the
// cell's row counts add up and its sums add the partial sums, so
// everything Bound reads of the cell is a function of that person's rows
// alone, whatever the batches. A non-finite sum, or n[i] ≤ 0, adds
// nothing to measure i.
func (a *Accumulator) Partial(personID, group string, all int64, n []int64, sums []float64) {
	c := a.cell(personID, group)
	if c == nil {
		return
	}
	c.all += max(all, 0)
	for i := range a.p.Measures {
		if n[i] > 0 && finite(sums[i]) {
			c.rows[i] += n[i]
			c.sums[i].Add(sums[i])
		}
	}
}

// sampleGroups draws each person's kept groups: all of them if at most k,
// else a uniform k-subset (crypto RNG).
func (a *Accumulator) sampleGroups() error {
	p := a.p
	for _, ps := range a.persons {
		keep := ps.order
		if len(keep) > p.MaxGroups {
			sub, err := noise.SampleSubset(len(keep), p.MaxGroups)
			if err != nil {
				return fmt.Errorf("bound: group sample: %w", err)
			}
			kept := make([]string, 0, p.MaxGroups)
			for j, g := range keep {
				if sub.Has(j) {
					kept = append(kept, g)
				}
			}
			keep = kept
		}
		ps.keep = keep
	}
	return nil
}

// total is one group's bounded, pre-noise statistics.
type total struct {
	persons int64     // persons with the group among their kept groups
	first   []float64 // per measure: COUNT rows, SUM, AVG persons
	second  []mechanism.SplitSum
}

// Bounded is the pre-noise, contribution-bounded statistics: the groups
// (domain order, or sorted keys of the groups present) and per measure the
// first vector and (AVG) the centred sum vector. Tests and audits read it;
// Release adds the noise.
type Bounded struct {
	Keys    []string
	Persons []float64   // per group: persons contributing (selection)
	First   [][]float64 // [measure][group]
	Second  [][]float64 // [measure][group], AVG only
	// The bounds used: the Spec's, or those chosen privately (auto.go).
	MaxRows int
	Lo, Hi  []float64
}

// Bound draws each person's kept groups (at most k, uniformly with the
// crypto RNG), chooses the automatic bounds if any (on the kept pairs:
// the same draw serves the selection and the release) and computes the
// bounded statistics.
func (a *Accumulator) Bound() (*Bounded, error) {
	p := a.p
	nm := len(p.Measures)
	if err := a.sampleGroups(); err != nil {
		return nil, err
	}
	ch, err := a.choose()
	if err != nil {
		return nil, err
	}
	totals := map[string]*total{}
	for _, ps := range a.persons {
		for _, g := range ps.keep {
			c := ps.cells[g]
			t := totals[g]
			if t == nil {
				t = &total{first: make([]float64, nm), second: make([]mechanism.SplitSum, nm)}
				totals[g] = t
			}
			t.persons++
			for i, m := range p.Measures {
				rows := c.rows[i]
				if rows == 0 {
					continue
				}
				switch m.Kind {
				case Count:
					t.first[i] += float64(min(rows, int64(ch.maxRows)))
				case Sum:
					t.second[i].Add(mechanism.Clip(c.sums[i].Sum(), ch.lo[i], ch.hi[i]), 0)
				case Avg:
					mc, _ := mid(m.Lo, m.Hi)
					t.first[i]++
					t.second[i].Add(mechanism.Clip(c.sums[i].Sum()/float64(rows), m.Lo, m.Hi), mc)
				}
			}
		}
	}
	keys := p.Domain
	if keys == nil {
		keys = make([]string, 0, len(totals))
		for k := range totals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	b := &Bounded{Keys: keys, Persons: make([]float64, len(keys)), First: make([][]float64, nm), Second: make([][]float64, nm),
		MaxRows: ch.maxRows, Lo: ch.lo, Hi: ch.hi}
	for i := range p.Measures {
		b.First[i] = make([]float64, len(keys))
		b.Second[i] = make([]float64, len(keys))
	}
	for g, k := range keys {
		t := totals[k]
		if t == nil {
			continue
		}
		b.Persons[g] = float64(t.persons)
		for i, m := range p.Measures {
			if m.Kind == Sum {
				b.First[i][g] = t.second[i].Value()
				continue
			}
			b.First[i][g] = t.first[i]
			b.Second[i][g] = t.second[i].Value()
		}
	}
	return b, nil
}

// Result is the released answer: the groups and per measure one value per
// group (COUNT rounded and ≥ 0; SUM; AVG in its bounds), with the scales.
type Result struct {
	Keys      []string
	Values    [][]float64 // [measure][group]
	Scales    [][2]float64
	Threshold float64 // selection only
	// The bounds of the release (chosen privately when Auto).
	Auto    bool
	MaxRows int
	Bounds  [][2]float64 // per measure (SUM, AVG)
}

// Release bounds the contributions and adds the noise.
func (a *Accumulator) Release() (*Result, error) {
	b, err := a.Bound()
	if err != nil {
		return nil, err
	}
	return a.p.noisy(b)
}

// noisy adds the noise to bounded statistics and post-processes them.
func (p *Plan) noisy(b *Bounded) (*Result, error) {
	r := &Result{Scales: make([][2]float64, len(p.Measures)), Auto: p.autos > 0, MaxRows: b.MaxRows}
	for i := range p.Measures {
		r.Bounds = append(r.Bounds, [2]float64{b.Lo[i], b.Hi[i]})
	}
	p = p.with(chosen{maxRows: b.MaxRows, lo: b.Lo, hi: b.Hi})
	for i := range p.Measures {
		s1, s2 := p.Scales(i)
		r.Scales[i] = [2]float64{s1, s2}
	}
	keep := make([]int, 0, len(b.Keys))
	if p.Domain == nil {
		// Person-level τ-thresholding, one coordinate at a time (the grid
		// depends on the scale only, not on how many groups are present).
		r.Threshold = p.Threshold()
		for g := range b.Keys {
			u, err := noise.AddLaplace(b.Persons[g], p.SelectScale())
			if err != nil {
				return nil, fmt.Errorf("bound: selection noise: %w", err)
			}
			if u > r.Threshold {
				keep = append(keep, g)
			}
		}
	} else {
		for g := range b.Keys {
			keep = append(keep, g)
		}
	}
	r.Keys = make([]string, len(keep))
	for j, g := range keep {
		r.Keys[j] = b.Keys[g]
	}
	vec := func(src []float64, scale float64) ([]float64, error) {
		x := make([]float64, len(keep))
		for j, g := range keep {
			x[j] = src[g]
		}
		if p.Domain != nil {
			return x, noise.AddLaplaceVec(x, scale)
		}
		for j := range x {
			v, err := noise.AddLaplace(x[j], scale)
			if err != nil {
				return nil, err
			}
			x[j] = v
		}
		return x, nil
	}
	for i, m := range p.Measures {
		s := r.Scales[i]
		first, err := vec(b.First[i], s[0])
		if err != nil {
			return nil, fmt.Errorf("bound: %s noise: %w", m.Kind, err)
		}
		switch m.Kind {
		case Count:
			for j, v := range first {
				first[j] = math.Max(0, math.Round(v))
			}
		case Avg:
			second, err := vec(b.Second[i], s[1])
			if err != nil {
				return nil, fmt.Errorf("bound: AVG noise: %w", err)
			}
			mc, _ := mid(m.Lo, m.Hi)
			for j := range first {
				first[j] = mechanism.Clip(mc+second[j]/math.Max(1, first[j]), m.Lo, m.Hi)
			}
		}
		r.Values = append(r.Values, first)
	}
	return r, nil
}
