package box

import (
	"fmt"
	"math"
	"sync"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Share is the public share of the budget the box gets: of zCDP's ρ when
// δ > 0 (one joint event), of ε when δ = 0 (basic composition). Of
// {0.1, 0.25}, 0.25 won on most loose, heavy-tailed and mixed synthetic
// cells and lost little where the box is tight (docs/mechanisms/box.md §6).
const Share = 0.25

// Split is the public division of one (ε, δ) charge between the 2d
// quantiles of the box and the kind that trains on the released box
// (docs/mechanisms/box.md §4).
//
// δ > 0 (Joint): R is the unit Gaussian ratio of (ε, δ), i.e. the ratio
// whose ρ = R²/2 the accountant's CKS conversion maps to (ε, δ). Each
// quantile is ε_q-DP (report-noisy-max with Laplace noise of scale 2/ε_q on
// utilities of sensitivity 1), hence ε_q²/2-zCDP (Bun & Steinke 2016,
// Prop. 1.4; no bounded-range bound is claimed: that needs Gumbel noise,
// the exponential mechanism); zCDP adds up, so Per·d quantiles plus a
// Gaussian release of ratio r are ½(Per·d·ε_q² + r²)-zCDP. ε_q = R·√(Share/(Per·d))
// and r = √(R² − Per·d·ε_q²) (both rounded down) give at most R²/2: the
// whole release is ONE Gaussian event of ratio R at (ε, δ). The kind is
// planned at (KindEps, δ), the largest ε′ whose unit ratio is at most r,
// and Events checks that its event really is one Gaussian release of ratio
// ≤ r.
//
// δ = 0: each quantile gets ε_q = Share·ε/(Per·d), the kind (1 − Share)·ε;
// one Laplace event of Per·d·ε_q plus the kind's events, adding up to at
// most ε.
type Split struct {
	Eps, Delta float64
	D          int
	Per        int     // quantiles per feature (Quantiles)
	EpsQ       float64 // each of the Per·d quantiles
	KindEps    float64 // the ε the kind is planned at (with Delta)
	Joint      bool
	// R is the joint event's ratio, r the bound on the kind's (Joint only).
	R, R2 float64
}

// NewSplit divides (ε, δ) for d features. Its errors depend only on
// public inputs.
func NewSplit(eps, delta float64, d int) (Split, error) {
	return NewSplitShare(eps, delta, d, Share, Quantiles)
}

// NewSplitShare is NewSplit with another public share in (0, 1) and per
// quantiles per feature (for the measurements behind Share and Penalty).
func NewSplitShare(eps, delta float64, d int, share float64, per int) (Split, error) {
	return newSplit(eps, delta, d, share, per, false)
}

// newSplit is NewSplitShare; skipKind leaves KindEps 0 (the bisection for
// it is the slow part; the rule needs only ε_q).
func newSplit(eps, delta float64, d int, share float64, per int, skipKind bool) (Split, error) {
	s := Split{Eps: eps, Delta: delta, D: d, Per: per}
	if per < 1 {
		return s, fmt.Errorf("box: need at least one quantile per feature, got %d", per)
	}
	if !(share > 0 && share < 1) {
		return s, fmt.Errorf("box: share must be in (0, 1), got %v", share)
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return s, fmt.Errorf("box: epsilon must be positive and finite, got %v", eps)
	}
	if !(delta >= 0 && delta < 1) {
		return s, fmt.Errorf("box: delta must be in [0, 1), got %v", delta)
	}
	if d < 1 {
		return s, fmt.Errorf("box: no features")
	}
	q := float64(per * d)
	if delta == 0 {
		s.EpsQ = math.Nextafter(share*eps/q, 0)
		s.KindEps = math.Nextafter((1-share)*eps, 0)
	} else {
		unit, err := mechanism.GaussianSigma(1, eps, delta)
		if err != nil {
			return s, fmt.Errorf("box: %w", err)
		}
		s.Joint = true
		s.R = 1 / unit
		s.EpsQ = s.R * math.Sqrt(share/q) * (1 - 1e-12)
		rest := s.R*s.R - q*s.EpsQ*s.EpsQ
		if !(rest > 0) {
			return s, fmt.Errorf("box: the quantiles use up the budget")
		}
		s.R2 = math.Sqrt(rest) * (1 - 1e-12)
		if !skipKind {
			if s.KindEps, err = epsForRatio(s.R2, eps, delta); err != nil {
				return s, err
			}
		}
	}
	if s.EpsQ < noise.LaplaceMinEpsilon(1) {
		return s, fmt.Errorf("box: epsilon %v leaves each of the %d quantiles %v, below the Laplace sampler's minimum %v", eps, per*d, s.EpsQ, noise.LaplaceMinEpsilon(1))
	}
	return s, nil
}

// unitRatio is the Gaussian ratio of (ε, δ).
func unitRatio(eps, delta float64) (float64, error) {
	u, err := mechanism.GaussianSigma(1, eps, delta)
	if err != nil {
		return 0, err
	}
	return 1 / u, nil
}

// ratioMemo keeps the last results of epsForRatio, a pure function of its
// public arguments (≈ 15 ms of GaussianSigma bisections a call, paid before
// every charge of a boxed DP_TRAIN): a repeated (r, ε, δ) gets the same
// bits back. Bounded: cleared when full.
var ratioMemo struct {
	sync.Mutex
	m map[[3]uint64]float64
}

const ratioMemoSize = 256

// epsForRatio returns (nearly) the largest ε′ ≤ eps whose unit ratio at δ
// is at most r, by bisection (the ratio grows with ε).
func epsForRatio(r, eps, delta float64) (float64, error) {
	key := [3]uint64{math.Float64bits(r), math.Float64bits(eps), math.Float64bits(delta)}
	ratioMemo.Lock()
	v, ok := ratioMemo.m[key]
	ratioMemo.Unlock()
	if ok {
		return v, nil
	}
	v, err := bisectEpsForRatio(r, eps, delta)
	if err != nil {
		return 0, err
	}
	ratioMemo.Lock()
	if ratioMemo.m == nil || len(ratioMemo.m) >= ratioMemoSize {
		ratioMemo.m = make(map[[3]uint64]float64, ratioMemoSize)
	}
	ratioMemo.m[key] = v
	ratioMemo.Unlock()
	return v, nil
}

func bisectEpsForRatio(r, eps, delta float64) (float64, error) {
	lo, hi := 0.0, eps
	for range 40 { // [0, ε] to 2⁻⁴⁰·ε: far below the 10⁻⁶ the ratio needs
		mid := lo + (hi-lo)/2
		u, err := unitRatio(mid, delta)
		if err != nil {
			// Tiny ε: σ overflows the search; treat as below r.
			lo = mid
			continue
		}
		if u <= r {
			lo = mid
		} else {
			hi = mid
		}
	}
	if !(lo > 0) {
		return 0, fmt.Errorf("box: no epsilon gives the kind's Gaussian ratio %v at delta %v", r, delta)
	}
	return lo, nil
}

// Events returns the charge of the box plus the kind whose own events are
// kind (planned at (KindEps, Delta)): one Gaussian event of ratio R at
// (ε, δ) when Joint — after checking that kind is one Gaussian release of
// ratio ≤ r — else one Laplace event of Per·d·ε_q followed by kind.
func (s Split) Events(kind []budget.Event) ([]budget.Event, error) {
	if s.Joint {
		if len(kind) != 1 || kind[0].Kind != budget.Gaussian || !(kind[0].Ratio <= s.R2) {
			return nil, fmt.Errorf("box: the kind's release %+v is not one Gaussian event of ratio ≤ %v", kind, s.R2)
		}
		return []budget.Event{mechanism.GaussianEvent(s.R, 1, s.Eps, s.Delta)}, nil
	}
	// One Laplace event for the Per·d quantiles (basic composition: their ε
	// add up; the product is rounded, never below the exact sum's float).
	out := []budget.Event{{Kind: budget.Laplace, Epsilon: float64(s.Per*s.D) * s.EpsQ}}
	return append(out, kind...), nil
}
