package lsq

import (
	"errors"
	"fmt"
	"maps"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
)

// Methods accepted in Config.Method.
const (
	MethodOutput    = "output"    // model release, Nie & Wang Lemma 2 sensitivity (default)
	MethodInput     = "input"     // Fukuchi et al. input perturbation, linear kernel only
	MethodObjective = "objective" // Kifer et al. Obj-Gauss, linear kernel only
)

// Kernels accepted in Config.Kernel.
const (
	KernelLinear    = "linear"
	KernelRBF       = "rbf"
	KernelLaplacian = "laplacian"
	KernelCauchy    = "cauchy"
)

// Defaults: fixed public constants, never derived from data.
const (
	// DefaultDim is d̂, the number of random frequencies of the RFF map
	// (F = 2·d̂ features).
	DefaultDim = 256
	// DefaultGamma is the kernel bandwidth γ on the scaled inputs (whose
	// coordinates lie in [−1, 1]/√F), as in package svm.
	DefaultGamma = 1.0
)

// Config describes one DP_LSQ or DP_LSQ_PREDICT call. Every field is public:
// it comes from the SQL call or the catalog, never from the rows.
type Config struct {
	Method string // output, input or objective (empty: the default rule of defaults.go); must be empty for PlanPredict
	Kernel string // linear (default), rbf, laplacian or cauchy; input/objective: linear only
	// Lambda is the ridge parameter λ of (1/n)Σ(⟨w, φ(xᵢ)⟩ − y′ᵢ)² + λ‖w‖².
	// The default call (Method, Lambda and Eta unset, linear kernel) takes
	// method and λ from the rule of defaults.go. Otherwise 0 selects the
	// paper's automatic rule: for output and predict Nie &
	// Wang's Theorems 2–3 with r = ½, λ = min(1, (nε)^(−1/2)); for input and
	// objective the excess-risk-balancing choice of Kifer et al. /
	// Fukuchi et al. Theorem 2 with ‖ŵ‖ replaced by η (docs/mechanisms/lsq.md).
	Lambda  float64
	Epsilon float64 // ε > 0
	// Delta is δ: 0 gives pure ε (output: Laplace per coordinate; predict:
	// Laplace); δ ∈ (0, 1) gives the discrete Gaussian mechanism (CKS zCDP
	// calibration) for output and is required by input and objective.
	// Predict requires 0.
	Delta float64
	Dim   int     // d̂ for RFF kernels, in [1, mechanism.MaxRFFDim] (default DefaultDim); must be 0 for linear
	Gamma float64 // kernel bandwidth γ > 0 (default DefaultGamma); must be 0 for linear
	// Eta is the public bound η on ‖w‖₂ for input and objective (the
	// minimiser is constrained to the ball ‖w‖ ≤ η). 0 selects √F: every
	// affine predictor that maps the whole declared feature box into the
	// label range has ‖w‖ ≤ √F. Must be 0 for output and predict.
	Eta float64
	N   int // public row count n ≥ 1
	// Features names the feature columns; Lo and Hi are their public catalog
	// bounds, in the same order. Label and [LabelLo, LabelHi] describe the
	// regression target.
	Features         []string
	Lo, Hi           []float64
	Label            string
	LabelLo, LabelHi float64

	// Center is the share ρ of ε spent on the label's private mean before
	// the regression (center.go): 0 lets the default call's rule decide
	// (no centring outside the default call), CenterOff switches it off, a
	// value in (0, 1) sets it.
	Center float64

	// AnyOrderSums plans for statistics S and c summed by a backend in an
	// order it chooses (DOUBLE sums on MariaDB/Spider, pushdown.go): the
	// rounding allowance covers a summation tree of depth n + 8 instead of
	// the embedded blocked depth (linear kernel only). Public: it depends on
	// where the table lives.
	AnyOrderSums bool

	// ridgeMult scales objective perturbation's auto ridge (0 means 1); set
	// only by the default rule (defaults.go).
	ridgeMult float64
}

