package box

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Public constants of the grid and of the quantile levels
// (docs/mechanisms/box.md §2–§3).
const (
	// LinearPoints is the number of equal steps of the linear part of a
	// feature's grid (LinearPoints + 1 points, both bounds included).
	LinearPoints = 16
	// Octaves and StepsPerOctave set the geometric parts: points at
	// distance w·2^(−k/StepsPerOctave), k = 1 … Octaves·StepsPerOctave,
	// from each declared end (w = hi − lo), and, when 0 is inside the box,
	// at ±|end|·2^(−k/StepsPerOctave) from 0.
	Octaves        = 20
	StepsPerOctave = 2
	// DefaultTail is the clipped fraction t of each end: the bounds are the
	// t- and (1 − t)-quantiles (before the penalty). The penalty, not a
	// larger t, keeps the grid points beyond the data from winning; of
	// t ∈ {0.01, the rule clamp(b·ln K/n, 0.01, 0.1)} 0.01 lost least
	// where the declared box is tight (docs/mechanisms/box.md §6).
	DefaultTail = 0.01
	// Penalty is γ/b: the public cost, in units of the noise scale b, of
	// one octave of distance between a bound and the released median
	// (docs/mechanisms/box.md §3). It turns the flat utility of the grid
	// points beyond the data into a slope.
	Penalty = 1.0
	// PenaltyOctaves caps the bonus: candidates more than PenaltyOctaves
	// octaves closer to the median than the declared end all get
	// γ·PenaltyOctaves, so the bonus can never outweigh the rank loss of a
	// bound near the median (≈ n/2) when γ·PenaltyOctaves ≪ n/2.
	PenaltyOctaves = 8
	// Quantiles is the number of quantiles released per feature (median,
	// lower and upper bound).
	Quantiles = 3
)

// Grid returns the public grid of a feature declared on [lo, hi]: sorted,
// distinct, finite, inside [lo, hi], both ends included. It is the union
// of a linear grid and geometric grids towards each end (and towards 0
// when lo < 0 < hi), so that a box in a corner of the declared one, at any
// scale down to 2^−Octaves of it, is found within a factor 2^(1/StepsPerOctave).
func Grid(lo, hi float64) []float64 {
	w := hi - lo
	half := hi/2 - lo/2 // finite even when w overflows
	pts := []float64{lo, hi}
	add := func(v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) && v > lo && v < hi {
			pts = append(pts, v)
		}
	}
	for i := 1; i < LinearPoints; i++ {
		add(lo + 2*half*float64(i)/LinearPoints)
	}
	for k := 1; k <= Octaves*StepsPerOctave; k++ {
		f := math.Exp2(-float64(k) / StepsPerOctave)
		var d float64
		if math.IsInf(w, 0) {
			d = 2 * half * f
		} else {
			d = w * f
		}
		add(lo + d)
		add(hi - d)
		if lo < 0 && hi > 0 {
			add(lo * f)
			add(hi * f)
		}
	}
	if lo < 0 && hi > 0 {
		pts = append(pts, 0)
	}
	return sortedDistinct(pts)
}

// Plan is the public plan of one box release: the grids, the quantile
// levels and the budget of each of the 2d quantiles.
type Plan struct {
	n      int
	lo, hi []float64
	grids  [][]float64
	epsQ   float64
	tail   float64
	// gamma is the penalty per octave, γ = Penalty·b (0: no median, no
	// penalty: two plain quantiles).
	gamma float64
	// octCap caps the bonus (PenaltyOctaves).
	octCap float64
	// candOct is the span of the bound candidates in octaves (Octaves;
	// the audits use fewer, to stay fast).
	candOct int
	// noiseMul multiplies the noise scale (tests only: must-fail
	// variants; 0 means 1).
	noiseMul float64
}

