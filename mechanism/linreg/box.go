package linreg

import (
	"fmt"
	"math"
	"sort"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/agg"
	"github.com/dpsql/dpsql/mechanism/box"
	"github.com/dpsql/dpsql/noise"
)

// Per-feature private box (docs/mechanisms/linreg.md §13).
//
// §11's norm radius rescales all features together, so a heavy-tailed
// column whose declared box is 10–100× its bulk keeps its rows in a corner
// of [−1, 1] (z ≈ −0.9 for nearly every row) and its signal stays below the
// noise. With bounds=box each feature j first gets two DP quantiles
// (report-noisy-max as in agg.Quantile) on a public grid inside the
// declared [lo_j, hi_j]: a lower end a_j (the BoxLevel-quantile, taken as
// the upper quantile of the reversed ranks so that both ends are the same
// mechanism) and an upper end b_j (the (1 − BoxLevel)-quantile), with a
// public outward penalty so that the many grid points past the data cannot
// win on noise alone, then widened by a margin around its centre. The
// released box replaces the declared one in the Scaler: rows are clipped to
// it and mapped to [−1, 1]^d, and §11 (norm and label radii), §12 and
// AdaSSP run unchanged on the mapped rows — their sensitivities use only
// ‖x‖ ≤ 1, which holds for every box. The model's Scaler is the released
// box, so DP_PREDICT on raw rows applies the same map.

// BoundsBox is the Config.Bounds mode with the per-feature private box
// before §11's radii.
const BoundsBox = "box"

// Public constants of the private box.
const (
	// BoxShare is the share of the release's zCDP budget (R², δ > 0) spent
	// on the 2d box quantiles: each has ε_b = R·√(BoxShare/(2d)).
	BoxShare = 0.1
	// BoxShareBasic is the share of ε spent on them under basic
	// composition (δ = 0, and the basic branch at large ε): ε_b =
	// BoxShareBasic·ε/(2d).
	BoxShareBasic = 0.1
	// BoxTail is the smallest fraction of rows each end of the box aims to
	// leave outside; BoxRankC/(n·ε_b) raises it where report-noisy-max's
	// rank error would otherwise let the grid points beyond the data
	// (utility −tail·n each, many of them) win (BoxLevel), up to BoxMaxTail.
	BoxTail    = 0.005
	BoxRankC   = 1
	BoxMaxTail = 0.2
	// BoxPenalty is P of the outward penalty (boxQuantile): across the
	// whole grid it adds up to P noise scales.
	BoxPenalty = 32
	// BoxMargin widens the released box at both ends by the same
	// min(BoxMargin·width, room to the declared bounds) (widen): less
	// per-coordinate clipping bias, same centre.
	BoxMargin = 0.5
	// BoxLinear is the number of equal steps of the grid across the
	// declared box; BoxOctaves × BoxStepsPerOctave geometric points are
	// added from each end so that a box in a corner is resolved.
	BoxLinear         = 256
	BoxOctaves        = 12
	BoxStepsPerOctave = 8
	// BoxMinNEps is the n·ε_b from which bounds=auto adds the box (UseBox).
	BoxMinNEps = 100
	// BoxMinNEpsPure and BoxMaxFeaturesPure are the stricter rule for
	// δ = 0, where the box's share of ε costs AdaSSP's Laplace noise more:
	// on light-tailed data it lost 2–5 % at n·ε_b = 100 (d = 8 and 50) and
	// still 5–24 % at d = 50, n·ε_b = 300, but nothing at d ≤ 10 from
	// n·ε_b ≈ 300 (linreg.md §13).
	BoxMinNEpsPure     = 300
	BoxMaxFeaturesPure = 10
)

// boxGrid returns the public grid of feature box ends inside [lo, hi]:
// BoxLinear equal steps plus points at distances 2^(−k/BoxStepsPerOctave)
// of the width from each end (k = 1 … BoxOctaves·BoxStepsPerOctave),
// sorted, strictly increasing, first lo and last hi. Interpolation as
// lo·(1 − t) + hi·t cannot overflow for any finite bounds.
func boxGrid(lo, hi float64) []float64 {
	lerp := func(t float64) float64 { return lo*(1-t) + hi*t }
	pts := []float64{lo, hi}
	for k := 1; k < BoxLinear; k++ {
		pts = append(pts, lerp(float64(k)/BoxLinear))
	}
	for k := 1; k <= BoxOctaves*BoxStepsPerOctave; k++ {
		t := math.Exp2(-float64(k) / BoxStepsPerOctave)
		pts = append(pts, lerp(t), lerp(1-t))
	}
	sort.Float64s(pts)
	out := pts[:0]
	for _, p := range pts {
		if !(p >= lo && p <= hi) {
			continue
		}
		if len(out) == 0 || p > out[len(out)-1] {
			out = append(out, p)
		}
	}
	return out
}

