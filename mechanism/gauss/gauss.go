package gauss

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Kinds accepted in Config.Kind (the model kinds of package mechanism).
const (
	KindLDA = mechanism.KindLDA // shared covariance, linear scorer
	KindQDA = mechanism.KindQDA // per-class covariances, quadratic scorer
	KindGNB = mechanism.KindGNB // per-class diagonal variances, quadratic scorer
)

// Size limits, so that a plan's memory and time stay bounded.
const (
	// MaxStats bounds the length of the released statistic vector (the
	// discrete Gaussian sampler's own limit is 2²⁰ coordinates).
	MaxStats = 1 << 20
	// MaxFeatures bounds d (an eigendecomposition of a d×d matrix per
	// covariance is O(d³)).
	MaxFeatures = 1024
	// MaxClasses bounds the size of the label domain.
	MaxClasses = 1024
)

// Config is the public input of one release. Every field comes from the
// SQL call or the catalog, never from the rows.
type Config struct {
	// Kind is lda (default when empty), qda or gnb.
	Kind string
	// Epsilon is the ε of the release, > 0.
	Epsilon float64
	// Delta is δ: 0 releases the statistics with Laplace noise (pure ε);
	// δ ∈ (0, 1) with one discrete-Gaussian draw, (ε, δ)-DP.
	Delta float64
	// N is the public row count n ≥ 1.
	N int
	// Features names the feature columns; Lo and Hi are their public
	// catalog bounds, in the same order.
	Features []string
	Lo, Hi   []float64
	// Label is the label column; Classes its public domain in declared
	// order (≥ 2 distinct values).
	Label   string
	Classes []string
	// MomentShare ∈ (0, 1) is the share of the budget given to the
	// second moments (the sums get 1 − MomentShare); 0 selects
	// DefaultMomentShare(kind, n, d, K, ε, δ).
	MomentShare float64
	// EdgeFactor > 0 scales the noise-spectrum edge used to denoise the
	// covariances (post-processing only); 0 selects DefaultEdgeFactor.
	EdgeFactor float64
	// Quadratic (lda only) writes the released discriminant as one PSD
	// matrix Φ_k per class, a model of kind lmgc with the same decisions
	// (DP_LMGC_TRAIN's method=stats, docs/mechanisms/lmgc.md §11).
	// Post-processing only: the release is unchanged.
	Quadratic bool
}

// Trainer is a validated plan: everything about the release that can be
// computed without the data. A Trainer trains at most once.
type Trainer struct {
	cfg    Config // with defaults filled in
	scaler mechanism.Scaler
	lay    layout
	cal    calibration
	used   atomic.Bool
	post   Variant // post-processing variant of the model being built (TrainVariants)
}

