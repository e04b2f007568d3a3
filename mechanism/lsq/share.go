package lsq

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
)

// outputShares are the candidate shares ρ of (ε, δ) given to the output
// step of objective and input perturbation: 2⁻¹⁰, 2⁻⁹, …, 2⁻². The plan
// keeps the one with the smallest public utility proxy (planned noise in θ
// along a typical data direction, combined with the output step's noise);
// it depends only on public quantities.
var outputShares = func() []float64 {
	var out []float64
	for k := -10; k <= -2; k++ {
		out = append(out, math.Ldexp(1, k))
	}
	return out
}()

// share is one split of the caller's (ε, δ) between the ideal mechanism
// and the output step (docs/mechanisms/lsq.md §9):
//
//	ε_out = ρε, δ_out = ρδ                  the output step's event
//	ε₁ = ε − ε_out − 2η                      the ideal mechanism's calibration
//	δ₁ = (δ − τ_δ)·e^(−η) − δ_out,  τ_δ = (1 + e^(ε+η))·τ
//
// with η the coupling ratio of the implemented noise (sum over its draws)
// and τ the tail mass outside its typical region. The ideal's event is
// charged as Generic{ε − ε_out, δ − δ_out}: it contains the slack 2η and
// the tail term.
type share struct {
	rho                  float64
	eps, delta           float64 // the caller's totals
	epsOut, deltaOut     float64
	epsIdeal, deltaIdeal float64
	ratio, tail          float64 // η and τ
}

func newShare(eps, delta, rho, ratio, tail float64) (share, error) {
	sh := share{rho: rho, eps: eps, delta: delta, epsOut: rho * eps, deltaOut: rho * delta, ratio: ratio, tail: tail}
	tailDelta := (1 + math.Exp(eps+ratio)) * tail * (1 + 1e-9)
	if !(tailDelta <= 1e-3*delta) {
		return share{}, fmt.Errorf("epsilon %v with delta %v leaves no room for the tail bound of the coupled noise (%v)", eps, delta, tailDelta)
	}
	sh.epsIdeal = eps - sh.epsOut - 2*ratio
	sh.deltaIdeal = (delta-tailDelta)*math.Exp(-ratio) - sh.deltaOut
	if !(sh.epsIdeal > 0) || !(sh.deltaIdeal > 0) {
		return share{}, fmt.Errorf("epsilon %v and delta %v are too small to split with the output step", eps, delta)
	}
	return sh, nil
}

// idealEvent is the event of the ideal mechanism, slack included.
func (sh share) idealEvent() budget.Event {
	return budget.Event{Kind: budget.Generic, Epsilon: sh.eps - sh.epsOut, Delta: sh.delta - sh.deltaOut}
}

// chosen is the plan of the best share.
type chosen[P any] struct {
	plan  P
	share share
	proxy float64
}

// chooseShare plans every candidate share and keeps the smallest proxy
// (ties: the smaller share). It fails only if no share can be planned, with
// the error of the smallest share (the most favourable to the ideal
// mechanism, so its error names the real obstacle).
func chooseShare[P any](eps, delta, ratio, tail float64, plan func(share) (P, float64, error)) (chosen[P], error) {
	var best chosen[P]
	found := false
	var firstErr error
	for _, rho := range outputShares {
		sh, err := newShare(eps, delta, rho, ratio, tail)
		if err == nil {
			var p P
			var proxy float64
			if p, proxy, err = plan(sh); err == nil {
				if !found || proxy < best.proxy {
					best, found = chosen[P]{plan: p, share: sh, proxy: proxy}, true
				}
				continue
			}
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if !found {
		return best, firstErr
	}
	return best, nil
}