// New plans the release of a box for n rows (public) of d = len(lo)
// features declared on [lo_j, hi_j], each of the 2d quantiles ε_q-DP.
// tail = 0 selects DefaultTail. Its errors depend only on public inputs.
func New(n int, lo, hi []float64, epsQ, tail float64) (*Plan, error) {
	if n < 1 {
		return nil, fmt.Errorf("box: row count must be at least 1, got %d", n)
	}
	if len(lo) == 0 || len(lo) != len(hi) {
		return nil, fmt.Errorf("box: need the same non-zero number of lower and upper bounds, got %d and %d", len(lo), len(hi))
	}
	if !(epsQ > 0) || math.IsInf(epsQ, 0) || epsQ < noise.LaplaceMinEpsilon(1) {
		return nil, fmt.Errorf("box: quantile epsilon %v is outside the Laplace sampler's range [%v, ∞)", epsQ, noise.LaplaceMinEpsilon(1))
	}
	if math.IsNaN(tail) || tail < 0 || tail >= 0.5 {
		return nil, fmt.Errorf("box: tail must be in [0, 0.5), got %v", tail)
	}
	p := &Plan{n: n, lo: append([]float64(nil), lo...), hi: append([]float64(nil), hi...), epsQ: epsQ, grids: make([][]float64, len(lo))}
	for j := range lo {
		if math.IsNaN(lo[j]) || math.IsNaN(hi[j]) || math.IsInf(lo[j], 0) || math.IsInf(hi[j], 0) || !(lo[j] < hi[j]) {
			return nil, fmt.Errorf("box: bounds of feature %d must be finite with lower < upper, got [%v, %v]", j, lo[j], hi[j])
		}
		p.grids[j] = Grid(lo[j], hi[j])
		if len(p.grids[j]) > maxPoints {
			return nil, fmt.Errorf("box: grid of feature %d has %d points, the counter holds %d", j, len(p.grids[j]), maxPoints)
		}
	}
	if tail == 0 {
		tail = DefaultTail
	}
	p.tail = tail
	p.gamma = Penalty * p.Scale()
	p.octCap = PenaltyOctaves
	p.candOct = Octaves
	return p, nil
}

// WithPenalty returns a copy of p whose penalty is c·b per octave (c = 0:
// the plain quantiles, no median; for the measurements behind Penalty).
func (p *Plan) WithPenalty(c float64) *Plan {
	q := *p
	q.gamma = c * p.Scale()
	return &q
}

// WithPenaltyCap returns a copy of p whose bonus is capped at oct octaves
// (for the measurements behind PenaltyOctaves).
func (p *Plan) WithPenaltyCap(oct float64) *Plan {
	q := *p
	q.octCap = oct
	return &q
}

// Scale is the Laplace scale 2/ε_q of every utility (sensitivity 1).
func (p *Plan) Scale() float64 { return 2 / p.epsQ }

// noiseScale is the scale actually drawn (Scale but in tests).
func (p *Plan) noiseScale() float64 {
	if p.noiseMul > 0 {
		return p.Scale() * p.noiseMul
	}
	return p.Scale()
}

// Epsilon is ε_q, the budget of each quantile.
func (p *Plan) Epsilon() float64 { return p.epsQ }

// TailFraction is the public level t: the lower bound is the t-quantile
// and the upper bound the (1 − t)-quantile.
func (p *Plan) TailFraction() float64 { return p.tail }

// GridSize is the number of points of feature j's grid.
func (p *Plan) GridSize(j int) int { return len(p.grids[j]) }

// Box is a released box: feature j is clipped to [Lo[j], Hi[j]], a pair of
// grid points of the declared box with Lo[j] < Hi[j].
type Box struct {
	Lo, Hi []float64
}

// counts returns, per grid point, the number of values v with
// g[i−1] < v ≤ g[i] (v clipped to the grid's ends; NaN = NULL counted in
// no cell, but in n).
func counts(g []float64, col func(i int) float64, n int) []int64 {
	c := make([]int64, len(g))
	for i := 0; i < n; i++ {
		v := col(i)
		if math.IsNaN(v) {
			continue
		}
		j := sort.SearchFloat64s(g, v) // smallest j with g[j] ≥ v
		if j >= len(g) {
			j = len(g) - 1
		}
		c[j]++
	}
	return c
}

// Utilities returns u_i = −|r_i − round(q·n)| with r_i = #{v ≤ g_i}: the
// report-noisy-max utilities of the q-quantile on a grid with cell counts
// c. Replacing one row moves one value from one cell to another, so every
// r_i, hence every u_i, by at most 1 (n is public, so the target is fixed).
func Utilities(c []int64, q float64, n int) []float64 {
	target := math.Round(q * float64(n)) // an integer: exactly on the noise grid
	u := make([]float64, len(c))
	var r int64
	for i, ci := range c {
		r += ci
		u[i] = -math.Abs(float64(r) - target)
	}
	return u
}

// NoisyMax is report-noisy-max: the index of the largest u_i +
// Laplace(scale), noise from noise.AddLaplace, ties to the lowest index (a
// data-independent rule). Utilities of sensitivity Δ need scale 2Δ/ε for
// ε-DP (docs/mechanisms/box.md §3); mechanism/linreg's box uses it too.
func NoisyMax(u []float64, scale float64) (int, error) { return noisyMax(u, scale) }

func noisyMax(u []float64, scale float64) (int, error) {
	best, bestV := -1, math.Inf(-1)
	for i, x := range u {
		v, err := noise.AddLaplace(x, scale)
		if err != nil {
			return 0, fmt.Errorf("box: %w", err)
		}
		if v > bestV {
			best, bestV = i, v
		}
	}
	return best, nil
}

