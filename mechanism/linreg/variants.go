package linreg

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/mechanism"
)

// Variant is one post-processing of the released statistics: AdaSSP's
// ridge factor c in λ = max(0, c·E − λ̃_min) and the eigenvalue floor
// factor f (eigenvalues of XᵀX̂ + λI raised to f·E). Train's model is
// {RidgeFactor, FloorFactor}.
type Variant struct {
	Ridge, Floor float64
}

// TrainVariants is Train for private hyperparameter selection: ONE noisy
// release of the statistics, then one model per variant. Every model is a
// post-processing of the same release: the cost is Events(), whatever the
// number of variants. Shape errors and invalid variants (public) are the
// only errors.
func (t *Trainer) TrainVariants(X [][]float64, y []float64, variants []Variant) ([]*mechanism.Model, error) {
	for _, v := range variants {
		if !(v.Ridge >= 0) || math.IsInf(v.Ridge, 0) || !(v.Floor > 0) || math.IsInf(v.Floor, 0) {
			return nil, fmt.Errorf("linreg: variant %+v needs a finite ridge factor ≥ 0 and a finite floor factor > 0", v)
		}
	}
	if err := t.checkRows(X, y); err != nil {
		return nil, err
	}
	if t.ref != nil {
		// §15's gradient steps would be releases per variant: the AdaSSP
		// stage takes their share instead (the same one event).
		c, err := t.withoutRefine()
		if err != nil {
			return nil, err
		}
		t = c
	}
	// A private-bounds plan releases its clipping radii first, exactly as
	// Train does; its events already include them.
	st, clip := t.stats(X, y), (*privClip)(nil)
	if t.PrivateBounds() {
		var err error
		if clip, err = t.releaseRowMap(X, y); err != nil {
			return nil, err
		}
		if t.meanOnly {
			// §14's intercept-only model: nothing to post-process.
			out := make([]*mechanism.Model, len(variants))
			for i := range out {
				out[i] = t.model(make([]float64, t.f), t.Params(), clip)
			}
			return out, nil
		}
		if t.pre != nil {
			// And its preconditioner (§12), as Train does: the events
			// include the first stage.
			if clip.m, err = t.releasePrecond(sufficientStats(X, y, t.prep, t.cfg.LabelLo, t.cfg.LabelHi, t.workers, clip)); err != nil {
				return nil, fmt.Errorf("linreg: adding noise: %w", err)
			}
		}
		st = sufficientStats(X, y, t.prep, t.cfg.LabelLo, t.cfg.LabelHi, t.workers, clip)
	}
	r, err := t.addNoise(st)
	if err != nil {
		return nil, err
	}
	out := make([]*mechanism.Model, len(variants))
	ridge, floor := t.ridgeFactor, t.floor
	defer func() { t.ridgeFactor, t.floor = ridge, floor }()
	for i, v := range variants {
		t.ridgeFactor, t.floor = v.Ridge, v.Floor
		theta, lambda := t.estimate(r)
		params := t.Params()
		params["lambda"], params["ridge_factor"], params["floor_factor"] = lambda, v.Ridge, v.Floor
		out[i] = t.model(theta, params, clip)
	}
	return out, nil
}
