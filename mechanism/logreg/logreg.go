package logreg

import (
	"fmt"
	"maps"
	"math"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Config describes one private logistic regression. Every field is public:
// it comes from the SQL call or the catalog, never from the rows. Zero
// values of Steps and Horizon select the documented defaults.
type Config struct {
	// Stop ends the computation early when the query is killed (KILL QUERY
	// / KILL); it is checked between iterations only, and a stopped
	// training returns mechanism.ErrStopped. The zero value never stops.
	Stop    mechanism.Stop
	Epsilon float64 // ε > 0
	// Delta is δ: δ ∈ (0, 1) gives discrete Gaussian noise on each gradient
	// (composed as one Gaussian event); 0 gives pure ε with Laplace noise.
	Delta float64
	// Steps is T, the number of noisy gradient steps (default DefaultSteps
	// for δ > 0, DefaultStepsPure for δ = 0), in [1, MaxSteps].
	Steps int
	// Horizon is τ = η·T, the total step length (the step size is η = τ/T).
	// 0 selects the default rule of defaultHorizon.
	Horizon float64
	// Clip is C, the bound on each row's gradient norm: every row's
	// gradient is scaled by min(1, C/‖∇ℓ‖) (per-row clipping), so the
	// sensitivity is 2·min(L, C). 0 selects ClipFraction·L.
	Clip float64
	N    int // public row count n ≥ 1
	// Features names the feature columns; Lo and Hi are their public
	// catalog bounds, in the same order.
	Features []string
	Lo, Hi   []float64
	Label    string
	// Classes is the public label domain in declared order. Two classes
	// give one binary logistic model (Classes[0] ↦ 0, Classes[1] ↦ 1, one
	// weight vector); K ≥ 3 give the multinomial (softmax) model with one
	// weight vector per class, released jointly.
	Classes []string
	// Method is MethodGD ("" selects it: noisy gradient descent) or
	// MethodObjective (pure-ε objective perturbation, objective.go).
	Method string
	// Lambda is the ridge λ = Λ/n of MethodObjective (0: the default rule).
	Lambda float64
	// StepRule is the update of MethodGD: StepPlain (averaged gradient
	// descent) or StepNesterov (accelerated, last iterate). "" selects it
	// from public quantities (defaultRule, logreg.md §8); Plan fills it in.
	StepRule string
}

// Step rules of MethodGD (Config.StepRule).
const (
	StepPlain    = "plain"
	StepNesterov = "nesterov"
	// StepPreconditioned releases X̂ᵀX̂ once and takes accelerated steps
	// θ ← y − P·Ĝ(y)/n with P = (c·X̂ᵀX̂/n + λI)⁻¹, Böhning's bound on the
	// Hessian (logreg.md §13). δ > 0 only.
	StepPreconditioned = "preconditioned"
)

// Trainer is a validated plan: noise scale, step size and privacy cost,
// computed from public values only. Plan builds it, Train consumes it.
type Trainer struct {
	cfg     Config
	scaler  mechanism.Scaler
	prep    mechanism.Prepared
	f       int  // F = d + 1
	kp      int  // K′: 1 (binary) or K
	binary  bool // K = 2
	workers int
	p       plan
	obj     *objPlan                     // MethodObjective only
	trace   func(theta, noisy []float64) // tests only: see problem.trace
	// traceGram (tests only) sees the exact v(XᵀX) and its release.
	traceGram func(exact, noisy []float64)
}

// Plan validates cfg and calibrates the release. Its errors depend only on
// cfg.
func Plan(cfg Config) (*Trainer, error) {
	if !(cfg.Epsilon > 0) || math.IsInf(cfg.Epsilon, 0) {
		return nil, fmt.Errorf("logreg: epsilon must be positive and finite, got %v", cfg.Epsilon)
	}
	if !(cfg.Delta >= 0 && cfg.Delta < 1) {
		return nil, fmt.Errorf("logreg: delta must be in [0, 1), got %v", cfg.Delta)
	}
	if cfg.N < 1 {
		return nil, fmt.Errorf("logreg: row count n must be at least 1, got %d", cfg.N)
	}
	if math.IsNaN(cfg.Horizon) || cfg.Horizon < 0 {
		return nil, fmt.Errorf("logreg: horizon must be positive (or 0 for the default), got %v", cfg.Horizon)
	}
	d := len(cfg.Features)
	if d == 0 {
		return nil, fmt.Errorf("logreg: no feature columns")
	}
	if d > MaxFeatures {
		return nil, fmt.Errorf("logreg: %d features exceed the limit of %d", d, MaxFeatures)
	}
	if len(cfg.Lo) != d || len(cfg.Hi) != d {
		return nil, fmt.Errorf("logreg: %d features need %d lower and upper bounds, got %d and %d (every feature needs declared bounds)", d, d, len(cfg.Lo), len(cfg.Hi))
	}
	k := len(cfg.Classes)
	if k < 2 || k > MaxClasses {
		return nil, fmt.Errorf("logreg: label domain needs 2 to %d classes, got %d", MaxClasses, k)
	}
	seen := make(map[string]bool, k)
	for _, c := range cfg.Classes {
		if seen[c] {
			return nil, fmt.Errorf("logreg: label domain lists class %q twice", c)
		}
		seen[c] = true
	}
	scaler, err := mechanism.NewScaler(cfg.Lo, cfg.Hi, true)
	if err != nil {
		return nil, fmt.Errorf("logreg: %w", err)
	}
	t := &Trainer{scaler: scaler, prep: scaler.Prepare(), f: scaler.Dim(), binary: k == 2, kp: k, workers: defaultWorkers()}
	if t.binary {
		t.kp = 1
	}
	if float64(cfg.N)*float64(t.f) > MaxEntries {
		return nil, fmt.Errorf("logreg: n·F = %d·%d exceeds the training limit of %d feature values", cfg.N, t.f, MaxEntries)
	}
	switch cfg.Method {
	case MethodObjective:
		if t.obj, err = planObjective(cfg, t.f, t.kp, t.binary); err != nil {
			return nil, fmt.Errorf("logreg: %w", err)
		}
		if cfg.Lambda == 0 {
			cfg.Lambda = t.obj.lambda / float64(cfg.N)
		}
		cfg.Method = MethodObjective
		t.cfg = cloneConfig(cfg)
		return t, nil
	case "", MethodGD:
		cfg.Method = MethodGD
	default:
		return nil, fmt.Errorf("logreg: unknown method %q (want %q or %q)", cfg.Method, MethodGD, MethodObjective)
	}
	if cfg.Lambda != 0 {
		return nil, fmt.Errorf("logreg: lambda applies to method %q only", MethodObjective)
	}
	switch cfg.StepRule {
	case "", StepPlain, StepNesterov, StepPreconditioned:
	default:
		return nil, fmt.Errorf("logreg: unknown step rule %q (want %q, %q or %q)", cfg.StepRule, StepPlain, StepNesterov, StepPreconditioned)
	}
	if t.p, err = calibrate(cfg, t.f, t.kp, t.binary); err != nil {
		return nil, fmt.Errorf("logreg: %w", err)
	}
	if work := float64(t.p.steps) * float64(cfg.N) * float64(t.kp) * float64(t.f); work > MaxWork {
		return nil, fmt.Errorf("logreg: steps·n·K·F = %.3g exceeds the training limit %.3g; lower steps", work, float64(MaxWork))
	}
	cfg.Steps, cfg.Horizon, cfg.Clip, cfg.StepRule = t.p.steps, t.p.horizon, t.p.clip, t.p.rule
	t.cfg = cloneConfig(cfg)
	return t, nil
}

// WithBounds returns the plan for the same public n, ε, δ, classes and
// options on other feature bounds (a released private box): only the
// scaler changes, since no part of the calibration reads the bounds, so
// the noise search is not run again. Its errors depend only on lo, hi.
func (t *Trainer) WithBounds(lo, hi []float64) (*Trainer, error) {
	if len(lo) != len(t.cfg.Features) || len(hi) != len(t.cfg.Features) {
		return nil, fmt.Errorf("logreg: %d features need %d lower and upper bounds, got %d and %d", len(t.cfg.Features), len(t.cfg.Features), len(lo), len(hi))
	}
	scaler, err := mechanism.NewScaler(lo, hi, true)
	if err != nil {
		return nil, fmt.Errorf("logreg: %w", err)
	}
	u := *t
	u.cfg = cloneConfig(t.cfg)
	u.cfg.Lo, u.cfg.Hi = append([]float64(nil), lo...), append([]float64(nil), hi...)
	u.scaler, u.prep = scaler, scaler.Prepare()
	return &u, nil
}

// cloneConfig copies cfg's slices.
func cloneConfig(cfg Config) Config {
	cfg.Features = append([]string(nil), cfg.Features...)
	cfg.Classes = append([]string(nil), cfg.Classes...)
	cfg.Lo = append([]float64(nil), cfg.Lo...)
	cfg.Hi = append([]float64(nil), cfg.Hi...)
	return cfg
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

// Events returns the privacy cost to reserve before Train: one Gaussian
// event of ratio √T·Δ₂/σ (δ > 0), or T Laplace events of ε/T (δ = 0).
func (t *Trainer) Events() []budget.Event {
	if t.obj != nil {
		return t.obj.events(t.cfg.Epsilon)
	}
	return append([]budget.Event(nil), t.p.events...)
}

// Params returns the public planning values recorded in the model.
func (t *Trainer) Params() map[string]float64 {
	if t.obj != nil {
		return t.objParams()
	}
	m := map[string]float64{
		"epsilon":        t.cfg.Epsilon,
		"delta":          t.cfg.Delta,
		"n":              float64(t.cfg.N),
		"features":       float64(t.f),
		"classes":        float64(len(t.cfg.Classes)),
		"steps":          float64(t.p.steps),
		"horizon":        t.p.horizon,
		"step_size":      t.p.eta,
		"clip":           t.p.clip,
		"row_bound":      t.p.lip,
		"sensitivity_l2": t.p.l2,
		"nesterov":       b2f(t.p.rule == StepNesterov),
		"preconditioned": b2f(t.p.rule == StepPreconditioned),
	}
	if t.p.rule == StepPreconditioned {
		m["gram_sensitivity"] = t.p.gramL2
		m["gram_sigma"] = t.p.gramSigma
		m["gram_share"] = t.p.gramShare
		m["ridge"] = t.p.ridge
		m["l2_reg"] = t.p.l2reg
	}
	if t.cfg.Delta > 0 {
		m["gaussian_sigma"] = t.p.sigma
		m["gaussian_ratio"] = t.p.ratio
	} else {
		m["sensitivity_l1"] = t.p.l1
		m["laplace_scale"] = t.p.scale
	}
	return maps.Clone(m)
}

// checkInput validates the shape of the data. These errors fire only on a
// caller bug (len(X) ≠ N, a wrong row width, a label index outside the
// domain) and reveal no value.
func (t *Trainer) checkInput(X [][]float64, y []int) error {
	return mechanism.CheckShape("logreg", X, y, t.cfg.N, len(t.cfg.Features), len(t.cfg.Classes))
}

// Train runs the T noisy gradient steps on the raw rows and returns the
// released model. X holds raw feature values in cfg.Features order (NaN
// for NULL, mapped to the middle of the bounds); y holds indices into
// cfg.Classes. Beyond checkInput's shape errors it fails only if the noise
// sampler fails on scales that Plan validated (it does not); the number of
// steps and the work per step are fixed by the plan.
func (t *Trainer) Train(X [][]float64, y []int) (*mechanism.Model, error) {
	m, _, err := t.train(X, y, false)
	return m, err
}

// TrainCounted is Train that also counts the training rows the released
// model predicts as their label, on the scaled copy the descent read
// (problem.correct): the prior selection's score without a second pass
// over the raw rows (docs/mechanisms/prior.md §5). counted = false when the
// method has no scaled copy (objective perturbation): the caller counts.
func (t *Trainer) TrainCounted(X [][]float64, y []int) (m *mechanism.Model, correct int64, counted bool, err error) {
	m, c, err := t.train(X, y, true)
	return m, c, c >= 0, err
}

// train is Train, with the count of TrainCounted if count (−1 if none).
func (t *Trainer) train(X [][]float64, y []int, count bool) (*mechanism.Model, int64, error) {
	if err := t.checkInput(X, y); err != nil {
		return nil, -1, err
	}
	start := time.Now()
	if t.obj != nil {
		m, err := t.trainObjective(X, y)
		return m, -1, err
	}
	prob := newProblem(X, y, t.prep, t.kp, t.binary, t.workers, t.p.clip)
	defer prob.free()
	prob.trace = t.trace
	prob.stop = t.cfg.Stop
	var precond func(g, at []float64)
	if t.p.rule == StepPreconditioned {
		var err error
		if precond, err = t.releaseGram(prob); err != nil {
			return nil, -1, err
		}
	}
	theta, err := prob.descend(t.p.steps, t.p.eta, t.p.rule != StepPlain, precond, t.addNoise)
	if err != nil {
		return nil, -1, err
	}
	logrus.WithFields(logrus.Fields{"mechanism": "logreg", "n": t.cfg.N, "F": t.f, "K": len(t.cfg.Classes), "steps": t.p.steps,
		"elapsed": time.Since(start).Round(time.Millisecond).String()}).Debug("logreg: trained")
	m := t.model(theta)
	c := int64(-1)
	if count {
		c = prob.correct(theta)
	}
	return m, c, nil
}

// addNoise is the release of one gradient sum: discrete Gaussian (δ > 0)
// or Laplace (δ = 0) noise, one draw on the whole stacked K′·F vector.
func (t *Trainer) addNoise(g []float64) error {
	var err error
	if t.cfg.Delta > 0 {
		err = noise.AddGaussianVec(g, t.p.sigma)
	} else {
		err = noise.AddLaplaceVec(g, t.p.scale)
	}
	if err != nil {
		return fmt.Errorf("logreg: adding noise: %w", err)
	}
	return nil
}

// releaseGram is the first release of the preconditioned rule: v(XᵀX)
// with discrete Gaussian noise σ_H on every packed coordinate (noise last),
// then the preconditioner built from it (post-processing).
func (t *Trainer) releaseGram(prob *problem) (func(g, at []float64), error) {
	v := prob.gram()
	var exact []float64
	if t.traceGram != nil {
		exact = append([]float64(nil), v...)
	}
	if err := noise.AddGaussianVec(v, t.p.gramSigma); err != nil {
		return nil, fmt.Errorf("logreg: adding noise to XᵀX: %w", err)
	}
	if t.traceGram != nil {
		t.traceGram(exact, v)
	}
	return preconditioner(v, t.f, t.kp, t.cfg.N, t.binary, t.p.ridge, t.p.l2reg), nil
}

// model wraps the averaged iterate into a mechanism.Model.
func (t *Trainer) model(theta []float64) *mechanism.Model {
	ws := make([][]float64, t.kp)
	for k := range ws {
		ws[k] = append([]float64(nil), theta[k*t.f:(k+1)*t.f]...)
	}
	return &mechanism.Model{
		Kind:     mechanism.KindLogReg,
		Kernel:   "linear",
		Label:    t.cfg.Label,
		Features: append([]string(nil), t.cfg.Features...),
		Classes:  append([]string(nil), t.cfg.Classes...),
		Scaler:   t.scaler,
		Weights:  ws,
		Params:   t.Params(),
	}
}

// fit runs the same descent without noise: the non-private reference of
// tests and results. Unexported, so no SQL path reaches it.
func (t *Trainer) fit(X [][]float64, y []int, steps int, eta float64) ([]float64, error) {
	if err := t.checkInput(X, y); err != nil {
		return nil, err
	}
	prob := newProblem(X, y, t.prep, t.kp, t.binary, t.workers, t.p.clip)
	var precond func(g, at []float64)
	if t.p.rule == StepPreconditioned {
		precond = preconditioner(prob.gram(), t.f, t.kp, t.cfg.N, t.binary, t.p.ridge, t.p.l2reg)
	}
	return prob.descend(steps, eta, t.p.rule != StepPlain, precond, func([]float64) error { return nil })
}

// b2f is 1 for true, 0 for false (Params are numbers).
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