// Trainer is a validated DP_LSQ plan: everything about the release that can
// be computed without the data (noise scales, privacy cost, random
// features). It is built by Plan and consumed by Train.
type Trainer struct {
	cfg    Config // with defaults filled in
	fm     featureMap
	lm     labelMap
	lambda float64 // λ of the ridge objective
	events []budget.Event
	params map[string]float64

	out    *outputPlan
	obj    *objectivePlan
	in     *inputPlan
	center *centerPlan // nil: no centring

	// solverSteps is the number of bisection steps of the last release's
	// ball solver (objective, input): a public constant, ballSteps, kept
	// for the tests that check it never depends on the rows. Never
	// released.
	solverSteps int
}

// common holds what Plan and PlanPredict share after validation.
type common struct {
	cfg    Config
	scaler mechanism.Scaler
	lm     labelMap
	rff    *mechanism.RFF
}

// validate checks the fields shared by every release, fills defaults and
// draws the random Fourier frequencies (data-independent). Errors depend
// only on cfg.
func validate(cfg Config) (common, error) {
	if cfg.Kernel == "" {
		cfg.Kernel = KernelLinear
	}
	switch cfg.Kernel {
	case KernelLinear, KernelRBF, KernelLaplacian, KernelCauchy:
	default:
		return common{}, fmt.Errorf("unknown kernel %q (want linear, rbf, laplacian or cauchy)", cfg.Kernel)
	}
	if !(cfg.Epsilon > 0) || math.IsInf(cfg.Epsilon, 0) {
		return common{}, fmt.Errorf("epsilon must be positive and finite, got %v", cfg.Epsilon)
	}
	if !(cfg.Delta >= 0 && cfg.Delta < 1) {
		return common{}, fmt.Errorf("delta must be in [0, 1), got %v", cfg.Delta)
	}
	if !(cfg.Lambda >= 0) || math.IsInf(cfg.Lambda, 0) {
		return common{}, fmt.Errorf("lambda must be positive and finite (or 0 for auto), got %v", cfg.Lambda)
	}
	if !(cfg.Eta >= 0) || math.IsInf(cfg.Eta, 0) {
		return common{}, fmt.Errorf("eta must be positive and finite (or 0 for the default √F), got %v", cfg.Eta)
	}
	if cfg.N < 1 {
		return common{}, fmt.Errorf("row count n must be at least 1, got %d", cfg.N)
	}
	if len(cfg.Features) == 0 {
		return common{}, fmt.Errorf("no feature columns")
	}
	if len(cfg.Lo) != len(cfg.Features) || len(cfg.Hi) != len(cfg.Features) {
		return common{}, fmt.Errorf("%d features need %d lower and upper bounds, got %d and %d (every feature needs declared bounds)",
			len(cfg.Features), len(cfg.Features), len(cfg.Lo), len(cfg.Hi))
	}
	if math.IsNaN(cfg.LabelLo) || math.IsNaN(cfg.LabelHi) || math.IsInf(cfg.LabelLo, 0) || math.IsInf(cfg.LabelHi, 0) || !(cfg.LabelLo < cfg.LabelHi) {
		return common{}, fmt.Errorf("label bounds must be finite with lower < upper, got [%v, %v]", cfg.LabelLo, cfg.LabelHi)
	}
	scaler, err := mechanism.NewScaler(cfg.Lo, cfg.Hi, true)
	if err != nil {
		return common{}, err
	}
	cm := common{scaler: scaler, lm: labelMap{lo: cfg.LabelLo, hi: cfg.LabelHi}}
	if cfg.Kernel == KernelLinear {
		if cfg.Dim != 0 || cfg.Gamma != 0 {
			return common{}, fmt.Errorf("dim and gamma apply to the rbf, laplacian and cauchy kernels, not linear")
		}
	} else {
		if cfg.Dim == 0 {
			cfg.Dim = DefaultDim
		}
		if cfg.Gamma == 0 {
			cfg.Gamma = DefaultGamma
		}
		if cfg.Dim < 1 || cfg.Dim > mechanism.MaxRFFDim {
			return common{}, fmt.Errorf("dim must be in [1, %d], got %d", mechanism.MaxRFFDim, cfg.Dim)
		}
		if !(cfg.Gamma > 0) || math.IsInf(cfg.Gamma, 0) {
			return common{}, fmt.Errorf("gamma must be positive and finite, got %v", cfg.Gamma)
		}
	}
	cm.cfg = cfg
	return cm, nil
}

