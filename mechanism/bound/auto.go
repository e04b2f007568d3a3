package bound

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism/agg"
)

// Automatic contribution bounds (docs/privacy/units.md §3a): a public
// fraction of ε chooses C (rows per person and group, COUNT) and, per SUM
// marked Auto, the clamp of a person's per-group sum, each by a
// person-level quantile over the (person, kept group) pairs, on a public
// geometric grid inside public limits; the release then runs with the
// chosen bounds on the rest of ε. Every constant here is public.
const (
	// AutoMaxRows is C_max: the largest C the selection may choose, and
	// the factor of a SUM's declared row bound that gives its outer limit.
	AutoMaxRows = 1000
	// AutoFraction of ε pays for the selections (split equally among them).
	AutoFraction = 0.1
	// AutoGroupPersons is the public group size the bias/noise balance is
	// struck for (issue 27's accuracy target: groups of ≥ 1,000 persons).
	AutoGroupPersons = 1000
	// autoPerOctave grid points per doubling.
	autoPerOctave = 4
	// autoSumOctaves: the SUM grid spans B·2^−14 … B, B the outer limit.
	autoSumOctaves = 14
	// Quantile levels are kept in [autoQMin, autoQMax].
	autoQMin, autoQMax = 0.5, 0.999
)

// autoRowsGrid is the public candidate list for C: the distinct integers
// round(2^(j/4)) from 1 up to AutoMaxRows, which is the last point.
var autoRowsGrid = func() []float64 {
	var g []float64
	for j := 0; ; j++ {
		c := math.Round(math.Exp2(float64(j) / autoPerOctave))
		if c >= AutoMaxRows {
			return append(g, AutoMaxRows)
		}
		if len(g) == 0 || c > g[len(g)-1] {
			g = append(g, c)
		}
	}
}()

// AutoRowsGrid returns a copy of the candidates for C (ascending).
func AutoRowsGrid() []float64 { return append([]float64(nil), autoRowsGrid...) }

// AutoSumGrid is the candidate list for the magnitude b of a SUM clamp with
// outer limits [lo, hi] (lo ≤ 0 ≤ hi): B·2^(−j/4), B = max(|lo|, |hi|),
// ascending, the last point B.
func AutoSumGrid(lo, hi float64) []float64 {
	b := math.Max(math.Abs(lo), math.Abs(hi))
	n := autoSumOctaves*autoPerOctave + 1
	g := make([]float64, n)
	for j := 0; j < n; j++ {
		g[n-1-j] = b * math.Exp2(-float64(j)/autoPerOctave)
	}
	g[n-1] = b
	return g
}

// AutoClamp is the SUM clamp for a chosen magnitude b inside the outer
// limits [lo, hi]: [max(lo, −b), min(hi, b)].
func AutoClamp(lo, hi, b float64) (float64, float64) {
	return math.Max(lo, -b), math.Min(hi, b)
}

// autoCount is the number of private selections of s (C needs a COUNT).
func autoCount(s Spec) int {
	n := 0
	if s.AutoRows {
		for _, m := range s.Measures {
			if m.Kind == Count {
				n++
				break
			}
		}
	}
	for _, m := range s.Measures {
		if m.Auto {
			n++
		}
	}
	return n
}

// AutoQuantile is the quantile level q of the selections: the bound τ that
// balances, in a group of N = AutoGroupPersons persons, the bias
// Σ (v − τ)⁺ against the Laplace noise's standard deviation √2·k·τ/ε_i
// (ε_i the release's share per vector) has d/dτ = 0 where #{v > τ} =
// √2·k/ε_i, i.e. a tail fraction 1 − q = √2·k/(ε_i·N), kept in
// [1 − autoQMax, 1 − autoQMin]. Public: k, ε_i and N only.
func (p *Plan) AutoQuantile() float64 {
	tail := math.Sqrt2 * float64(p.MaxGroups) / (p.Share * AutoGroupPersons)
	return math.Min(autoQMax, math.Max(autoQMin, 1-tail))
}

// AutoSensitivity is Δ of every selection's utilities: a person keeps at
// most k groups and gives one value per kept group, so m ≤ k values and
// Δ = ⌈k·max(q, 1 − q)⌉ (mechanism/bound/quantile.go with C = k).
func (p *Plan) AutoSensitivity() float64 {
	q := p.AutoQuantile()
	return math.Ceil(float64(p.MaxGroups) * math.Max(q, 1-q))
}

// AutoScale is the report-noisy-max scale 2Δ/ε_a of each selection.
func (p *Plan) AutoScale() float64 { return 2 * p.AutoSensitivity() / p.EpsAuto }

// autoCells puts each value in the first grid point ≥ it (values above the
// last point in the last one: the quantile of min(v, top)). The loop runs
// over the whole grid for every value (time independent of the value).
func autoCells(grid []float64, vals []float64) []int64 {
	cells := make([]int64, len(grid))
	for _, v := range vals {
		j := 0
		for _, g := range grid[:len(grid)-1] {
			if v > g {
				j++
			}
		}
		cells[j]++
	}
	return cells
}

