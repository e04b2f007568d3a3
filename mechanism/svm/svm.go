package svm

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Kernel names accepted in Config.Kernel.
const (
	KernelLinear    = "linear"
	KernelRBF       = "rbf"
	KernelLaplacian = "laplacian"
	KernelCauchy    = "cauchy"
)

// Defaults: fixed public constants, never derived from data.
const (
	// DefaultC is the regularisation parameter C of ½‖w‖² + (C/n)·Σℓ.
	DefaultC = 100.0
	// DefaultDim is d̂, the number of random frequencies of the RFF map
	// (F = 2·d̂ features).
	DefaultDim = 256
	// DefaultGamma is the kernel bandwidth γ on the scaled inputs, whose
	// d coordinates lie in [−1, 1]/√d: γ = 1 here is γ = 1/d on the
	// [−1, 1] scale, the classic "1/n_features" choice.
	DefaultGamma = 1.0
	// DefaultHuberH is the half-width h of the huberised hinge.
	DefaultHuberH = 0.5
	// DefaultLoss is the loss used when Config.Loss is empty.
	DefaultLoss = LossHinge
)

// Eta is the share of the paper's ℓ₂ sensitivity 4LCκ/n granted to
// optimisation error: τ is chosen so that 2√(2τ) = Eta·4LCκ/n.
const Eta = 1.0 / 8

// TauFloor is the smallest duality-gap target, relative to C: below about
// 2⁻⁴⁴·C float64 rounding in the certificate itself becomes comparable to
// the target (very large n). τ = max(2·Eta²·(LCκ/n)², TauFloor·C), and
// whichever is used enters the sensitivity, so the floor costs noise, never
// privacy.
const TauFloor = 0x1p-44

// Config describes one DP_SVM_TRAIN call. Every field is public: it comes
// from the SQL call or the catalog, never from the rows. Zero values of C,
// Dim, Gamma, HuberH, Loss and Kernel select the documented defaults.
type Config struct {
	Kernel  string  // linear (default), rbf, laplacian or cauchy
	Loss    string  // hinge (default), logistic or huber
	C       float64 // regularisation C > 0 (default DefaultC)
	Dim     int     // d̂ for RFF kernels, in [1, mechanism.MaxRFFDim] (default DefaultDim); must be 0 for linear
	Gamma   float64 // RFF bandwidth γ > 0 (default DefaultGamma); must be 0 for linear
	HuberH  float64 // Huber half-width h > 0 (default DefaultHuberH); must be 0 for other losses
	Epsilon float64 // total ε of the release, > 0
	N       int     // public row count n ≥ 1
	// Features names the feature columns; Lo and Hi are their public
	// catalog bounds, in the same order.
	Features []string
	Lo, Hi   []float64
	Label    string
	// Classes is the public label domain in declared order: two classes
	// give one binary SVM (Classes[0] ↦ −1, Classes[1] ↦ +1), K > 2 give K
	// one-vs-rest SVMs, each with ε/K.
	Classes []string
}

// Trainer is a validated plan: everything about the release that can be
// computed without the data (noise scale, privacy cost, random features).
// It is built by Plan and consumed by Train.
type Trainer struct {
	cfg    Config // with defaults filled in
	loss   loss
	scaler mechanism.Scaler
	rff    *mechanism.RFF
	f      int     // F, dimension of the feature map
	k      int     // number of binary models (1 or K)
	l      float64 // Lipschitz constant L of the loss
	tau    float64 // duality-gap target τ
	delta2 float64 // ℓ₂ sensitivity 4LCκ/n + 2√(2τ)
	epsK   float64 // ε of each binary model
	lambda float64 // Laplace scale per coordinate √F·Δ₂/ε_k
	// maxEpochs overrides MaxEpochs when positive (tests).
	maxEpochs int
}