// drawRFF draws the random frequencies for a kernel config (nil for linear).
func drawRFF(cm common) (*mechanism.RFF, error) {
	if cm.cfg.Kernel == KernelLinear {
		return nil, nil
	}
	return mechanism.NewRFF(cm.cfg.Kernel, cm.scaler.Dim(), cm.cfg.Dim, cm.cfg.Gamma)
}

// nieWangLambda is the regularisation rule of Nie & Wang's Theorem 3 with
// r = ½: λ = (1/(mε))^(2/min{4, 3+2r}) = (mε)^(−1/2), capped at 1 (the
// papers' range 0 < λ ≤ 1). It uses only the public m and ε.
func nieWangLambda(m int, eps float64) float64 {
	return math.Min(1, 1/math.Sqrt(float64(m)*eps))
}

// Plan validates cfg and computes the noise scales and privacy cost of a
// DP_LSQ model release from public quantities only; for RFF kernels it also
// draws the frequencies. Its errors depend only on cfg.
func Plan(cfg Config) (*Trainer, error) {
	var rule *defaultRule
	if isDefaultCall(cfg) && cfg.N >= 1 && len(cfg.Features) > 0 {
		// The default call: method, λ and centring from public n, F, ε, δ
		// (defaults.go).
		if cfg.Center == 0 {
			cfg.Center = defaultCenter(cfg.N, len(cfg.Features)+1, cfg.Epsilon, cfg.Delta)
		}
		epsMain := cfg.Epsilon
		if cfg.Center > 0 {
			epsMain *= 1 - cfg.Center
		}
		r := chooseDefault(cfg.N, len(cfg.Features)+1, epsMain, cfg.Delta)
		rule = &r
		cfg.Method, cfg.Lambda, cfg.ridgeMult = r.method, r.lambda, r.ridgeMult
	}
	if cfg.Method == "" {
		cfg.Method = MethodOutput
	}
	switch cfg.Method {
	case MethodOutput, MethodInput, MethodObjective:
	default:
		return nil, fmt.Errorf("lsq: unknown method %q (want output, input or objective)", cfg.Method)
	}
	if !(cfg.Center == 0 || cfg.Center == CenterOff || (cfg.Center > 0 && cfg.Center < 1)) {
		return nil, fmt.Errorf("lsq: center must be in (0, 1), got %v", cfg.Center)
	}
	cm, err := validate(cfg)
	if err != nil {
		return nil, fmt.Errorf("lsq: %w", err)
	}
	cfg = cm.cfg
	t := &Trainer{cfg: cfg, lm: cm.lm}
	if cfg.Center > 0 {
		if t.center, err = planCenter(cfg, cfg.Center); err != nil {
			return nil, fmt.Errorf("lsq: %w", err)
		}
		// The method runs on the rest of ε (cm is the planners' view).
		cm.cfg.Epsilon = cfg.Epsilon - t.center.mean.Epsilon
	}
	switch cfg.Method {
	case MethodOutput:
		err = t.planOutput(cm)
	case MethodObjective:
		err = t.planObjective(cm)
	case MethodInput:
		err = t.planInput(cm)
	}
	if err != nil {
		return nil, fmt.Errorf("lsq (%s): %w", cfg.Method, err)
	}
	t.params["epsilon"] = cfg.Epsilon
	t.params["delta"] = cfg.Delta
	if t.center != nil {
		t.events = append(t.events, t.center.event())
		t.params["center_share"] = t.center.share
		t.params["label_mean_scale"] = t.center.mean.Scale()
		t.params["epsilon_regression"] = cm.cfg.Epsilon
	}
	t.params["lambda"] = t.lambda
	t.params["n"] = float64(cfg.N)
	t.params["features"] = float64(t.fm.f)
	if rule != nil {
		t.params["default_rule_t"] = rule.t
		if rule.ridgeMult > 0 {
			t.params["default_ridge_multiplier"] = rule.ridgeMult
		}
	}
	if cfg.Kernel != KernelLinear {
		t.params["dim"] = float64(cfg.Dim)
		t.params["gamma"] = cfg.Gamma
	}
	return t, nil
}

