package lsq

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
)

// Private label centring (docs/mechanisms/lsq.md §11).
//
// Every method regularises towards w = 0, i.e. towards the MIDPOINT of the
// declared label range. When the labels' mean is far from that midpoint
// (wide public bounds, a skewed target) a strongly regularised or noisy
// model is then worse than predicting the mean. Centring spends a share
// ρ·ε of the budget on the label's private mean μ̃ (mechanism.Mean:
// Laplace, ℓ₁ sensitivity (hi − lo)/n, clamped to the bounds), and runs
// the method with (1 − ρ)·ε on the shifted labels y − (μ̃ − mid), which the
// label map clips to the same public range [lo, hi] as before, so every
// sensitivity of the method is unchanged (|y′| ≤ 1). The released model is
// the method's release with μ̃ added back through the intercept weight:
// a post-processing of two releases. The two releases compose
// sequentially (the second adaptively uses μ̃), events Laplace{ρε} plus
// the method's events at (1 − ρ)ε, δ.
//
// Only for the linear kernel: the intercept is the last feature, 1/√F.

// CenterOff in Config.Center switches centring off in the default call.
const CenterOff = -1

// centerPlan is the public part of the centring step.
type centerPlan struct {
	share float64
	mean  *mechanism.Mean
}

// planCenter validates the share and plans the mean release for the label.
func planCenter(cfg Config, share float64) (*centerPlan, error) {
	if !(share > 0 && share < 1) {
		return nil, fmt.Errorf("center must be in (0, 1) (the share of ε spent on the label mean), got %v", share)
	}
	if cfg.Kernel != KernelLinear {
		return nil, fmt.Errorf("center applies to the linear kernel only")
	}
	m, err := mechanism.NewMean(cfg.LabelLo, cfg.LabelHi, share*cfg.Epsilon, int64(cfg.N))
	if err != nil {
		return nil, fmt.Errorf("label mean: %w", err)
	}
	return &centerPlan{share: share, mean: m}, nil
}

func (c *centerPlan) event() budget.Event { return c.mean.Event() }

// shift returns the released mean μ̃ of the labels (raw units) from one
// pass over them.
func (c *centerPlan) release(labels func(add func(y float64))) (float64, error) {
	acc := c.mean.Accumulator()
	labels(acc.Add)
	return acc.Release()
}

// addBack puts the released mean back into the model: the intercept
// feature is fl(1/√F), so its weight moves by μ̃′·√F where μ̃′ is the
// mean in label units (post-processing).
func addBack(w []float64, lm labelMap, mu float64) {
	f := len(w)
	w[f-1] += lm.unit(mu) * math.Sqrt(float64(f))
}