// boxQuantile is one box end: report-noisy-max over the K grid indices
// with utilities u_j = −|r_j − round(q·n)| − pen_j, r_j the number of rows
// in cells 0…j (so replacing a row moves every r_j, every u_j, by at most
// Δ = 1), and the public outward penalty pen_j = ⌊P·b·j/(K − 1)⌋ (b = 2/ε
// the noise scale, P = BoxPenalty): past the data every grid point has the
// same rank utility, and without the penalty the best of those many ties'
// noises beats the target. pen_j is a data-independent integer, so every
// u_j is an integer, exactly on noise.AddLaplace's grid (g ≤ 1 for every
// scale ≤ 2⁴⁰), as in agg.Quantile (whose proof this is: it only uses
// P[z ≥ t]/P[z ≥ t + 2Δ] ≤ exp(2Δ/b); a data-independent offset per
// candidate does not enter it). Ties go to the lowest index.
type boxQuantile struct {
	k   int
	q   float64
	eps float64
	pen []float64
}

func newBoxQuantile(k int, q, eps, penalty float64) (*boxQuantile, error) {
	if !(eps >= noise.LaplaceMinEpsilon(1)) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("quantile epsilon %v outside the Laplace sampler's range", eps)
	}
	if k < 2 || k > agg.MaxQuantileGrid {
		return nil, fmt.Errorf("grid size %d outside [2, %d]", k, agg.MaxQuantileGrid)
	}
	b := &boxQuantile{k: k, q: q, eps: eps, pen: make([]float64, k)}
	for j := range b.pen {
		b.pen[j] = math.Floor(penalty * b.scale() * float64(j) / float64(k-1))
	}
	return b, nil
}

// scale is the Laplace scale 2Δ/ε with Δ = 1.
func (b *boxQuantile) scale() float64 { return 2 / b.eps }

func (b *boxQuantile) event() budget.Event { return budget.Event{Kind: budget.Laplace, Epsilon: b.eps} }

// utilities are the integer utilities of cell counts (n rows, NULLs
// counted in n and in no cell).
// They are the rank utilities of mechanism/box (box.Utilities) less the
// outward penalty.
func (b *boxQuantile) utilities(cells []int64, n int64) []float64 {
	u := box.Utilities(cells, b.q, int(n))
	for j := range u {
		u[j] -= b.pen[j]
	}
	return u
}

// release returns the index chosen by report-noisy-max (box.NoisyMax, the
// same mechanism as mechanism/box's quantiles).
func (b *boxQuantile) release(cells []int64, n int64) (int, error) {
	j, err := box.NoisyMax(b.utilities(cells, n), b.scale())
	if err != nil {
		return 0, fmt.Errorf("quantile: %w", err)
	}
	return j, nil
}

// boxPlan is the plan of the 2d box quantiles: per feature a grid and two
// report-noisy-max quantiles on its index domain {0, …, K − 1}.
type boxPlan struct {
	eps          float64 // ε of each quantile
	tail         float64
	margin       float64 // BoxMargin (tests vary it)
	grids        [][]float64
	lower, upper []*boxQuantile
}

func planBox(eps, tail, penalty float64, lo, hi []float64) (*boxPlan, error) {
	if !(tail > 0 && tail < 0.5) {
		return nil, fmt.Errorf("box tail must be in (0, 0.5), got %v", tail)
	}
	b := &boxPlan{eps: eps, tail: tail, margin: BoxMargin}
	for j := range lo {
		g := boxGrid(lo[j], hi[j])
		k := len(g)
		up, err := newBoxQuantile(k, 1-tail, eps, penalty)
		if err != nil {
			return nil, fmt.Errorf("box of feature %d: %w", j, err)
		}
		// The lower end is the (1 − tail)-quantile of the reversed index:
		// the same mechanism on K − 1 − (largest grid index ≤ v), so its
		// penalty also grows outwards.
		down, err := newBoxQuantile(k, 1-tail, eps, penalty)
		if err != nil {
			return nil, fmt.Errorf("box of feature %d: %w", j, err)
		}
		b.grids = append(b.grids, g)
		b.upper = append(b.upper, up)
		b.lower = append(b.lower, down)
	}
	return b, nil
}

// events are the 2d quantiles' pure-ε records (basic composition).
func (b *boxPlan) events() []budget.Event {
	out := make([]budget.Event, 0, 2*len(b.grids))
	for j := range b.grids {
		out = append(out, b.lower[j].event(), b.upper[j].event())
	}
	return out
}

// boxIndex returns for a value v (clipped to the grid g) the smallest index
// c with g[c] ≥ v and the largest f with g[f] ≤ v.
func boxIndex(g []float64, v float64) (c, f int) {
	v = mechanism.Clip(v, g[0], g[len(g)-1])
	c = sort.SearchFloat64s(g, v)
	f = c
	if g[c] > v {
		f = c - 1
	}
	return c, f
}

