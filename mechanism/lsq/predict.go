package lsq

import (
	"fmt"
	"maps"
	"math"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// ExactKernelMax is the largest m for which DP_LSQ_PREDICT solves kernel
// ridge regression exactly (an m×m Cholesky factorisation, m³/3 flops and
// 8m² bytes); above it the rbf, laplacian and cauchy kernels are replaced by
// random Fourier features, a kernel with κ = 1 for which the same bound holds.
const ExactKernelMax = 5000

// PredictPlan is a validated DP_LSQ_PREDICT plan: Nie & Wang's private
// prediction, one noisy clipped prediction per release,
//
//	π(f_{z,λ}(x)) + Laplace(Δ/ε),  Δ = min(2M, 2κ²(κR + M)/(λm)),  R = M/√λ,
//
// with f_{z,λ} the kernel ridge minimiser of (1/m)Σ(f(xᵢ) − yᵢ)² + λ‖f‖²_K
// and π the clipping to [−M, M] (M = 1 after label scaling, κ = 1). The
// paper's Proposition 1 uses 2Rκ²(κ+1)/(λm), which is larger whenever
// R ≥ M (λ ≤ 1); the bound here is the one its Lemma 2 proof actually gives.
type PredictPlan struct {
	cfg    Config
	scaler mechanism.Scaler
	lm     labelMap
	rff    *mechanism.RFF // RFF kernels with m > ExactKernelMax
	exact  bool           // exact kernel ridge (non-linear kernel, m ≤ ExactKernelMax)
	lambda float64
	sens   float64 // Δ, sensitivity of one clipped prediction
	tau    float64 // floating-point error bound on one prediction
	scale  float64 // Laplace scale Δ/ε
}

// PlanPredict validates cfg for DP_LSQ_PREDICT and computes the Laplace
// scale from public quantities only. λ must be in (0, 1] (the range of Nie
// & Wang's Lemma 2 and Proposition 1); 0 selects their Theorem 2–3 rule
// with r = ½, λ = min(1, (mε)^(−1/2)). Delta must be 0: the release is
// pure ε-DP. Method and Eta must be unset.
func PlanPredict(cfg Config) (*PredictPlan, error) {
	if cfg.Method != "" {
		return nil, fmt.Errorf("lsq predict: method does not apply to prediction, got %q", cfg.Method)
	}
	if cfg.Delta != 0 {
		return nil, fmt.Errorf("lsq predict: the prediction is pure ε-DP (Laplace); delta must be 0, got %v", cfg.Delta)
	}
	if cfg.Eta != 0 {
		return nil, fmt.Errorf("lsq predict: eta applies to the input and objective methods, not prediction")
	}
	if cfg.Lambda > 1 {
		return nil, fmt.Errorf("lsq predict: lambda must be in (0, 1] (Nie & Wang, Lemma 2), got %v", cfg.Lambda)
	}
	cm, err := validate(cfg)
	if err != nil {
		return nil, fmt.Errorf("lsq predict: %w", err)
	}
	cfg = cm.cfg
	p := &PredictPlan{cfg: cfg, scaler: cm.scaler, lm: cm.lm}
	p.lambda = cfg.Lambda
	if p.lambda == 0 {
		p.lambda = nieWangLambda(cfg.N, cfg.Epsilon)
	}
	r := 1 / math.Sqrt(p.lambda)
	switch {
	case cfg.Kernel == KernelLinear:
		p.tau, err = ridgeRoundingBound(cfg.N, cm.scaler.Dim(), p.lambda, r)
	case cfg.N <= ExactKernelMax:
		p.exact = true
		p.tau, err = kernelRoundingBound(cfg.N, cm.scaler.Dim(), p.lambda)
	default:
		p.rff, err = drawRFF(cm)
		if err == nil {
			p.tau, err = ridgeRoundingBound(cfg.N, p.rff.Dim(), p.lambda, r)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lsq predict: %w", err)
	}
	// |f(x) − f′(x)| ≤ κ‖f − f′‖_K; clipping to [−1, 1] caps the difference
	// at 2M = 2. Rounding of either computed prediction adds at most τ.
	p.sens = math.Min(2, lemma2Sensitivity(kappaHat, 1, p.lambda, cfg.N)*kappaHat+4*p.tau)
	p.scale = p.sens / cfg.Epsilon
	if cfg.Epsilon < noise.LaplaceMinEpsilon(1) {
		return nil, fmt.Errorf("lsq predict: epsilon %v is below the smallest the Laplace sampler supports", cfg.Epsilon)
	}
	if err := noise.AddLaplaceVec(nil, p.scale); err != nil {
		return nil, fmt.Errorf("lsq predict: the Laplace scale %v is outside the sampler's range (lambda or epsilon too extreme): %w", p.scale, err)
	}
	return p, nil
}

// kernelRoundingBound bounds |f̂(x) − f(x)| for exact kernel ridge in
// float64: kernel entries err by at most γ_{D+8} (D input coordinates, a
// few more operations for exp), the Cholesky backward error is at most
// 1.01·γ_{3m+1}·tr(K + λmI) ≤ 1.01·γ_{3m+1}·m(1 + λm) (Higham, Thm 10.4), so
// with ê the total over λm, ‖α̂ − α‖ ≤ ê‖α‖/(1 − ê), ‖α‖ ≤ √m/(λm) and
// ‖k_x‖ ≤ √m give |f̂(x) − f(x)| ≤ (γ_{D+8} + γ_m + ê)/(λ(1 − ê)).
//
// λ must also clear the Cholesky floor: the computed kernel matrix has
// λ_min ≥ λm − m·γ_{D+8} and trace ≤ m(1 + γ_{D+8}) + λm², and Demmel's
// condition then guarantees the factorisation succeeds on any data.
func kernelRoundingBound(m, d int, lambda float64) (float64, error) {
	lm := lambda * float64(m)
	e := (float64(m)*gammaN(d+8) + 1.01*gammaN(3*m+1)*float64(m)*(1+lm) + unitRoundoff*lm) / lm
	mf := float64(m)
	if floor := choleskyFloor(m, mf*(1+gammaN(d+8))+lm*mf*(1+unitRoundoff)); !(lm-mf*gammaN(d+8) > floor) {
		return 0, fmt.Errorf("lambda %v is too small for a certified float64 kernel solve with m = %d", lambda, m)
	}
	if !(e < 0.5) {
		return 0, fmt.Errorf("lambda %v is too small for a certified float64 kernel solve with m = %d", lambda, m)
	}
	return (gammaN(d+8) + gammaN(m) + e) / (lambda * (1 - e)), nil
}

// Config returns the plan's configuration with defaults filled in.
func (p *PredictPlan) Config() Config { return p.cfg }

// Lambda returns the λ used (after the auto rule).
func (p *PredictPlan) Lambda() float64 { return p.lambda }

// Events returns the cost of ONE prediction: a pure-ε Laplace release.
func (p *PredictPlan) Events() []budget.Event {
	return []budget.Event{{Kind: budget.Laplace, Epsilon: p.cfg.Epsilon}}
}

// Params returns the public planning values.
func (p *PredictPlan) Params() map[string]float64 {
	out := map[string]float64{
		"epsilon": p.cfg.Epsilon, "lambda": p.lambda, "n": float64(p.cfg.N),
		"sensitivity": p.sens, "laplace_scale": p.scale, "tolerance": p.tau,
	}
	if p.exact {
		out["exact_kernel"] = 1
	}
	if p.rff != nil {
		out["dim"] = float64(p.cfg.Dim)
	}
	if p.cfg.Kernel != KernelLinear {
		out["gamma"] = p.cfg.Gamma
	}
	return maps.Clone(out)
}

// Predict fits the ridge function on the rows and returns one private
// prediction at the raw query point xq (label units): one release of
// Events().
func (p *PredictPlan) Predict(X [][]float64, y []float64, xq []float64) (float64, error) {
	pr, err := p.Fit(X, y)
	if err != nil {
		return 0, err
	}
	return pr.Predict(xq)
}

// Predictor holds a fitted, NOT private, ridge function; only noisy
// predictions leave it. Every call of Predict is one release of the plan's
// Events() and must be charged.
type Predictor struct {
	p *PredictPlan
	f func(xq []float64) float64 // noise-free f_{z,λ}(xq) in y′ units
}

// Fit solves the ridge problem on the rows (raw features in cfg.Features
// order, NaN for NULL; raw labels). len(X) must equal the planned n.
func (p *PredictPlan) Fit(X [][]float64, y []float64) (*Predictor, error) {
	if err := checkRows(X, y, p.cfg.N, len(p.cfg.Features)); err != nil {
		return nil, fmt.Errorf("lsq predict: %w", err)
	}
	var f func([]float64) float64
	var err error
	if p.exact {
		f, err = p.fitKernel(X, y)
	} else {
		f, err = p.fitPrimal(X, y)
	}
	if err != nil {
		return nil, fmt.Errorf("lsq predict: %w", err)
	}
	return &Predictor{p: p, f: f}, nil
}

// Predict returns π(f(xq)) + Laplace(Δ/ε), clipped to the label range and
// mapped back to label units (both post-processing).
func (pr *Predictor) Predict(xq []float64) (float64, error) {
	p := pr.p
	if len(xq) != len(p.cfg.Features) {
		return 0, fmt.Errorf("lsq predict: query has %d feature values, want %d", len(xq), len(p.cfg.Features))
	}
	f := pr.f(xq)
	if math.IsNaN(f) {
		// Impossible (features are clipped, kernel values and coefficients
		// are finite); a data-independent value keeps the noise step from
		// failing after the charge.
		f = 0
	}
	v, err := noise.AddLaplace(mechanism.Clip(f, -1, 1), p.scale)
	if err != nil {
		return 0, fmt.Errorf("lsq predict: %w", err)
	}
	return p.lm.value(mechanism.Clip(v, -1, 1)), nil
}

// fitPrimal solves ridge regression in the finite feature space (linear,
// or RFF above ExactKernelMax).
func (p *PredictPlan) fitPrimal(X [][]float64, y []float64) (func([]float64) float64, error) {
	fm := newFeatureMap(p.scaler, p.rff)
	st := sufficientStats(X, y, fm, p.lm)
	w, err := ridgeSolve(st.s, p.lambda*float64(st.n), st.c)
	if err != nil {
		return nil, err
	}
	phi := make([]float64, fm.f)
	z := make([]float64, p.scaler.Dim())
	return func(xq []float64) float64 {
		fm.apply(phi, z, xq)
		return blas64.Dot(blas64.Vector{N: len(w), Inc: 1, Data: w}, blas64.Vector{N: len(phi), Inc: 1, Data: phi})
	}, nil
}

// kernelFunc returns the normalised translation-invariant kernel on scaled
// inputs, the same functions whose Fourier pairs mechanism.NewRFF samples.
func kernelFunc(kernel string, gamma float64) (func(a, b []float64) float64, error) {
	switch kernel {
	case KernelRBF:
		return func(a, b []float64) float64 {
			var s float64
			for j := range a {
				d := a[j] - b[j]
				s += d * d
			}
			return math.Exp(-gamma * s)
		}, nil
	case KernelLaplacian:
		return func(a, b []float64) float64 {
			var s float64
			for j := range a {
				s += math.Abs(a[j] - b[j])
			}
			return math.Exp(-gamma * s)
		}, nil
	case KernelCauchy:
		// (γ·d)² rather than γ²·d²: γ² may overflow to +Inf, and Inf·0 at
		// d = 0 would be NaN (a data-dependent failure after charging).
		return func(a, b []float64) float64 {
			s := 1.0
			for j := range a {
				gd := gamma * (a[j] - b[j])
				s /= 1 + gd*gd
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("no exact kernel %q", kernel)
}

// fitKernel solves (K + λm·I)α = y′ by Cholesky; f(x) = Σᵢ αᵢ k(xᵢ, x) is
// the exact minimiser of (1/m)Σ(f(xᵢ) − y′ᵢ)² + λ‖f‖²_K (representer
// theorem).
func (p *PredictPlan) fitKernel(X [][]float64, y []float64) (func([]float64) float64, error) {
	k, err := kernelFunc(p.cfg.Kernel, p.cfg.Gamma)
	if err != nil {
		return nil, err
	}
	m, d := len(X), p.scaler.Dim()
	z := make([][]float64, m)
	alpha := make([]float64, m)
	for i, row := range X {
		z[i] = p.scaler.Transform(nil, row)
		alpha[i] = p.lm.unit(y[i])
	}
	a := blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: make([]float64, m*m)}
	lm := p.lambda * float64(m)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			a.Data[i*m+j] = k(z[i], z[j])
		}
		a.Data[i*m+i] += lm
	}
	if _, ok := lapack64.Potrf(a); !ok {
		// Impossible under the plan's Cholesky floor; never an error (an
		// error after charging would depend on the rows).
		logrus.Error("lsq predict: kernel Cholesky failed despite the a-priori floor (please report); predicting 0")
		clear(alpha)
		return func([]float64) float64 { return 0 }, nil
	}
	lapack64.Potrs(blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: m, Stride: m, Data: a.Data},
		blas64.General{Rows: m, Cols: 1, Stride: 1, Data: alpha})
	zq := make([]float64, d)
	return func(xq []float64) float64 {
		p.scaler.Transform(zq, xq)
		var s float64
		for i, zi := range z {
			s += alpha[i] * k(zi, zq)
		}
		return s
	}, nil
}