// Plan validates cfg and derives the weights, the sensitivity, the noise
// scale and the privacy cost from public quantities only. Its errors depend
// only on cfg.
func Plan(cfg Config) (*Trainer, error) {
	if cfg.Kind == "" {
		cfg.Kind = KindLDA
	}
	switch cfg.Kind {
	case KindLDA, KindQDA, KindGNB:
	default:
		return nil, fmt.Errorf("gauss: unknown kind %q (want %s, %s or %s)", cfg.Kind, KindLDA, KindQDA, KindGNB)
	}
	if !(cfg.Epsilon > 0) || math.IsInf(cfg.Epsilon, 0) {
		return nil, fmt.Errorf("gauss: epsilon must be positive and finite, got %v", cfg.Epsilon)
	}
	if !(cfg.Delta >= 0 && cfg.Delta < 1) {
		return nil, fmt.Errorf("gauss: delta must be in [0, 1), got %v", cfg.Delta)
	}
	if cfg.N < 1 {
		return nil, fmt.Errorf("gauss: row count n must be at least 1, got %d", cfg.N)
	}
	if !(cfg.MomentShare >= 0 && cfg.MomentShare < 1) {
		return nil, fmt.Errorf("gauss: moment share must be in (0, 1), got %v", cfg.MomentShare)
	}
	if cfg.EdgeFactor == 0 {
		cfg.EdgeFactor = DefaultEdgeFactor
	}
	if !(cfg.EdgeFactor > 0) || math.IsInf(cfg.EdgeFactor, 0) {
		return nil, fmt.Errorf("gauss: edge factor must be positive and finite, got %v", cfg.EdgeFactor)
	}
	if len(cfg.Features) == 0 {
		return nil, errors.New("gauss: no feature columns")
	}
	if len(cfg.Features) > MaxFeatures {
		return nil, fmt.Errorf("gauss: at most %d features are supported, got %d", MaxFeatures, len(cfg.Features))
	}
	if len(cfg.Lo) != len(cfg.Features) || len(cfg.Hi) != len(cfg.Features) {
		return nil, fmt.Errorf("gauss: %d features need %d lower and upper bounds, got %d and %d (every feature needs declared bounds)",
			len(cfg.Features), len(cfg.Features), len(cfg.Lo), len(cfg.Hi))
	}
	for j := range cfg.Lo {
		if math.IsNaN(cfg.Lo[j]) || math.IsNaN(cfg.Hi[j]) {
			return nil, fmt.Errorf("gauss: bounds of feature %q are NaN", cfg.Features[j])
		}
	}
	if len(cfg.Classes) < 2 {
		return nil, fmt.Errorf("gauss: the label domain must declare at least 2 classes, got %d", len(cfg.Classes))
	}
	if len(cfg.Classes) > MaxClasses {
		return nil, fmt.Errorf("gauss: at most %d classes are supported, got %d", MaxClasses, len(cfg.Classes))
	}
	seen := make(map[string]bool, len(cfg.Classes))
	for _, c := range cfg.Classes {
		if seen[c] {
			return nil, fmt.Errorf("gauss: class %q is declared twice in the label domain", c)
		}
		seen[c] = true
	}
	scaler, err := mechanism.NewScaler(cfg.Lo, cfg.Hi, true)
	if err != nil {
		return nil, fmt.Errorf("gauss: %w", err)
	}
	if cfg.MomentShare == 0 {
		if cfg.MomentShare, err = DefaultMomentShare(cfg.Kind, cfg.N, len(cfg.Features), len(cfg.Classes), cfg.Epsilon, cfg.Delta); err != nil {
			return nil, fmt.Errorf("gauss: %w", err)
		}
	}
	lay := newLayout(cfg.Kind, len(cfg.Features), len(cfg.Classes))
	if lay.size > MaxStats {
		return nil, fmt.Errorf("gauss: %s with %d features and %d classes releases %d statistics, more than the limit %d; use fewer features or classes (or lda/gnb)",
			cfg.Kind, len(cfg.Features), len(cfg.Classes), lay.size, MaxStats)
	}
	cal, err := calibrate(cfg.Kind, len(cfg.Features), cfg.MomentShare, cfg.Epsilon, cfg.Delta)
	if err != nil {
		return nil, fmt.Errorf("gauss: %w", err)
	}
	if cfg.Delta > 0 {
		if cal.sens < noise.GaussianMinRatio*cal.scale {
			return nil, fmt.Errorf("gauss: epsilon %v with delta %v needs a noise multiplier above the sampler's limit; use a larger epsilon", cfg.Epsilon, cfg.Delta)
		}
	} else if min := noise.LaplaceMinEpsilon(lay.size); cfg.Epsilon < min {
		return nil, fmt.Errorf("gauss: epsilon %v is below the Laplace sampler's minimum %v for %d statistics", cfg.Epsilon, min, lay.size)
	}
	for _, v := range []float64{cal.scale, cal.sdCount, cal.sdSum, cal.sdDiag} {
		if !(v > 0) || math.IsInf(v, 0) || v > 0x1p900 {
			return nil, fmt.Errorf("gauss: epsilon %v gives a degenerate noise scale %v", cfg.Epsilon, v)
		}
	}
	cfg.Features = append([]string(nil), cfg.Features...)
	cfg.Classes = append([]string(nil), cfg.Classes...)
	cfg.Lo = append([]float64(nil), cfg.Lo...)
	cfg.Hi = append([]float64(nil), cfg.Hi...)
	return &Trainer{cfg: cfg, scaler: scaler, lay: lay, cal: cal}, nil
}

