package box

import "math"

// Modes of DP_TRAIN's box= option.
const (
	ModePublic  = "public"  // scale by the declared boxes
	ModePrivate = "private" // release a private box first (charged)
)

// MinNEpsQ is the smallest n·ε_q at which the default rule releases a
// private box: below it the quantiles' utility gaps (≈ n/2 for the median)
// do not clear the maximum of the noise over the grid (≈ (2/ε_q)·ln K), and
// the released box is noise (docs/mechanisms/box.md §6).
const MinNEpsQ = 40

// UsePrivate is the public default rule of box=auto for n rows, d
// features, at (ε, δ): a private box when each quantile's n·ε_q reaches
// MinNEpsQ.
func UsePrivate(n, d int, eps, delta float64) bool {
	s, err := NewSplit(eps, delta, d)
	if err != nil {
		return false
	}
	return float64(n)*s.EpsQ >= MinNEpsQ && !math.IsInf(s.KindEps, 0)
}

// N is the row count the plan was made for.
func (p *Plan) N() int { return p.n }