// Plan validates cfg and computes the noise scale and privacy cost from
// public quantities only; for RFF kernels it also draws the frequencies.
// Its errors depend only on cfg.
func Plan(cfg Config) (*Trainer, error) {
	if cfg.Kernel == "" {
		cfg.Kernel = KernelLinear
	}
	if cfg.Loss == "" {
		cfg.Loss = DefaultLoss
	}
	if !(cfg.Epsilon > 0) || math.IsInf(cfg.Epsilon, 0) {
		return nil, fmt.Errorf("svm: epsilon must be positive and finite, got %v", cfg.Epsilon)
	}
	if cfg.N < 1 {
		return nil, fmt.Errorf("svm: row count n must be at least 1, got %d", cfg.N)
	}
	if cfg.C == 0 {
		cfg.C = DefaultC
	}
	if !(cfg.C > 0) || math.IsInf(cfg.C, 0) {
		return nil, fmt.Errorf("svm: C must be positive and finite, got %v", cfg.C)
	}
	if len(cfg.Features) == 0 {
		return nil, fmt.Errorf("svm: no feature columns")
	}
	if len(cfg.Lo) != len(cfg.Features) || len(cfg.Hi) != len(cfg.Features) {
		return nil, fmt.Errorf("svm: %d features need %d lower and upper bounds, got %d and %d (every feature needs declared bounds)",
			len(cfg.Features), len(cfg.Features), len(cfg.Lo), len(cfg.Hi))
	}
	if len(cfg.Classes) < 2 {
		return nil, fmt.Errorf("svm: label domain needs at least 2 classes, got %d", len(cfg.Classes))
	}
	seen := make(map[string]bool, len(cfg.Classes))
	for _, c := range cfg.Classes {
		if seen[c] {
			return nil, fmt.Errorf("svm: label domain lists class %q twice", c)
		}
		seen[c] = true
	}
	if cfg.Loss == LossHuber {
		if cfg.HuberH == 0 {
			cfg.HuberH = DefaultHuberH
		}
		if !(cfg.HuberH > 0) || math.IsInf(cfg.HuberH, 0) {
			return nil, fmt.Errorf("svm: huber half-width h must be positive and finite, got %v", cfg.HuberH)
		}
	} else if cfg.HuberH != 0 {
		return nil, fmt.Errorf("svm: huber half-width h only applies to loss %q, not %q", LossHuber, cfg.Loss)
	}
	ls, err := newLoss(cfg.Loss, cfg.HuberH)
	if err != nil {
		return nil, fmt.Errorf("svm: %w", err)
	}
	t := &Trainer{loss: ls, l: ls.lipschitz()}
	switch cfg.Kernel {
	case KernelLinear:
		if cfg.Dim != 0 || cfg.Gamma != 0 {
			return nil, fmt.Errorf("svm: dim and gamma only apply to the rbf, laplacian and cauchy kernels")
		}
		// The intercept is a constant feature, regularised like the others.
		if t.scaler, err = mechanism.NewScaler(cfg.Lo, cfg.Hi, true); err != nil {
			return nil, fmt.Errorf("svm: %w", err)
		}
		t.f = t.scaler.Dim()
	case KernelRBF, KernelLaplacian, KernelCauchy:
		if cfg.Dim == 0 {
			cfg.Dim = DefaultDim
		}
		if cfg.Dim < 0 || cfg.Dim > mechanism.MaxRFFDim {
			return nil, fmt.Errorf("svm: dim must be in [1, %d], got %d", mechanism.MaxRFFDim, cfg.Dim)
		}
		if cfg.Gamma == 0 {
			cfg.Gamma = DefaultGamma
		}
		if !(cfg.Gamma > 0) || math.IsInf(cfg.Gamma, 0) {
			return nil, fmt.Errorf("svm: gamma must be positive and finite, got %v", cfg.Gamma)
		}
		// No intercept: a constant input coordinate only shifts the phases
		// of a translation-invariant kernel.
		if t.scaler, err = mechanism.NewScaler(cfg.Lo, cfg.Hi, false); err != nil {
			return nil, fmt.Errorf("svm: %w", err)
		}
		t.f = 2 * cfg.Dim
	default:
		return nil, fmt.Errorf("svm: unknown kernel %q (want %s, %s, %s or %s)", cfg.Kernel, KernelLinear, KernelRBF, KernelLaplacian, KernelCauchy)
	}
	if float64(cfg.N)*float64(t.f) > maxCacheEntries {
		return nil, fmt.Errorf("svm: n·F = %d·%d exceeds the training limit of %d feature values; lower dim", cfg.N, t.f, maxCacheEntries)
	}
	t.k = len(cfg.Classes)
	if t.k == 2 {
		t.k = 1
	}
	t.epsK = cfg.Epsilon / float64(t.k)
	if min := noise.LaplaceMinEpsilon(t.f); t.epsK < min {
		return nil, fmt.Errorf("svm: epsilon per binary model %v is below the Laplace sampler's minimum %v", t.epsK, min)
	}
	t.cfg = cfg
	t.tau, t.delta2, t.lambda = scales(t.l, cfg.C, cfg.N, t.f, t.epsK)
	if math.IsInf(t.lambda, 0) || math.IsNaN(t.lambda) {
		return nil, fmt.Errorf("svm: noise scale overflows for C = %v, n = %d, epsilon = %v", cfg.C, cfg.N, cfg.Epsilon)
	}
	if t.cfg.Kernel != KernelLinear {
		// Drawn here, before the budget is reserved: they do not depend on
		// the data and are released with the model.
		if t.rff, err = mechanism.NewRFF(cfg.Kernel, len(cfg.Features), cfg.Dim, cfg.Gamma); err != nil {
			return nil, fmt.Errorf("svm: %w", err)
		}
	}
	t.cfg.Features = append([]string(nil), cfg.Features...)
	t.cfg.Classes = append([]string(nil), cfg.Classes...)
	t.cfg.Lo = append([]float64(nil), cfg.Lo...)
	t.cfg.Hi = append([]float64(nil), cfg.Hi...)
	return t, nil
}