// Config returns (a copy of) the configuration with defaults filled in.
func (t *Trainer) Config() Config {
	c := t.cfg
	c.Features = append([]string(nil), c.Features...)
	c.Classes = append([]string(nil), c.Classes...)
	c.Lo = append([]float64(nil), c.Lo...)
	c.Hi = append([]float64(nil), c.Hi...)
	return c
}

// Clone returns an unused plan with the same public configuration and
// calibration (re-planning gives the same values; the calibration's search
// is the slow part of Plan), for callers that release many times, such as
// audits.
func (t *Trainer) Clone() *Trainer {
	return &Trainer{cfg: t.Config(), scaler: t.scaler, lay: t.lay, cal: t.cal}
}

// WithBounds returns an unused plan with the same calibration on other
// public bounds (a released private box): the weights, the sensitivity and
// the noise scale only use that scaled rows lie in [−1, 1]^d, so they do not
// depend on the bounds (docs/mechanisms/box.md §3); only the Scaler changes.
// Its errors depend on lo and hi only.
func (t *Trainer) WithBounds(lo, hi []float64) (*Trainer, error) {
	c := t.Config()
	if len(lo) != len(c.Features) || len(hi) != len(c.Features) {
		return nil, fmt.Errorf("gauss: %d features need %d lower and upper bounds, got %d and %d", len(c.Features), len(c.Features), len(lo), len(hi))
	}
	sc, err := mechanism.NewScaler(lo, hi, true)
	if err != nil {
		return nil, fmt.Errorf("gauss: %w", err)
	}
	c.Lo, c.Hi = append([]float64(nil), lo...), append([]float64(nil), hi...)
	return &Trainer{cfg: c, scaler: sc, lay: t.lay, cal: t.cal}, nil
}

// Sensitivity returns the joint sensitivity of the weighted statistic
// vector: ℓ₂ for δ > 0, ℓ₁ for δ = 0.
func (t *Trainer) Sensitivity() float64 { return t.cal.sens }

// Scale returns the noise scale on the weighted vector: the discrete
// Gaussian's σ (δ > 0) or the Laplace scale b (δ = 0).
func (t *Trainer) Scale() float64 { return t.cal.scale }

// NoiseSD returns the standard deviation of the noise on one class count,
// one coordinate of a class sum, one diagonal and one off-diagonal
// second-moment entry (off-diagonal is 0 for gnb), all on the [−1, 1]
// feature scale.
func (t *Trainer) NoiseSD() (count, sum, diag, off float64) {
	return t.cal.sdCount, t.cal.sdSum, t.cal.sdDiag, t.cal.sdOff
}

// Shares returns the nominal budget shares of the counts, sums and second
// moments (summing to 1).
func (t *Trainer) Shares() (count, sum, moment float64) {
	return t.cal.countShare, t.cal.sumShare, t.cal.momentShare
}

// Size returns the number of released statistics.
func (t *Trainer) Size() int { return t.lay.size }

// Events returns the privacy cost to reserve before Train: one release of
// the whole statistic vector, a discrete-Gaussian event (δ > 0) or a
// Laplace event (δ = 0) at the requested (ε, δ).
func (t *Trainer) Events() []budget.Event {
	if t.cfg.Delta > 0 {
		return []budget.Event{mechanism.GaussianEvent(t.cal.sens, t.cal.scale, t.cfg.Epsilon, t.cfg.Delta)}
	}
	return []budget.Event{{Kind: budget.Laplace, Epsilon: t.cfg.Epsilon}}
}

