package box

import (
	"errors"
	"fmt"
	"math"
	"sort"

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
	// TailNoise, TailMin and TailMax set the public clipped fraction t of
	// each end (Tail): t = TailNoise·b·ln K/n clamped to [TailMin, TailMax],
	// b = 2/ε_q the noise scale of one utility. A target rank t·n rows from
	// the extreme keeps the grid points beyond the data (all of utility
	// −t·n) below the true quantile's by about the noise's maximum.
	TailNoise = 1.0
	TailMin   = 0.01
	TailMax   = 0.1
	// Penalty is γ/b: the public cost, in units of the noise scale b, of
	// one octave of distance between a bound and the released median
	// (docs/mechanisms/box.md §3). It turns the flat utility of the grid
	// points beyond the data into a slope.
	Penalty = 1.0
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
	sort.Float64s(pts)
	out := pts[:1]
	for _, v := range pts[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// Tail is the public clipped fraction of each end for n rows, quantile
// budget ε_q and a grid of k points.
func Tail(n int, epsQ float64, k int) float64 {
	t := TailNoise * (2 / epsQ) * math.Log(float64(k)) / float64(max(n, 1))
	return math.Min(TailMax, math.Max(TailMin, t))
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
	// noiseMul multiplies the noise scale (tests only: must-fail
	// variants; 0 means 1).
	noiseMul float64
}

// New plans the release of a box for n rows (public) of d = len(lo)
// features declared on [lo_j, hi_j], each of the 2d quantiles ε_q-DP.
// tail = 0 selects the Tail rule (from the largest grid). Its errors depend
// only on public inputs.
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
	k := 0
	for j := range lo {
		if math.IsNaN(lo[j]) || math.IsNaN(hi[j]) || math.IsInf(lo[j], 0) || math.IsInf(hi[j], 0) || !(lo[j] < hi[j]) {
			return nil, fmt.Errorf("box: bounds of feature %d must be finite with lower < upper, got [%v, %v]", j, lo[j], hi[j])
		}
		p.grids[j] = Grid(lo[j], hi[j])
		k = max(k, len(p.grids[j]))
	}
	if tail == 0 {
		tail = Tail(n, epsQ, k)
	}
	p.tail = tail
	p.gamma = Penalty * p.Scale()
	return p, nil
}

// WithPenalty returns a copy of p whose penalty is c·b per octave (c = 0:
// the plain quantiles, no median; for the measurements behind Penalty).
func (p *Plan) WithPenalty(c float64) *Plan {
	q := *p
	q.gamma = c * p.Scale()
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

// noisyMax returns the index of the largest u_i + Laplace(scale) (ties:
// lowest index, a data-independent rule).
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
	for j := 0; j < d; j++ {
		lo, hi, err := p.releaseFeature(j, func(i int) float64 { return X[i][j] })
		if err != nil {
			return Box{}, err
		}
		b.Lo[j], b.Hi[j] = p.grids[j][lo], p.grids[j][hi]
	}
	return b, nil
}

// releaseFeature releases feature j's box as grid indices lo < hi: the
// median (when the penalty is on), then the t- and (1 − t)-quantiles with
// the median-anchored penalty, each by report-noisy-max at ε_q.
func (p *Plan) releaseFeature(j int, col func(i int) float64) (int, int, error) {
	g := p.grids[j]
	c := counts(g, col, p.n)
	ul, uh := Utilities(c, p.tail, p.n), Utilities(c, 1-p.tail, p.n)
	if p.gamma > 0 {
		m, err := noisyMax(Utilities(c, 0.5, p.n), p.noiseScale())
		if err != nil {
			return 0, 0, err
		}
		penalize(ul, uh, g, m, p.gamma, p.hi[j]-p.lo[j])
	}
	lo, err := noisyMax(ul, p.noiseScale())
	if err != nil {
		return 0, 0, err
	}
	hi, err := noisyMax(uh, p.noiseScale())
	if err != nil {
		return 0, 0, err
	}
	lo, hi = Order(lo, hi, len(g))
	return lo, hi, nil
}

// penalize subtracts from the lower- and upper-bound utilities the public
// cost of their distance to the released median g[m]: γ·log₂(1 + dist/s₀)
// rounded to an integer, s₀ = w·2^−Octaves the grid's finest step (w the
// declared width; +Inf when w overflows, then no penalty). A function of
// released and public values only, so every utility keeps sensitivity 1
// and stays an integer (on the noise grid).
func penalize(ul, uh, g []float64, m int, gamma, w float64) {
	s0 := w * math.Exp2(-Octaves)
	if !(s0 > 0) || math.IsInf(s0, 0) {
		return
	}
	for i, v := range g {
		pen := math.Round(gamma * math.Log2(1+math.Abs(v-g[m])/s0))
		if i < m {
			ul[i] -= pen
		}
		if i > m {
			uh[i] -= pen
		}
	}
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