// kappa is the bound on ‖φ(x)‖₂: 1 by construction of the Scaler (linear)
// and of the random Fourier features.
const kappa = 1.0

// scales returns τ, the ℓ₂ sensitivity Δ₂ = 4LCκ/n + 2√(2τ) of a certified
// solution, and the per-coordinate Laplace scale λ = √F·Δ₂/ε_k.
func scales(l, c float64, n, f int, epsK float64) (tau, delta2, lambda float64) {
	base := 4 * l * c * kappa / float64(n)
	tau = math.Max(2*Eta*Eta*(l*c*kappa/float64(n))*(l*c*kappa/float64(n)), TauFloor*c)
	delta2 = base + 2*math.Sqrt(2*tau)
	lambda = math.Sqrt(float64(f)) * delta2 / epsK
	return tau, delta2, lambda
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

// Scale returns λ, the Laplace scale added to each weight coordinate.
func (t *Trainer) Scale() float64 { return t.lambda }

// Tolerance returns τ, the duality gap every solution is certified to meet.
func (t *Trainer) Tolerance() float64 { return t.tau }

// Sensitivity returns Δ₂, the ℓ₂ sensitivity of each certified weight vector.
func (t *Trainer) Sensitivity() float64 { return t.delta2 }

// Dim returns F, the dimension of the feature map and of each weight vector.
func (t *Trainer) Dim() int { return t.f }

// Models returns the number of binary SVMs: 1, or K for one-vs-rest.
func (t *Trainer) Models() int { return t.k }

// EpsilonPerModel returns ε_k = ε/K (ε for a binary label).
func (t *Trainer) EpsilonPerModel() float64 { return t.epsK }

// Events returns the privacy cost to reserve before Train: one pure-ε
// Laplace release per binary model. Under sequential composition they sum
// to cfg.Epsilon.
func (t *Trainer) Events() []budget.Event {
	ev := make([]budget.Event, t.k)
	for i := range ev {
		ev[i] = budget.Event{Kind: budget.Laplace, Epsilon: t.epsK}
	}
	return ev
}

// Train fits the SVM(s) on the raw rows and releases the noisy weights.
//
// X holds raw feature values in cfg.Features order (NaN for NULL); y holds
// indices into cfg.Classes. len(X) must equal cfg.N. Only the weight
// vectors ŵ = w̃ + Laplace(λ)^F are released, never dual coefficients or
// support vectors.
func (t *Trainer) Train(X [][]float64, y []int) (*mechanism.Model, error) {
	ws, _, err := t.fit(X, y)
	if err != nil {
		return nil, err
	}
	for k := range ws {
		if err := t.release(ws[k]); err != nil {
			return nil, err
		}
	}
	return t.model(ws), nil
}

// checkInput validates the shape of the data. These errors only fire on a
// caller bug (the contract fixes len(X) = N, the row width and y ∈ [0, K)),
// and reveal no row.
func (t *Trainer) checkInput(X [][]float64, y []int) error {
	if len(X) != t.cfg.N || len(y) != t.cfg.N {
		return fmt.Errorf("svm: got %d rows and %d labels, the plan is for n = %d", len(X), len(y), t.cfg.N)
	}
	d := len(t.cfg.Features)
	for _, r := range X {
		if len(r) != d {
			return fmt.Errorf("svm: a row has %d values, want %d features", len(r), d)
		}
	}
	for _, c := range y {
		if c < 0 || c >= len(t.cfg.Classes) {
			return fmt.Errorf("svm: a label index is outside the domain [0, %d)", len(t.cfg.Classes))
		}
	}
	return nil
}

// fit returns the noise-free certified weight vectors (one per binary
// model). It is the non-private path: unexported, reached only through
// Train (which adds the noise) and the package's tests.
func (t *Trainer) fit(X [][]float64, y []int) ([][]float64, []solution, error) {
	if err := t.checkInput(X, y); err != nil {
		return nil, nil, err
	}
	start := time.Now()
	log := logrus.WithFields(logrus.Fields{"mechanism": "svm", "kernel": t.cfg.Kernel, "loss": t.cfg.Loss, "n": t.cfg.N, "F": t.f, "models": t.k})
	fc := buildCache(X, t.scaler, t.rff)
	log.WithField("elapsed", time.Since(start).Round(time.Millisecond).String()).Debug("svm: feature cache built")
	ws := make([][]float64, t.k)
	sols := make([]solution, t.k)
	errs := make([]error, t.k)
	run := func(k int) {
		// Binary: Classes[1] ↦ +1. One-vs-rest: class k ↦ +1.
		pos := k
		if t.k == 1 {
			pos = 1
		}
		lab := make([]float64, len(y))
		for i, c := range y {
			lab[i] = -1
			if c == pos {
				lab[i] = 1
			}
		}
		p := &problem{fc: fc, y: lab, loss: t.loss, c: t.cfg.C / float64(t.cfg.N), tau: t.tau, log: log.WithField("model", k), maxEpochs: t.maxEpochs}
		sols[k], errs[k] = p.solve()
		ws[k] = sols[k].w
	}
	parallelTasks(t.k, run)
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	epochs, passes := 0, 0.0
	for _, s := range sols {
		epochs += s.epochs
		passes += s.passes
	}
	log.WithFields(logrus.Fields{"epochs": epochs, "passes": passes, "elapsed": time.Since(start).Round(time.Millisecond).String()}).Info("svm: trained")
	return ws, sols, nil
}

// release adds i.i.d. Laplace(λ) noise to every coordinate of w in place.
func (t *Trainer) release(w []float64) error {
	if err := noise.AddLaplaceVec(w, t.lambda); err != nil {
		return fmt.Errorf("svm: adding Laplace noise: %w", err)
	}
	return nil
}

// model wraps released weight vectors into a mechanism.Model.
func (t *Trainer) model(ws [][]float64) *mechanism.Model {
	params := map[string]float64{
		"epsilon":           t.cfg.Epsilon,
		"epsilon_per_model": t.epsK,
		"C":                 t.cfg.C,
		"L":                 t.l,
		"n":                 float64(t.cfg.N),
		"F":                 float64(t.f),
		"tau":               t.tau,
		"sensitivity_l2":    t.delta2,
		"lambda":            t.lambda,
		"loss":              lossCode[t.cfg.Loss],
	}
	if t.rff != nil {
		params["dim"] = float64(t.cfg.Dim)
		params["gamma"] = t.cfg.Gamma
	}
	if t.cfg.Loss == LossHuber {
		params["huber_h"] = t.cfg.HuberH
	}
	return &mechanism.Model{
		Kind:     mechanism.KindSVM,
		Kernel:   t.cfg.Kernel,
		Label:    t.cfg.Label,
		Features: append([]string(nil), t.cfg.Features...),
		Classes:  append([]string(nil), t.cfg.Classes...),
		Scaler:   t.scaler,
		RFF:      t.rff,
		Weights:  ws,
		Params:   params,
	}
}

// lossCode encodes Config.Loss in Model.Params["loss"], which holds numbers.
var lossCode = map[string]float64{LossHinge: 0, LossLogistic: 1, LossHuber: 2}

// parallelTasks runs fn(0) … fn(k−1) on up to GOMAXPROCS goroutines.
func parallelTasks(k int, fn func(int)) {
	w := runtime.GOMAXPROCS(0)
	if w > k {
		w = k
	}
	next := make(chan int, k)
	for i := 0; i < k; i++ {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for j := 0; j < w; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