// Release computes the box from raw rows (X[i][j], transformed and clipped
// to the declared bounds; NaN for NULL): for each feature the t- and
// (1 − t)-quantiles by report-noisy-max, 2d ε_q-DP releases. It has no
// data-dependent error path: len(X) ≠ n or a short row is a caller bug.
//
// The ranks are counted, not sorted: one pass over the rows bins every value
// into its cell of the feature's grid (the quantile candidates of the first
// step), a second pass into the cells of the bound candidates once the
// medians are released. Both passes do the same work whatever the values
// (a sort's time depends on them) and give exactly the ranks #{v ≤ x} of a
// sorted column (TestRanksMatchSort).
func (p *Plan) Release(X [][]float64) (Box, error) {
	if len(X) != p.n {
		return Box{}, fmt.Errorf("box: plan for %d rows got %d", p.n, len(X))
	}
	d := len(p.lo)
	for _, r := range X {
		if len(r) != d {
			return Box{}, errors.New("box: row width differs from the number of features")
		}
	}
	b := Box{Lo: make([]float64, d), Hi: make([]float64, d)}
	fs := make([]featureRelease, d)
	for j := range fs {
		fs[j] = featureRelease{p: p, j: j}
	}
	if err := p.releaseAll(fs, X); err != nil {
		return Box{}, err
	}
	for j, f := range fs {
		b.Lo[j], b.Hi[j] = f.lo, f.hi
	}
	return b, nil
}

// releaseFeature releases feature j's box [lo, hi] from one column
// (Release does all features in the same passes).
func (p *Plan) releaseFeature(j int, col func(i int) float64) (float64, float64, error) {
	fs := []featureRelease{{p: p, j: j}}
	X := make([][]float64, p.n)
	for i := range X {
		X[i] = []float64{col(i)}
	}
	if err := p.releaseAll(fs, X); err != nil {
		return 0, 0, err
	}
	return fs[0].lo, fs[0].hi, nil
}

// featureRelease is the state of one feature's box release
// (docs/mechanisms/box.md §3). With the penalty on (γ > 0): first the
// median m on the feature's grid; then each bound among candidates at
// geometric distances from m, x_k = m ± (end − m)·2^(−k/StepsPerOctave),
// k = 0 … Octaves·StepsPerOctave (so every octave of distance from m has
// the same number of candidates, wherever the data sit), with utility
// −|r(x_k) − target| plus the public bonus γ·min(k/StepsPerOctave,
// PenaltyOctaves) for being closer to m, rounded to an integer. Each of the
// three is report-noisy-max at ε_q. γ = 0: the plain t- and
// (1 − t)-quantiles on the grid (no median).
type featureRelease struct {
	p      *Plan
	j      int
	m      float64 // released median (γ > 0)
	lo, hi float64 // released box
}

// releaseAll runs the releases of fs on the rows X, whose k-th value is
// feature fs[k].j's.
func (p *Plan) releaseAll(fs []featureRelease, X [][]float64) error {
	grids := make([][]float64, len(fs))
	for k, f := range fs {
		grids[k] = p.grids[f.j]
	}
	ranks := p.cellRanksRows(fs, grids, X)
	for k := range fs {
		if err := fs[k].first(grids[k], ranks[k]); err != nil {
			return err
		}
	}
	if p.gamma == 0 {
		return nil
	}
	cands := make([][]float64, len(fs))
	downs, ups := make([][]float64, len(fs)), make([][]float64, len(fs))
	for k, f := range fs {
		downs[k], ups[k] = candidates(f.m, p.lo[f.j], p.hi[f.j], p.candOct)
		cands[k] = sortedUnion(downs[k], ups[k])
	}
	ranks = p.cellRanksRows(fs, cands, X)
	for k := range fs {
		if err := fs[k].bounds(downs[k], ups[k], ranks[k]); err != nil {
			return err
		}
	}
	return nil
}

// first releases the median (γ > 0) or the two plain quantiles (γ = 0).
func (f *featureRelease) first(g []float64, rank func(float64) float64) error {
	p := f.p
	if p.gamma == 0 {
		l, err := p.pick(g, rank, p.tail, nil)
		if err != nil {
			return err
		}
		h, err := p.pick(g, rank, 1-p.tail, nil)
		if err != nil {
			return err
		}
		f.lo, f.hi = widen(g, l, h)
		return nil
	}
	m, err := p.pick(g, rank, 0.5, nil)
	f.m = m
	return err
}