// Train computes the statistics on the raw rows, releases them once with
// noise and post-processes them into a model.
//
// X holds raw feature values in cfg.Features order (NaN for NULL); y holds
// indices into cfg.Classes, and an index out of range counts as class 0
// (the caller's rule for unknown labels). len(X) and len(y) must equal
// cfg.N and every row must have one value per feature: these shape checks
// fire only on a caller bug. There is no other data-dependent error path:
// the noise scale, the number of draws and the post-processing steps are
// fixed by the plan. A Trainer trains at most once.
func (t *Trainer) Train(X [][]float64, y []int) (*mechanism.Model, error) {
	st, err := t.releaseOnce(X, y)
	if err != nil {
		return nil, err
	}
	return t.model(st), nil
}

// releaseOnce computes the statistics and adds their noise in place; it
// refuses a second use of the plan.
func (t *Trainer) releaseOnce(X [][]float64, y []int) ([]float64, error) {
	if !t.used.CompareAndSwap(false, true) {
		return nil, errors.New("gauss: this plan has already been used for a release")
	}
	st, err := t.statistics(X, y)
	if err != nil {
		return nil, err
	}
	if err := t.release(st); err != nil {
		return nil, err
	}
	return st, nil
}

// checkInput validates the shapes of the data (caller bugs only).
func (t *Trainer) checkInput(X [][]float64, y []int) error {
	return mechanism.CheckShape("gauss", X, y, t.cfg.N, len(t.cfg.Features), 0)
}

// Variant is one post-processing of the released statistics (every field
// public, none changes the release): Shrink γ ∈ [0, 1) pulls every
// eigenvalue of a covariance estimate (gnb: every variance) toward their
// mean, (1 − γ)λ + γ·mean λ; Ridge ≥ 0 adds Ridge × the noise level (the
// bulk edge 2s√d of the denoiser; gnb: the variance noise floor) to every
// eigenvalue; Edge > 0 replaces the denoiser's EdgeFactor (0: the plan's).
// The zero Variant is Train's model.
type Variant struct {
	Shrink, Ridge, Edge float64
}

// String names the variant: "default" or its non-zero fields.
func (v Variant) String() string {
	var parts []string
	if v.Shrink != 0 {
		parts = append(parts, fmt.Sprintf("shrink=%g", v.Shrink))
	}
	if v.Ridge != 0 {
		parts = append(parts, fmt.Sprintf("ridge=%g", v.Ridge))
	}
	if v.Edge != 0 {
		parts = append(parts, fmt.Sprintf("edge=%g", v.Edge))
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, ",")
}

// TrainVariants is Train for private hyperparameter selection: ONE noisy
// release of the statistics, then one model per variant (post-processing
// only). The cost is Events(), whatever the number of variants. Shape
// errors and invalid variants (public) are the only errors.
func (t *Trainer) TrainVariants(X [][]float64, y []int, variants []Variant) ([]*mechanism.Model, error) {
	for _, v := range variants {
		if !(v.Shrink >= 0 && v.Shrink < 1) || !(v.Ridge >= 0) || math.IsInf(v.Ridge, 0) || !(v.Edge >= 0) || math.IsInf(v.Edge, 0) {
			return nil, fmt.Errorf("gauss: invalid variant %+v (shrink in [0, 1), ridge and edge finite and ≥ 0)", v)
		}
	}
	st, err := t.releaseOnce(X, y)
	if err != nil {
		return nil, err
	}
	out := make([]*mechanism.Model, len(variants))
	edge := t.cfg.EdgeFactor
	for i, v := range variants {
		t.post = v
		if v.Edge > 0 {
			t.cfg.EdgeFactor = v.Edge
		}
		out[i] = t.model(st)
		t.cfg.EdgeFactor = edge
	}
	t.post = Variant{}
	return out, nil
}