// AutoStep is the public penalty per grid step, λ = ⌈2Δ/ε_a⌉ (one noise
// scale of the selection, an integer so that utilities stay on the
// sampler's integer grid): a larger bound is chosen only if it brings
// the rank closer to the target by more than the selection's own noise.
// Without it, every grid point above the largest value ties (r_j = n) and
// report-noisy-max picks among them uniformly (C up to C_max for data
// whose values stop at 100; on a small table, anywhere on the grid).
func (p *Plan) AutoStep() float64 { return math.Ceil(p.AutoScale()) }

// AutoUtilities are the selection's utilities over grid for vals (one
// value per kept (person, group) pair; at most k per person):
// u_j = −|r_j − round(q·n)| − λ·j. The penalty is public and the same on
// neighbours, so the sensitivity is that of the rank term, Δ.
func (p *Plan) AutoUtilities(grid, vals []float64) []float64 {
	u := Utilities(p.AutoQuantile(), autoCells(grid, vals), int64(len(vals)))
	return penalize(u, p.AutoStep())
}

func penalize(u []float64, step float64) []float64 {
	for j := range u {
		u[j] -= step * float64(j)
	}
	return u
}

// AutoChoose is one selection: report-noisy-max over AutoUtilities with
// Laplace scale 2Δ/ε_a. It returns the chosen grid index.
func (p *Plan) AutoChoose(grid, vals []float64) (int, error) {
	j, err := agg.NoisyMax(p.AutoUtilities(grid, vals), p.AutoScale())
	if err != nil {
		return 0, fmt.Errorf("bound: automatic bound: %w", err)
	}
	return j, nil
}

// autoEvents are the selections' records, one Laplace event each
// (report-noisy-max with Laplace noise is ε_a-DP, as agg.Quantile).
func (p *Plan) autoEvents() []budget.Event {
	var ev []budget.Event
	for i := 0; i < p.autos; i++ {
		ev = append(ev, budget.Event{Kind: budget.Laplace, Epsilon: p.EpsAuto})
	}
	return ev
}

// chosen are the bounds a release uses: the Spec's, or the selections'.
type chosen struct {
	maxRows int
	lo, hi  []float64
}

// choose runs the selections over the kept pairs (persons' kept groups
// already drawn) and returns the bounds of the release.
func (a *Accumulator) choose() (chosen, error) {
	p := a.p
	ch := chosen{maxRows: p.MaxRows, lo: make([]float64, len(p.Measures)), hi: make([]float64, len(p.Measures))}
	for i, m := range p.Measures {
		ch.lo[i], ch.hi[i] = m.Lo, m.Hi
	}
	if p.autos == 0 {
		return ch, nil
	}
	vals := a.autoValues()
	if p.AutoRows && hasCount(p.Measures) {
		j, err := p.AutoChoose(autoRowsGrid, vals.rows)
		if err != nil {
			return ch, err
		}
		ch.maxRows = int(autoRowsGrid[j])
	}
	for i, m := range p.Measures {
		if !m.Auto {
			continue
		}
		grid := AutoSumGrid(m.Lo, m.Hi)
		j, err := p.AutoChoose(grid, vals.sums[i])
		if err != nil {
			return ch, err
		}
		ch.lo[i], ch.hi[i] = AutoClamp(m.Lo, m.Hi, grid[j])
	}
	return ch, nil
}

// autoInputs are the selections' values, one per kept (person, group)
// pair: its row count (C), and per SUM measure |the person's sum| (0 when
// the pair has no non-NULL value).
type autoInputs struct {
	rows []float64
	sums [][]float64 // [measure]
}

// autoValues reads the kept pairs (sampleGroups has run).
func (a *Accumulator) autoValues() autoInputs {
	in := autoInputs{sums: make([][]float64, len(a.p.Measures))}
	for _, ps := range a.persons {
		for _, g := range ps.keep {
			c := ps.cells[g]
			in.rows = append(in.rows, float64(c.all))
			for i, m := range a.p.Measures {
				if !m.Auto {
					continue
				}
				v := 0.0
				if c.rows[i] > 0 {
					v = math.Abs(c.sums[i].Sum())
				}
				in.sums[i] = append(in.sums[i], v)
			}
		}
	}
	return in
}

func hasCount(ms []Measure) bool {
	for _, m := range ms {
		if m.Kind == Count {
			return true
		}
	}
	return false
}

// with is the plan with the chosen bounds in place of the Spec's (same
// shares): the release's scales and clamps.
func (p *Plan) with(ch chosen) *Plan {
	q := *p
	q.Spec.MaxRows = ch.maxRows
	q.Spec.Measures = append([]Measure(nil), p.Measures...)
	for i := range q.Spec.Measures {
		q.Spec.Measures[i].Lo, q.Spec.Measures[i].Hi = ch.lo[i], ch.hi[i]
		q.Spec.Measures[i].Auto = false
	}
	q.Spec.AutoRows = false
	return &q
}
