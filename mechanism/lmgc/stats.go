package lmgc

import (
	"errors"
	"fmt"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/gauss"
)

// planStats plans MethodStats: one release of the shared-covariance
// Gaussian sufficient statistics (package gauss, kind lda, the whole ε and
// δ), post-processed into the paper's model class (docs/mechanisms/lmgc.md
// §11). λ and h belong to the margin objective and are refused here, so a
// user never believes they changed the release.
func planStats(cfg Config) (*Trainer, error) {
	if cfg.Lambda != 0 || cfg.H != 0 {
		return nil, errors.New("lmgc: lambda and h apply to method=margin only (method=stats fits the Gaussian model from noisy sufficient statistics)")
	}
	// gauss validates the rest (n, classes, features, bounds) with its own
	// public-input errors, before anything is charged.
	gt, err := gauss.Plan(gauss.Config{Kind: gauss.KindLDA, Epsilon: cfg.Epsilon, Delta: cfg.Delta, N: cfg.N,
		Features: cfg.Features, Lo: cfg.Lo, Hi: cfg.Hi, Label: cfg.Label, Classes: cfg.Classes, Quadratic: true})
	if err != nil {
		return nil, fmt.Errorf("lmgc (method=stats): %w", err)
	}
	return statsTrainer(cfg, gt)
}

// statsTrainer wraps a gauss plan as a MethodStats plan, taking the
// features, classes and bounds from gauss's validated configuration.
func statsTrainer(cfg Config, gt *gauss.Trainer) (*Trainer, error) {
	gc := gt.Config()
	scaler, err := mechanism.NewScaler(gc.Lo, gc.Hi, true)
	if err != nil {
		return nil, fmt.Errorf("lmgc: %w", err)
	}
	cfg.Features, cfg.Classes, cfg.Lo, cfg.Hi = gc.Features, gc.Classes, gc.Lo, gc.Hi
	return &Trainer{cfg: cfg, scaler: scaler, classes: len(gc.Classes), dim: scaler.Dim(), stats: gt}, nil
}

// WithBounds returns an unused MethodStats plan with the same calibration
// on other public bounds (a released private box; gauss.Trainer.WithBounds).
// MethodMargin plans are refused: their box stays the declared one.
func (p *Trainer) WithBounds(lo, hi []float64) (*Trainer, error) {
	if p.stats == nil {
		return nil, errors.New("lmgc: only method=stats takes a released box")
	}
	gt, err := p.stats.WithBounds(lo, hi)
	if err != nil {
		return nil, fmt.Errorf("lmgc (method=stats): %w", err)
	}
	return statsTrainer(p.cfg, gt)
}

// Method returns the plan's method (MethodMargin or MethodStats).
func (p *Trainer) Method() string { return p.cfg.Method }

// StatsScales returns the public scales of a MethodStats plan (nil for
// MethodMargin): the joint sensitivity and noise scale of the released
// statistic vector and the noise standard deviations per count, sum
// coordinate and second-moment entry.
func (p *Trainer) StatsScales() map[string]float64 {
	if p.stats == nil {
		return nil
	}
	cnt, sum, diag, off := p.stats.NoiseSD()
	return map[string]float64{"sensitivity": p.stats.Sensitivity(), "noise_scale": p.stats.Scale(),
		"statistics": float64(p.stats.Size()), "sd_count": cnt, "sd_sum": sum, "sd_diag": diag, "sd_off": off}
}

// trainStats releases the statistics once and returns the kind-lmgc model.
func (p *Trainer) trainStats(X [][]float64, y []int) (*mechanism.Model, error) {
	m, err := p.stats.Train(X, y)
	if err != nil {
		return nil, fmt.Errorf("lmgc (method=stats): %w", err)
	}
	m.Params["method_stats"] = 1
	m.Params["epsilon_charged"] = p.ChargedEpsilon()
	m.Params["delta_charged"] = p.ChargedDelta()
	return m, nil
}