// bounds releases the lower and upper bound among the candidates around
// the released median.
func (f *featureRelease) bounds(down, up []float64, rank func(float64) float64) error {
	p := f.p
	capOct := p.bonusCap(len(down))
	bonus := func(k int) float64 {
		return math.Round(p.gamma * math.Min(float64(k)/StepsPerOctave, capOct))
	}
	l, err := p.pick(down, rank, p.tail, bonus)
	if err != nil {
		return err
	}
	h, err := p.pick(up, rank, 1-p.tail, bonus)
	if err != nil {
		return err
	}
	f.lo, f.hi = widen(p.grids[f.j], l, h)
	return nil
}

// pick is report-noisy-max of the q-quantile among xs.
func (p *Plan) pick(xs []float64, rank func(float64) float64, q float64, bonus func(k int) float64) (float64, error) {
	i, err := noisyMax(RankUtilities(xs, rank, q, p.n, bonus), p.noiseScale())
	if err != nil {
		return 0, err
	}
	return xs[i], nil
}

// sortedUnion is the sorted distinct union of a and b.
func sortedUnion(a, b []float64) []float64 {
	return sortedDistinct(append(append([]float64(nil), a...), b...))
}

// sortedDistinct sorts u in place and returns its distinct values (u must
// not be empty).
func sortedDistinct(u []float64) []float64 {
	sort.Float64s(u)
	out := u[:1]
	for _, v := range u[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// bonusCap is the cap of the bonus in octaves: PenaltyOctaves, lowered so
// that the largest bonus γ·cap stays (ln k + 2)·b below the rank loss
// (1/2 − t)·n of a candidate at the median (k candidates, b the noise
// scale): the bonus then never makes the box collapse onto the median
// (at n·ε_q ≈ 30 an 8-octave cap did, where the declared box was tight).
// Public: n, t, b, γ, k.
func (p *Plan) bonusCap(k int) float64 {
	room := (0.5-p.tail)*float64(p.n) - (math.Log(float64(k))+2)*p.Scale()
	return math.Max(0, math.Min(p.octCap, room/p.gamma))
}

// Candidates returns the public candidates of the lower and upper bound
// given the released median m of a feature declared on [lo, hi]:
// m ∓ (m − lo | hi − m)·2^(−k/StepsPerOctave), k = 0 … Octaves·StepsPerOctave
// (k = 0 is the declared end).
func Candidates(m, lo, hi float64) (down, up []float64) {
	return candidates(m, lo, hi, Octaves)
}

func candidates(m, lo, hi float64, oct int) (down, up []float64) {
	kmax := oct * StepsPerOctave
	up, down = make([]float64, kmax+1), make([]float64, kmax+1)
	for k := range up {
		f := math.Exp2(-float64(k) / StepsPerOctave)
		up[k] = mechanism.Clip(m+(hi-m)*f, m, hi)
		down[k] = mechanism.Clip(m-(m-lo)*f, lo, m)
	}
	up[0], down[0] = hi, lo
	return down, up
}

// RankUtilities returns u_k = −|rank(x_k) − round(q·n)| + bonus(k) (bonus
// nil: 0): the report-noisy-max utilities of the q-quantile among the
// points xs, rank(x) = #{v ≤ x}. Replacing one row moves every rank, so
// every utility, by at most 1 (n is public, the bonus is public); with an
// integer bonus every utility is an integer, exactly on the noise grid.
func RankUtilities(xs []float64, rank func(float64) float64, q float64, n int, bonus func(k int) float64) []float64 {
	target := math.Round(q * float64(n))
	u := make([]float64, len(xs))
	for k, x := range xs {
		u[k] = -math.Abs(rank(x) - target)
		if bonus != nil {
			u[k] += bonus(k)
		}
	}
	return u
}

// widen makes a released pair a box of positive width (post-processing,
// public): crossed bounds are swapped and a single point is widened to the
// next point of the feature's grid above it (below it at the top).
func widen(g []float64, l, h float64) (float64, float64) {
	if l > h {
		l, h = h, l
	}
	if l < h {
		return l, h
	}
	i := sort.SearchFloat64s(g, l) // smallest i with g[i] ≥ l
	switch {
	case i < len(g) && g[i] > l:
		return l, g[i]
	case i+1 < len(g):
		return l, g[i+1]
	}
	return g[len(g)-2], h
}

// Order turns two released grid indices into a box of positive width
// (post-processing, public): crossed indices are swapped, and a single
// point is widened to the next grid point above (the one below at the top).
func Order(lo, hi, k int) (int, int) {
	if lo > hi {
		lo, hi = hi, lo
	}
	if lo == hi {
		if hi < k-1 {
			hi++
		} else {
			lo--
		}
	}
	return lo, hi
}
