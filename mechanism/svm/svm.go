package svm

import (
	"fmt"
	"math"
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

// Defaults and limits: public constants, never derived from data. How the
// default rules were chosen is in docs/mechanisms/svm.md §7.
const (
	// DefaultLoss is the loss used when Config.Loss is empty.
	DefaultLoss = LossHuber
	// DefaultHuberH is the half-width h of the Huber-smoothed hinge.
	DefaultHuberH = 0.5
	// DefaultGamma is the kernel bandwidth γ on the scaled inputs, whose
	// d coordinates lie in [−1, 1]/√d: γ = 1 here is γ = 1/d on the
	// [−1, 1] scale, the classic "1/n_features" choice.
	DefaultGamma = 1.0

	// NoiseToMargin is ρ of the default C: C is chosen so that the standard
	// deviation of the noise on a score ⟨ŵ, φ⟩ with ‖φ‖ = 1 is ρ/√K times
	// the loss's margin 1 (K binary models; see defaultC).
	NoiseToMargin = 0.25
	// MinDefaultC and MaxDefaultCBeta bound the default C: at least
	// MinDefaultC, and C·β_ℓ at most MaxDefaultCBeta (which bounds the
	// iteration count of default calls). The default C is further lowered
	// until the work T·n·F·K is at most MaxDefaultWork.
	MinDefaultC     = 1.0
	MaxDefaultCBeta = 500.0
	MaxDefaultWork  = 1 << 36

	// MinDefaultDim and MaxDefaultDim bound the default number of random
	// frequencies d̂ (F = 2d̂).
	MinDefaultDim = 8
	MaxDefaultDim = 64

	// MinC and MaxCBeta bound an explicit C: C ≥ MinC and C·β_ℓ ≤ MaxCBeta.
	// Gradient descent needs about C·β_ℓ/2 passes over the data per factor
	// e of accuracy, so MaxCBeta bounds the running time.
	MinC     = 1e-6
	MaxCBeta = 4096.0
	// MinHuberH and MaxHuberH bound the Huber half-width h.
	MinHuberH = 1e-3
	MaxHuberH = 100.0

	// SolverShare is θ: the iteration count T is the smallest with
	// q^T·R ≤ max(θ·s, ScoreTolerance), where R is the public bound on ‖w*‖
	// and s the standard deviation of the noise on each coordinate: the
	// optimisation error left in any score is a small share of the noise,
	// or below ScoreTolerance in units of the margin.
	SolverShare    = 0.1
	ScoreTolerance = 1e-2
	// MaxIterations caps T.
	MaxIterations = 20000
	// MaxWork caps T·n·F·K, the number of multiply-add pairs (one in the
	// margin, one in the gradient) of a training run: calls above it are
	// refused before anything is charged.
	MaxWork = 1 << 37
)

// Config describes one DP_SVM_TRAIN call. Every field is public: it comes
// from the SQL call or the catalog, never from the rows. Zero values of C,
// Dim, Gamma, HuberH, Loss and Kernel select the documented defaults.
type Config struct {
	// Stop ends the computation early when the query is killed (KILL QUERY
	// / KILL); it is checked between iterations only, and a stopped
	// training returns mechanism.ErrStopped. The zero value never stops.
	Stop    mechanism.Stop
	Kernel  string  // linear (default), rbf, laplacian or cauchy
	Loss    string  // huber (default) or logistic; hinge is refused
	C       float64 // regularisation C ∈ [MinC, MaxCBeta/β_ℓ] (default: defaultC)
	Dim     int     // d̂ for RFF kernels, in [1, mechanism.MaxRFFDim] (default: defaultDim); must be 0 for linear
	Gamma   float64 // RFF bandwidth γ > 0 (default DefaultGamma); must be 0 for linear
	HuberH  float64 // Huber half-width h ∈ [MinHuberH, MaxHuberH] (default DefaultHuberH); must be 0 for logistic
	Epsilon float64 // total ε of the release, > 0
	// Delta is the δ of the release: 0 (default) for pure ε-DP with Laplace
	// noise, or δ ∈ (0, 1) for one discrete-Gaussian draw on all K weight
	// vectors.
	Delta float64
	N     int // public row count n ≥ 1
	// Features names the feature columns; Lo and Hi are their public
	// catalog bounds, in the same order.
	Features []string
	Lo, Hi   []float64
	Label    string
	// Classes is the public label domain in declared order: two classes
	// give one binary SVM (Classes[0] ↦ −1, Classes[1] ↦ +1), K > 2 give K
	// one-vs-rest SVMs.
	Classes []string

	// Iterations fixes T when positive (at most MaxIterations; the work cap
	// MaxWork is then not applied). Zero selects the rule of
	// docs/mechanisms/svm.md §6. The SQL layer sets it only to re-plan a
	// call on a changed row count with the T it already announced.
	Iterations int
}

// Trainer is a validated plan: everything about the release that can be
// computed without the data (iteration count, sensitivity, noise scale,
// privacy cost, random features). It is built by Plan and consumed by Train.
type Trainer struct {
	cfg    Config // with defaults filled in
	loss   loss
	scaler mechanism.Scaler
	rff    *mechanism.RFF
	f      int     // F, dimension of the feature map
	k      int     // number of binary models (1 or K)
	l      float64 // Lipschitz constant L of the loss
	beta   float64 // smoothness β_ℓ of the loss
	eta    float64 // step η = 1 − a
	a, b   float64 // update w ← a·w − b·Σℓ′yφ
	iters  int     // T
	q      float64 // contraction factor of the gradient map (upper bound)
	fp     float64 // per-iteration floating-point slack ε_fp
	delta2 float64 // ℓ₂ sensitivity of each weight vector after T iterations
	epsK   float64 // ε of each binary model (Laplace)
	lambda float64 // Laplace scale per coordinate √F·Δ₂/ε_k, or 0
	sigma  float64 // discrete-Gaussian σ on the stacked K·F vector, or 0
	events []budget.Event
}

// Plan validates cfg and computes the iteration count, the noise scale and
// the privacy cost from public quantities only; for RFF kernels it also
// draws the frequencies. Its errors depend only on cfg.
func Plan(cfg Config) (*Trainer, error) {
	if cfg.Kernel == "" {
		cfg.Kernel = KernelLinear
	}
	if cfg.Loss == "" {
		cfg.Loss = DefaultLoss
	}
	if cfg.Loss != LossHuber && cfg.Loss != LossLogistic {
		_, err := newLoss(cfg.Loss, 0) // the refusal of hinge, or an unknown loss
		return nil, fmt.Errorf("svm: %w", err)
	}
	if !(cfg.Epsilon > 0) || math.IsInf(cfg.Epsilon, 0) {
		return nil, fmt.Errorf("svm: epsilon must be positive and finite, got %v", cfg.Epsilon)
	}
	if !(cfg.Delta >= 0 && cfg.Delta < 1) {
		return nil, fmt.Errorf("svm: delta must be in [0, 1), got %v", cfg.Delta)
	}
	if cfg.N < 1 {
		return nil, fmt.Errorf("svm: row count n must be at least 1, got %d", cfg.N)
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
		if !(cfg.HuberH >= MinHuberH && cfg.HuberH <= MaxHuberH) {
			return nil, fmt.Errorf("svm: huber half-width h must be in [%v, %v], got %v", MinHuberH, MaxHuberH, cfg.HuberH)
		}
	} else if cfg.HuberH != 0 {
		return nil, fmt.Errorf("svm: huber half-width h only applies to loss %q, not %q", LossHuber, cfg.Loss)
	}
	ls, err := newLoss(cfg.Loss, cfg.HuberH)
	if err != nil {
		return nil, fmt.Errorf("svm: %w", err)
	}
	t := &Trainer{loss: ls, l: ls.lipschitz(), beta: ls.smoothness()}
	t.k = len(cfg.Classes)
	if t.k == 2 {
		t.k = 1
	}
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
			cfg.Dim = defaultDim(cfg.N, t.k, cfg.Epsilon, cfg.Delta)
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
	t.epsK = cfg.Epsilon / float64(t.k)
	t.cfg = cfg
	// Noise per unit of sensitivity (Laplace: √F·K/ε per coordinate;
	// Gaussian: σ for Δ₂ = 1), needed by the default C and by T.
	var unitSD float64
	if cfg.Delta > 0 {
		s1, err := mechanism.GaussianSigma(math.Sqrt(float64(t.k)), cfg.Epsilon, cfg.Delta)
		if err != nil {
			return nil, fmt.Errorf("svm: %w", err)
		}
		unitSD = s1
	} else {
		if min := noise.LaplaceMinEpsilon(t.f); t.epsK < min {
			return nil, fmt.Errorf("svm: epsilon per binary model %v is below the Laplace sampler's minimum %v", t.epsK, min)
		}
		unitSD = math.Sqrt2 * math.Sqrt(float64(t.f)) / t.epsK
	}
	maxC := MaxCBeta / t.beta
	if cfg.Iterations < 0 || cfg.Iterations > MaxIterations {
		return nil, fmt.Errorf("svm: iterations must be in [1, %d], got %d", MaxIterations, cfg.Iterations)
	}
	if t.cfg.C == 0 {
		// The default C, lowered (deterministically, from public values)
		// until its iteration count fits the default work budget.
		c := defaultC(cfg.N, t.k, t.l, t.beta, unitSD)
		for {
			if err := t.planSolver(c, unitSD); err != nil {
				return nil, err
			}
			if t.work() <= MaxDefaultWork || c <= MinDefaultC {
				break
			}
			c = math.Max(MinDefaultC, c*0.8)
		}
		t.cfg.C = c
	}
	if c := t.cfg.C; !(c >= MinC && c <= maxC) {
		hint := "lower C or, for huber, raise h"
		if !(c >= MinC) {
			hint = "raise C"
		}
		return nil, fmt.Errorf("svm: C must be in [%v, %v] for loss %s (C·β_ℓ ≤ %v with β_ℓ = %v: gradient descent needs about C·β_ℓ/2 passes over the data per factor e of accuracy), got %v; %s",
			MinC, maxC, cfg.Loss, MaxCBeta, t.beta, c, hint)
	}
	if err := t.planSolver(t.cfg.C, unitSD); err != nil {
		return nil, err
	}
	if cfg.Iterations == 0 && t.work() > MaxWork {
		return nil, fmt.Errorf("svm: training would need T·n·F·K = %d·%d·%d·%d = %.3g multiply-adds, above the limit of %.3g; lower C (T grows like C·β_ℓ/2), lower dim, or use loss=logistic (β_ℓ = 1/4)",
			t.iters, cfg.N, t.f, t.k, t.work(), float64(MaxWork))
	}
	if err := t.planNoise(); err != nil {
		return nil, err
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
// and of the random Fourier features (and kept by shrink32 on the float32
// cache).
const kappa = 1.0

// defaultC returns ρ/(√K·s₁) clamped to [MinDefaultC, MaxDefaultCBeta/β_ℓ], where
// s₁ is the per-coordinate noise standard deviation at C = 1: the noise sd
// is s₁·C (it is linear in Δ₂ = 2LCκ/n), so at this C a unit-norm score
// carries noise of sd ρ/√K, ρ = NoiseToMargin (docs/mechanisms/svm.md §7).
func defaultC(n, k int, l, beta, unitSD float64) float64 {
	s1 := unitSD * 2 * l * kappa / float64(n)
	c := NoiseToMargin / math.Sqrt(float64(k)) / s1
	return math.Min(math.Max(c, MinDefaultC), MaxDefaultCBeta/beta)
}

// defaultDim returns d̂ for RFF kernels when the call does not set it
// (docs/mechanisms/svm.md §7). With Laplace noise the per-coordinate scale
// grows like √F = √(2d̂), so at the default C the usable C shrinks like
// 1/√d̂ while the kernel approximation improves like 1/√d̂: d̂ is the power
// of two nearest √ν/4, ν = n·ε/K (the effective sample size of one binary
// model), within [MinDefaultDim, MaxDefaultDim]. The Gaussian release's σ
// does not grow with F, so δ > 0 takes MaxDefaultDim.
func defaultDim(n, k int, eps, delta float64) int {
	if delta > 0 {
		return MaxDefaultDim
	}
	nu := float64(n) * eps / float64(k)
	d := math.Exp2(math.Round(math.Log2(math.Sqrt(nu) / 4)))
	return int(math.Min(math.Max(d, MinDefaultDim), MaxDefaultDim))
}

// planSolver fixes the step, the iteration count T and the sensitivity Δ₂
// of the weights after T iterations (docs/mechanisms/svm.md §4–6).
func (t *Trainer) planSolver(c, unitSD float64) error {
	n := t.cfg.N
	// Smoothness of P is β = 1 + C·β_ℓ·κ²; the step η = 2/(1 + β) makes the
	// gradient map (β − 1)/(β + 1)-contractive.
	t.eta = 2 / (2 + c*t.beta*kappa*kappa)
	t.a = 1 - t.eta
	t.eta = 1 - t.a // the step actually taken
	t.b = t.eta * c / float64(n)
	if !(t.b > 0) {
		return fmt.Errorf("svm: step η·C/n underflows for C = %v, n = %d", c, n)
	}
	// T: the exact iterates satisfy ‖w_T − w*‖ ≤ q^T·‖w*‖ and
	// ‖w*‖ ≤ R = min(C·L·κ, √(2C·ℓ(0))) (w* = −C·∇R̄(w*) and ½‖w*‖² ≤ P(0)).
	q, _ := contraction(n, t.a, t.b, t.beta, 1)
	if !(q < 1) {
		return fmt.Errorf("svm: gradient map not contractive for C = %v (step below float64 resolution)", c)
	}
	r := math.Min(c*t.l*kappa, math.Sqrt(2*c*valueAtZero(t.loss)))
	tol := math.Max(SolverShare*unitSD*2*t.l*c*kappa/float64(n), ScoreTolerance)
	t.iters = 1
	if r > tol {
		t.iters = int(math.Ceil(math.Log(r/tol) / -math.Log(q)))
	}
	t.iters = min(max(t.iters, 1), MaxIterations)
	if t.cfg.Iterations > 0 {
		t.iters = t.cfg.Iterations
	}
	t.q, t.fp = q, 0
	fp, _ := roundingSlack(n, t.f, t.a, t.b, t.loss)
	if !(fp <= t.b*float64(n)*t.l) {
		return fmt.Errorf("svm: floating-point rounding too large for n = %d, F = %d, C = %v", n, t.f, c)
	}
	t.fp = fp
	_, sum := contraction(n, t.a, t.b, t.beta, t.iters)
	// ‖w̃_T − w̃′_T‖ ≤ Σ_{t<T} q^t·(2Lκ·b + 2ε_fp).
	t.delta2 = sum * (2*t.l*kappa*t.b + 2*fp) * (1 + 4*u)
	if !(t.delta2 > 0) || math.IsInf(t.delta2, 0) {
		return fmt.Errorf("svm: sensitivity %v is not positive and finite for C = %v, n = %d", t.delta2, c, n)
	}
	return nil
}

// work returns T·n·F·K, the multiply-add pairs of one training run.
func (t *Trainer) work() float64 {
	return float64(t.iters) * float64(t.cfg.N) * float64(t.f) * float64(t.k)
}

// planNoise fixes the noise scale and the privacy events, and runs the
// noise sampler once on zeros so that every parameter check it makes fails
// here, before anything is charged, rather than after training.
func (t *Trainer) planNoise() error {
	if t.cfg.Delta > 0 {
		stacked := math.Sqrt(float64(t.k)) * t.delta2 * (1 + 4*u)
		sigma, err := mechanism.GaussianSigma(stacked, t.cfg.Epsilon, t.cfg.Delta)
		if err != nil {
			return fmt.Errorf("svm: %w", err)
		}
		if stacked/sigma < noise.GaussianMinRatio {
			return fmt.Errorf("svm: noise multiplier σ/Δ₂ = %v exceeds what the Gaussian sampler supports", sigma/stacked)
		}
		t.sigma = sigma
		t.events = []budget.Event{mechanism.GaussianEvent(stacked, sigma, t.cfg.Epsilon, t.cfg.Delta)}
		if err := noise.AddGaussianVec(make([]float64, t.k*t.f), t.sigma); err != nil {
			return fmt.Errorf("svm: Gaussian noise with σ = %v on %d coordinates: %w", t.sigma, t.k*t.f, err)
		}
		return nil
	}
	t.lambda = math.Sqrt(float64(t.f)) * t.delta2 / t.epsK * (1 + 4*u)
	t.events = make([]budget.Event, t.k)
	for i := range t.events {
		t.events[i] = budget.Event{Kind: budget.Laplace, Epsilon: t.epsK}
	}
	if err := noise.AddLaplaceVec(make([]float64, t.f), t.lambda); err != nil {
		return fmt.Errorf("svm: Laplace noise of scale %v: %w", t.lambda, err)
	}
	return nil
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

// Scale returns the noise scale: the Laplace scale λ of each coordinate
// (pure ε), or the discrete-Gaussian σ of each coordinate (δ > 0).
func (t *Trainer) Scale() float64 {
	if t.cfg.Delta > 0 {
		return t.sigma
	}
	return t.lambda
}

// Gaussian reports whether the release uses the discrete Gaussian (δ > 0).
func (t *Trainer) Gaussian() bool { return t.cfg.Delta > 0 }

// Sensitivity returns Δ₂, the ℓ₂ sensitivity of each weight vector after
// T iterations, floating-point slack included.
func (t *Trainer) Sensitivity() float64 { return t.delta2 }

// Iterations returns T, the number of gradient steps every Train runs.
func (t *Trainer) Iterations() int { return t.iters }

// Step returns the step size η.
func (t *Trainer) Step() float64 { return t.eta }

// Dim returns F, the dimension of the feature map and of each weight vector.
func (t *Trainer) Dim() int { return t.f }

// Models returns the number of binary SVMs: 1, or K for one-vs-rest.
func (t *Trainer) Models() int { return t.k }

// EpsilonPerModel returns ε_k = ε/K (ε for a binary label).
func (t *Trainer) EpsilonPerModel() float64 { return t.epsK }

// Events returns the privacy cost to reserve before Train: K pure-ε Laplace
// releases of ε/K (K = 1 for a binary label), or one Gaussian release of
// (ε, δ) on the stacked K·F weights.
func (t *Trainer) Events() []budget.Event { return append([]budget.Event(nil), t.events...) }

// Train fits the SVM(s) on the raw rows and releases the noisy weights.
//
// X holds raw feature values in cfg.Features order (NaN for NULL); y holds
// indices into cfg.Classes. len(X) must equal cfg.N. It always runs exactly
// Iterations() gradient steps. Its only errors are shape errors, which
// fire on a caller bug only (the contract fixes len(X) = N, the row width
// and y ∈ [0, K)); the noise parameters were checked by Plan and the
// weights are finite by construction (‖w̃‖ ≤ 2CL), so no error depends on
// the rows.
func (t *Trainer) Train(X [][]float64, y []int) (*mechanism.Model, error) {
	ws, err := t.fit(X, y)
	if err != nil {
		return nil, err
	}
	if err := t.cfg.Stop.Err(); err != nil {
		return nil, err
	}
	if err := t.release(ws); err != nil {
		return nil, err
	}
	return t.model(ws), nil
}

// checkInput validates the shape of the data (caller bugs only; names no
// row or value).
func (t *Trainer) checkInput(X [][]float64, y []int) error {
	return mechanism.CheckShape("svm", X, y, t.cfg.N, len(t.cfg.Features), len(t.cfg.Classes))
}

// fit returns the noise-free weight vectors after T iterations (one per
// binary model). It is the non-private path: unexported, reached only
// through Train (which adds the noise) and the package's tests.
func (t *Trainer) fit(X [][]float64, y []int) ([][]float64, error) {
	if err := t.checkInput(X, y); err != nil {
		return nil, err
	}
	start := time.Now()
	log := logrus.WithFields(logrus.Fields{"mechanism": "svm", "kernel": t.cfg.Kernel, "loss": t.cfg.Loss, "n": t.cfg.N, "F": t.f, "models": t.k, "iterations": t.iters})
	fc := buildCache(X, t.scaler, t.rff)
	log.WithField("elapsed", time.Since(start).Round(time.Millisecond).String()).Debug("svm: feature cache built")
	g := &gd{fc: fc, cls: make([]int32, len(y)), loss: t.loss, a: t.a, b: t.b, iters: t.iters, stop: t.cfg.Stop}
	for i, c := range y {
		g.cls[i] = int32(c)
	}
	if t.k == 1 {
		g.pos = []int32{1} // Classes[1] ↦ +1
	} else {
		for k := 0; k < t.k; k++ {
			g.pos = append(g.pos, int32(k)) // one-vs-rest: class k ↦ +1
		}
	}
	ws := g.run()
	if solveHook != nil {
		solveHook(g.done)
	}
	log.WithField("elapsed", time.Since(start).Round(time.Millisecond).String()).Info("svm: trained")
	return ws, nil
}

// solveHook, when set (tests only), receives the number of gradient steps
// each fit actually executed.
var solveHook func(executed int)

// release adds the noise to the weight vectors in place: Laplace(λ) on every
// coordinate (pure ε), or one discrete-Gaussian draw on the stacked K·F
// vector (δ > 0).
func (t *Trainer) release(ws [][]float64) error {
	if t.cfg.Delta > 0 {
		stacked := make([]float64, 0, t.k*t.f)
		for _, w := range ws {
			stacked = append(stacked, w...)
		}
		if err := noise.AddGaussianVec(stacked, t.sigma); err != nil {
			return fmt.Errorf("svm: adding Gaussian noise: %w", err)
		}
		for k := range ws {
			copy(ws[k], stacked[k*t.f:(k+1)*t.f])
		}
		return nil
	}
	for _, w := range ws {
		if err := noise.AddLaplaceVec(w, t.lambda); err != nil {
			return fmt.Errorf("svm: adding Laplace noise: %w", err)
		}
	}
	return nil
}

// model wraps released weight vectors into a mechanism.Model.
func (t *Trainer) model(ws [][]float64) *mechanism.Model {
	params := map[string]float64{
		"epsilon":        t.cfg.Epsilon,
		"C":              t.cfg.C,
		"L":              t.l,
		"n":              float64(t.cfg.N),
		"F":              float64(t.f),
		"iterations":     float64(t.iters),
		"step":           t.eta,
		"sensitivity_l2": t.delta2,
		"loss":           lossCode[t.cfg.Loss],
	}
	if t.cfg.Delta > 0 {
		params["delta"] = t.cfg.Delta
		params["sigma"] = t.sigma
	} else {
		params["epsilon_per_model"] = t.epsK
		params["lambda"] = t.lambda
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

// lossCode encodes Config.Loss in Model.Params["loss"], which holds numbers
// (0 was the hinge loss of models trained before it was withdrawn).
var lossCode = map[string]float64{LossLogistic: 1, LossHuber: 2}
