package box

// Modes of DP_TRAIN's box= option.
const (
	ModePublic  = "public"  // scale by the declared boxes
	ModePrivate = "private" // release a private box first (charged)
)

// MinNEpsQ is the smallest n·ε_q (ε_q the budget of each quantile) at
// which the default rule releases a private box. Below it the median's
// utility gap (≈ n/2) hardly clears the maximum of the noise over the grid
// (≈ (2/ε_q)·ln K ≈ 10/ε_q), the bonus cap falls to 0 and the box is
// mostly noise: on tight synthetic boxes logreg lost up to 0.085 at
// n·ε_q = 10, and at most ≈ 0.04 (within run-to-run noise) from 20 on,
// where loose, heavy-tailed and mixed boxes gained 0.05–0.6
// (docs/mechanisms/box.md §6).
const MinNEpsQ = 20

// UsePrivate is the public default rule of box=auto for n rows, d
// features, at (ε, δ): a private box when each quantile's n·ε_q reaches
// MinNEpsQ.
func UsePrivate(n, d int, eps, delta float64) bool {
	s, err := newSplit(eps, delta, d, Share, Quantiles, true)
	if err != nil {
		return false
	}
	return float64(n)*s.EpsQ >= MinNEpsQ
}

// N is the row count the plan was made for.
func (p *Plan) N() int { return p.n }