// counts returns, per feature, the cells of the upper quantile (row in
// cell c: the smallest grid index with g[c] ≥ v, so r_j = #{v ≤ g[j]}) and
// of the lower one (cell K − 1 − f, f the largest index with g[f] ≤ v, so
// r_j = #{v ≥ g[K−1−j]}). NULL (NaN) is in no cell.
func (b *boxPlan) counts(X [][]float64) (ups, downs [][]int64) {
	d := len(b.grids)
	ups, downs = make([][]int64, d), make([][]int64, d)
	for j, g := range b.grids {
		ups[j], downs[j] = make([]int64, len(g)), make([]int64, len(g))
	}
	for _, x := range X {
		for j, v := range x[:d] {
			if math.IsNaN(v) {
				continue
			}
			g := b.grids[j]
			c, f := boxIndex(g, v)
			ups[j][c]++
			downs[j][len(g)-1-f]++
		}
	}
	return ups, downs
}

// release runs the 2d quantiles on the raw feature values (one pass) and
// returns the released box as a Scaler with an intercept. Replacing one row
// moves each rank by at most 1. The ends are ordered and a one-point box is
// widened by one grid step (a post-processing of the two indices), so
// lo′ < hi′ always.
func (b *boxPlan) release(X [][]float64) (mechanism.Scaler, error) {
	d := len(b.grids)
	ups, downs := b.counts(X)
	n := int64(len(X))
	lo, hi := make([]float64, d), make([]float64, d)
	for j, g := range b.grids {
		k := len(g)
		iu, err := b.upper[j].release(ups[j], n)
		if err != nil {
			return mechanism.Scaler{}, fmt.Errorf("box of feature %d: %w", j, err)
		}
		id, err := b.lower[j].release(downs[j], n)
		if err != nil {
			return mechanism.Scaler{}, fmt.Errorf("box of feature %d: %w", j, err)
		}
		il := k - 1 - id
		a, c := min(il, iu), max(il, iu)
		if a == c {
			if c < k-1 {
				c++
			} else {
				a--
			}
		}
		lo[j], hi[j] = widen(g[a], g[c], b.margin, g[0], g[k-1])
	}
	return mechanism.NewScaler(lo, hi, true)
}

// widen moves both ends of [a, c] outwards by the same amount,
// min(margin·(c − a), a − lo, hi − c), so the box stays inside the declared
// [lo, hi] and keeps its centre (§11 measures row norms from the box
// centre; an off-centre bulk would sit in a corner again). A
// post-processing of the released ends: per-coordinate clipping at them
// would touch up to 1 − (1 − 2·tail)^d of the rows, a bias the margin keeps
// small where the bulk reaches the ends. Interpolation as in boxGrid; the
// result stays ordered (a < c on entry).
func widen(a, c, margin, lo, hi float64) (float64, float64) {
	m := math.Min(margin*(c-a), math.Min(a-lo, hi-c))
	if !(m > 0) || math.IsInf(m, 0) {
		return a, c
	}
	na, nc := math.Max(lo, a-m), math.Min(hi, c+m)
	if !(na <= a) || !(nc >= c) {
		return a, c
	}
	return na, nc
}

// BoxLevel is the public tail fraction of each box end for n rows and a
// quantile ε_b: max(minTail, rankC/(n·ε_b)), at most BoxMaxTail: the
// report-noisy-max noise has scale 2/ε_b per grid point, and a target
// closer to the data's end than a few noise scales is mostly lost to the
// grid points beyond it (linreg.md §13).
func BoxLevel(n int, epsB, minTail, rankC float64) float64 {
	return math.Min(BoxMaxTail, math.Max(minTail, rankC/(float64(n)*epsB)))
}

// boxEpsilonJoint is each box quantile's ε when the release is one zCDP
// event of ratio total: 2d·ε_b²/2 = BoxShare·total²/2.
func boxEpsilonJoint(total float64, d int) float64 {
	return total * math.Sqrt(BoxShare/float64(2*d))
}

// boxEpsilonBasic is each box quantile's ε under basic composition.
func boxEpsilonBasic(eps float64, d int) float64 {
	return BoxShareBasic * eps / float64(2*d)
}

// boxEpsilon is the ε_b a private-bounds plan at (ε, δ) gives each box
// quantile: the joint-zCDP share when δ > 0, else the basic share (public).
func boxEpsilon(d int, eps, delta float64) float64 {
	if delta > 0 {
		if unit, err := mechanism.GaussianSigma(1, eps, delta); err == nil {
			return boxEpsilonJoint(1/unit, d)
		}
	}
	return boxEpsilonBasic(eps, d)
}

// UseBox is the public rule of bounds=auto for adding the box to private
// bounds: n·ε_b ≥ BoxMinNEps, with ε_b each box quantile's ε at (n, d, ε,
// δ), and ε_b within the Laplace sampler's range; with δ = 0,
// n·ε_b ≥ BoxMinNEpsPure and d ≤ BoxMaxFeaturesPure. Report-noisy-max's rank
// error is ≈ 2·ln(K)/ε_b rows, so below that the box ends are mostly noise
// (linreg.md §13 table).
func UseBox(n, d int, eps, delta float64) bool {
	eb := boxEpsilon(d, eps, delta)
	if eb < noise.LaplaceMinEpsilon(1) {
		return false
	}
	if delta == 0 {
		return d <= BoxMaxFeaturesPure && float64(n)*eb >= BoxMinNEpsPure
	}
	return float64(n)*eb >= BoxMinNEps
}