// requireLinear rejects kernels for the methods proved for linear
// regression only.
func requireLinear(cfg Config) error {
	if cfg.Kernel != KernelLinear {
		return fmt.Errorf("kernel %q is not supported: the method is analysed for linear regression only (use method=output for kernels)", cfg.Kernel)
	}
	return nil
}

// Config returns the plan's configuration with defaults filled in.
func (t *Trainer) Config() Config { return t.cfg }

// Lambda returns the ridge parameter λ used (after the auto rule).
func (t *Trainer) Lambda() float64 { return t.lambda }

// Events returns the privacy cost to reserve before Train: one event, of
// the kind the method's analysis supports (output: Laplace{ε} for δ = 0,
// Gaussian{ε, δ, Δ₂/σ} for δ > 0; input and objective: Generic{ε, δ}).
func (t *Trainer) Events() []budget.Event { return append([]budget.Event(nil), t.events...) }

// Params returns the public planning values (λ, sensitivities, noise
// scales, …) that are also recorded in the released model's Params.
func (t *Trainer) Params() map[string]float64 { return maps.Clone(t.params) }

// Train makes one pass over the rows (raw feature values in cfg.Features
// order, NaN for NULL; raw labels), adds the planned noise and returns the
// released model. len(X) must equal the planned n.
func (t *Trainer) Train(X [][]float64, y []float64) (*mechanism.Model, error) {
	if err := checkRows(X, y, t.cfg.N, len(t.cfg.Features)); err != nil {
		return nil, fmt.Errorf("lsq: %w", err)
	}
	if t.center == nil {
		return t.release(sufficientStats(X, y, t.fm, t.lm))
	}
	mu, err := t.center.release(func(add func(float64)) {
		for _, v := range y {
			add(v)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("lsq: %w", err)
	}
	s := mu - (t.cfg.LabelLo+t.cfg.LabelHi)/2
	ys := make([]float64, len(y))
	for i, v := range y {
		ys[i] = v - s // NaN (NULL) stays NaN: the label map sends it to the midpoint
	}
	return t.releaseCentered(sufficientStats(X, ys, t.fm, t.lm), mu)
}

// releaseCentered releases the method on the shifted labels' statistics
// and adds the released mean back (center.go).
func (t *Trainer) releaseCentered(st stats, mu float64) (*mechanism.Model, error) {
	m, err := t.release(st)
	if err != nil {
		return nil, err
	}
	addBack(m.Weights[0], t.lm, mu)
	m.Params["label_mean"] = mu
	return m, nil
}

// TrainStream is Train for rows read straight from storage: scan calls emit
// once per row with the d feature values followed by the raw label (the row
// slice may be reused after emit returns). The noise scale was calibrated
// for the planned n; if the scan yields another number of rows (owners
// wrote meanwhile) it returns an error and the caller re-plans with the n it
// reads (public).
func (t *Trainer) TrainStream(scan func(emit func(row []float64) error) error) (*mechanism.Model, error) {
	d := len(t.cfg.Features)
	if t.center != nil {
		// Two passes: the label mean, then the statistics of the shifted
		// labels (the row count of both is checked against the plan).
		rows := 0
		var scanErr error
		mu, err := t.center.release(func(add func(float64)) {
			scanErr = scan(func(row []float64) error {
				if len(row) != d+1 {
					return fmt.Errorf("row has %d values, want %d features and a label", len(row), d+1)
				}
				rows++
				add(row[d])
				return nil
			})
		})
		if scanErr != nil {
			return nil, fmt.Errorf("lsq: %w", scanErr)
		}
		if rows != t.cfg.N {
			return nil, fmt.Errorf("lsq: %w: read %d rows, planned for n = %d", ErrRowCountChanged, rows, t.cfg.N)
		}
		if err != nil {
			return nil, fmt.Errorf("lsq: %w", err)
		}
		s := mu - (t.cfg.LabelLo+t.cfg.LabelHi)/2
		buf := make([]float64, d+1)
		st, err := streamStats(d, t.fm, t.lm, func(emit func(row []float64) error) error {
			return scan(func(row []float64) error {
				if len(row) != d+1 {
					return fmt.Errorf("row has %d values, want %d features and a label", len(row), d+1)
				}
				copy(buf, row)
				buf[d] -= s
				return emit(buf)
			})
		})
		if err != nil {
			return nil, fmt.Errorf("lsq: %w", err)
		}
		if st.n != t.cfg.N {
			return nil, fmt.Errorf("lsq: %w: read %d rows, planned for n = %d", ErrRowCountChanged, st.n, t.cfg.N)
		}
		return t.releaseCentered(st, mu)
	}
	st, err := streamStats(d, t.fm, t.lm, scan)
	if err != nil {
		return nil, fmt.Errorf("lsq: %w", err)
	}
	if st.n != t.cfg.N {
		return nil, fmt.Errorf("lsq: %w: read %d rows, planned for n = %d", ErrRowCountChanged, st.n, t.cfg.N)
	}
	return t.release(st)
}

// ErrRowCountChanged reports a scan whose row count differs from the plan.
var ErrRowCountChanged = errors.New("row count changed")

// release adds the planned noise to the statistics' solution.
func (t *Trainer) release(st stats) (*mechanism.Model, error) {
	var w []float64
	var err error
	switch {
	case t.out != nil:
		w, err = t.releaseOutput(st)
	case t.obj != nil:
		w, err = t.releaseObjective(st)
	case t.in != nil:
		w, err = t.releaseInput(st)
	}
	if err != nil {
		return nil, fmt.Errorf("lsq (%s): %w", t.cfg.Method, err)
	}
	return t.model(w), nil
}

// model wraps released weights with the public preprocessing.
func (t *Trainer) model(w []float64) *mechanism.Model {
	return &mechanism.Model{
		Kind:     mechanism.KindLSQ,
		Kernel:   t.cfg.Kernel,
		Label:    t.cfg.Label,
		Features: append([]string(nil), t.cfg.Features...),
		LabelLo:  t.cfg.LabelLo,
		LabelHi:  t.cfg.LabelHi,
		Scaler:   t.fm.scaler,
		RFF:      t.fm.rff,
		Weights:  [][]float64{w},
		Params:   t.Params(),
	}
}

// fit returns the noise-free minimiser of the method's objective (with
// zero noise). It is the non-private reference used by tests and the
// results; it is unexported so that no SQL path can reach it.
func (t *Trainer) fit(X [][]float64, y []float64) ([]float64, error) {
	if err := checkRows(X, y, t.cfg.N, len(t.cfg.Features)); err != nil {
		return nil, err
	}
	st := sufficientStats(X, y, t.fm, t.lm)
	switch {
	case t.out != nil:
		return t.out.solve(st)
	case t.obj != nil:
		return t.obj.solve(st, st.c)
	default:
		return t.in.solve(st.s, st.c)
	}
}
