package lmgc

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/amp"
	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/noise"
)

// Size limits, so that a plan's memory and time stay bounded.
const (
	// MaxParams bounds m = C·D(D+1)/2, the dimension of the parameter space.
	MaxParams = 1 << 22
	// MaxClasses bounds the size of the label domain.
	MaxClasses = 1024
)

// Config is the public input of a DP_LMGC_TRAIN release.
type Config struct {
	// Stop ends the computation early when the query is killed (KILL QUERY
	// / KILL); it is checked between iterations only, and a stopped
	// training returns mechanism.ErrStopped. The zero value never stops.
	Stop     mechanism.Stop
	Epsilon  float64   // ε requested by the analyst, > 0
	Delta    float64   // δ ∈ [0, 1): 0 is the pure-ε release, > 0 the Gaussian one (§10)
	Lambda   float64   // λ, weight of the trace regulariser; 0 means DefaultLambda
	H        float64   // Huber width h; 0 means DefaultH
	N        int       // public row count n
	Features []string  // feature columns, in the order of the rows given to Train
	Lo, Hi   []float64 // public bounds per feature
	Label    string    // label column
	Classes  []string  // public label domain, ≥ 2 distinct classes
	// Method is MethodMargin (the paper's objective perturbation, also
	// when empty) or MethodStats (the same model class fitted from noisy
	// Gaussian sufficient statistics, §11). The SQL default is
	// DefaultMethod's.
	Method string
}

// Methods of DP_LMGC_TRAIN (docs/mechanisms/lmgc.md §11).
const (
	// MethodMargin is Pathak & Raj's large-margin objective, released by
	// (corrected) objective perturbation.
	MethodMargin = "margin"
	// MethodStats fits the paper's Gaussian classifier — one PSD Φ_c per
	// class, argmin_c x̃ᵀΦ_cx̃ — from the noisy sufficient statistics of
	// package gauss (shared covariance): Φ_c = D·[[P, −Pμ_c], [−μ_cᵀP,
	// μ_cᵀPμ_c − 2 log π_c]].
	MethodStats = "stats"
)

// DefaultMethod is the method used when the analyst names none. It depends
// on public quantities only — and on none of them: §11 shows that at every
// (n, d, K, ε, δ) the margin release spends its budget on m = K·D(D+1)/2
// perturbed coordinates whose signal is one averaged gradient, while the
// statistics release spends it on K(d+1) + d(d+1)/2 sums of sensitivity
// O(1), so the margin release is never the better default; it stays
// available as method=margin.
func DefaultMethod(n, d, k int, eps, delta float64) string { return MethodStats }

// Trainer is a validated release: every field is derived from public
// quantities only. A Trainer trains at most once.
type Trainer struct {
	cfg     Config
	scaler  mechanism.Scaler
	classes int
	dim     int // D = d + 1
	cal     Calibration
	step    amp.Step // the grid-safe output step (Laplace, pure ε)
	used    atomic.Bool
	stats   *gauss.Trainer // MethodStats: the statistics release (cal and step unused)
}

// Plan validates cfg and derives the calibration; it does not look at data,
// so its errors depend on public information only.
func Plan(cfg Config) (*Trainer, error) {
	if math.IsNaN(cfg.Epsilon) || math.IsInf(cfg.Epsilon, 0) || cfg.Epsilon <= 0 {
		return nil, fmt.Errorf("lmgc: epsilon must be positive and finite, got %v", cfg.Epsilon)
	}
	if math.IsNaN(cfg.Delta) || cfg.Delta < 0 || cfg.Delta >= 1 {
		return nil, fmt.Errorf("lmgc: delta must be in [0, 1), got %v", cfg.Delta)
	}
	switch cfg.Method {
	case "":
		cfg.Method = MethodMargin
	case MethodMargin:
	case MethodStats:
		return planStats(cfg)
	default:
		return nil, fmt.Errorf("lmgc: unknown method %q (want %s or %s)", cfg.Method, MethodStats, MethodMargin)
	}
	if cfg.Lambda == 0 {
		cfg.Lambda = DefaultLambda
	}
	if math.IsNaN(cfg.Lambda) || math.IsInf(cfg.Lambda, 0) || cfg.Lambda <= 0 {
		return nil, fmt.Errorf("lmgc: lambda must be positive and finite, got %v", cfg.Lambda)
	}
	if cfg.H == 0 {
		cfg.H = DefaultH
	}
	if math.IsNaN(cfg.H) || math.IsInf(cfg.H, 0) || cfg.H <= 0 {
		return nil, fmt.Errorf("lmgc: Huber width h must be positive and finite, got %v", cfg.H)
	}
	if cfg.N < 1 {
		return nil, fmt.Errorf("lmgc: the table is empty (n = %d), nothing to train on", cfg.N)
	}
	if len(cfg.Classes) < 2 {
		return nil, fmt.Errorf("lmgc: the label domain must declare at least 2 classes, got %d", len(cfg.Classes))
	}
	if len(cfg.Classes) > MaxClasses {
		return nil, fmt.Errorf("lmgc: at most %d classes are supported, got %d", MaxClasses, len(cfg.Classes))
	}
	seen := make(map[string]bool, len(cfg.Classes))
	for _, c := range cfg.Classes {
		if seen[c] {
			return nil, fmt.Errorf("lmgc: class %q is declared twice in the label domain", c)
		}
		seen[c] = true
	}
	if len(cfg.Features) == 0 {
		return nil, errors.New("lmgc: at least one feature is required")
	}
	if len(cfg.Lo) != len(cfg.Features) || len(cfg.Hi) != len(cfg.Features) {
		return nil, fmt.Errorf("lmgc: %d features but %d lower and %d upper bounds", len(cfg.Features), len(cfg.Lo), len(cfg.Hi))
	}
	for j := range cfg.Lo {
		if math.IsNaN(cfg.Lo[j]) || math.IsNaN(cfg.Hi[j]) {
			return nil, fmt.Errorf("lmgc: bounds of feature %q are NaN", cfg.Features[j])
		}
	}
	scaler, err := mechanism.NewScaler(cfg.Lo, cfg.Hi, true)
	if err != nil {
		return nil, fmt.Errorf("lmgc: %w", err)
	}
	classes, dim := len(cfg.Classes), scaler.Dim()
	if m := classes * dim * (dim + 1) / 2; m > MaxParams || dim > MaxParams {
		return nil, fmt.Errorf("lmgc: %d classes × %d features give %d parameters, more than the limit %d; use fewer features or classes",
			classes, len(cfg.Features), m, MaxParams)
	}
	var cal Calibration
	if cfg.Delta > 0 {
		cal = calibrateGauss(cfg.Epsilon, cfg.Delta, cfg.N, classes, dim, cfg.H, cfg.Lambda, MaxJacobianShare, NoiseMargin)
	} else {
		cal = calibrate(cfg.Epsilon, cfg.N, classes, dim, cfg.H, cfg.Lambda, MaxJacobianShare, NoiseMargin)
	}
	for _, v := range []float64{cal.StrongConvexity, cal.PerturbationScale, cal.OutputScale, cal.Radius, cal.PerturbationEpsilon, cal.ReleaseRadius, cal.OutputLaplaceScale} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return nil, fmt.Errorf("lmgc: epsilon %v with n = %d and %d classes gives a degenerate calibration (Δ = %v, β = %v); use a smaller epsilon",
				cfg.Epsilon, cfg.N, classes, cal.StrongConvexity, cal.PerturbationScale)
		}
	}
	if cal.Iterations > MaxIterations {
		return nil, fmt.Errorf("lmgc: h = %v, lambda = %v and epsilon = %v need %d solver iterations, more than the limit %d; use a larger h or a smaller epsilon",
			cfg.H, cfg.Lambda, cfg.Epsilon, cal.Iterations, MaxIterations)
	}
	if cal.Gaussian && !(cal.PerturbationDelta > 0 && cal.SubspaceQuantile > 0 && !math.IsInf(cal.SubspaceQuantile, 0)) {
		return nil, fmt.Errorf("lmgc: delta %v gives a degenerate Gaussian calibration; use a larger delta or delta=0", cfg.Delta)
	}
	var step amp.Step
	if cal.OutputDelta > 0 {
		step, err = amp.NewGaussian(cal.ReleaseRadius, cal.Dim, cal.OutputEpsilon, cal.OutputDelta)
	} else {
		step, err = amp.NewLaplace(cal.ReleaseRadius, cal.Dim, cal.OutputEpsilon)
	}
	if err != nil {
		return nil, fmt.Errorf("lmgc: %w", err)
	}
	if !step.Gaussian && math.Abs(step.Scale-cal.OutputLaplaceScale) > 1e-12*cal.OutputLaplaceScale {
		return nil, fmt.Errorf("lmgc: output step scale %v disagrees with the calibration %v", step.Scale, cal.OutputLaplaceScale)
	}
	if !(cal.PerturbationScale*0x1p13*float64(cal.Dim) < 1e300) {
		return nil, fmt.Errorf("lmgc: perturbation scale β = %v is too large", cal.PerturbationScale)
	}
	cfg.Features = append([]string(nil), cfg.Features...)
	cfg.Classes = append([]string(nil), cfg.Classes...)
	cfg.Lo = append([]float64(nil), cfg.Lo...)
	cfg.Hi = append([]float64(nil), cfg.Hi...)
	return &Trainer{cfg: cfg, scaler: scaler, classes: classes, dim: dim, cal: cal, step: step}, nil
}

// Calibration returns the plan's public calibration.
func (p *Trainer) Calibration() Calibration { return p.cal }

// RequestedEpsilon returns the ε the analyst asked for.
func (p *Trainer) RequestedEpsilon() float64 { return p.cfg.Epsilon }

// ChargedEpsilon returns the ε the corrected derivation supports for this
// release: ε_b + 𝒥(nΔ) + 2η + ε_out (equal to the requested ε up to
// rounding).
func (p *Trainer) ChargedEpsilon() float64 {
	if p.stats != nil {
		return p.cfg.Epsilon
	}
	return p.cal.PerturbationEpsilon + p.cal.JacobianEpsilon + 2*p.cal.CouplingSlack + p.cal.OutputEpsilon
}

// OutputNoiseScale returns the output step's public scale: the Gaussian σ
// (δ > 0) or the Laplace scale per coordinate (pure ε).
func (p *Trainer) OutputNoiseScale() float64 {
	if p.stats != nil {
		return p.stats.Scale()
	}
	return p.step.Scale
}

// ChargedDelta returns the δ of the release: δ_b + δ_out (the requested δ
// up to rounding), 0 for the pure-ε release.
func (p *Trainer) ChargedDelta() float64 {
	if p.stats != nil {
		return p.cfg.Delta
	}
	return p.cal.PerturbationDelta + p.cal.OutputDelta
}

// Events returns the events to reserve: the ideal objective perturbation
// (ε_b + 𝒥, plus the coupling slack 2η of the implemented noise; δ_b for the
// Gaussian perturbation, 0 for the pure one) and the grid-safe output step
// (Laplace ε_out, or Gaussian (ε_out, δ_out) when δ > 0).
func (p *Trainer) Events() []budget.Event {
	if p.stats != nil {
		return p.stats.Events()
	}
	return []budget.Event{
		{Kind: budget.Generic, Epsilon: p.cal.PerturbationEpsilon + p.cal.JacobianEpsilon + 2*p.cal.CouplingSlack, Delta: p.cal.PerturbationDelta},
		p.step.Event(),
	}
}

// Train fits the private classifier on the raw rows X (n × d, cfg.Features
// order, NaN for NULL) and labels y (indices into cfg.Classes; indices out
// of range are treated as class 0, the caller's rule for unknown labels).
// Its errors depend on public shapes only. A Trainer trains at most once.
func (p *Trainer) Train(X [][]float64, y []int) (*mechanism.Model, error) {
	if !p.used.CompareAndSwap(false, true) {
		return nil, errors.New("lmgc: this plan has already been used for a release")
	}
	if p.stats != nil {
		return p.trainStats(X, y)
	}
	m, _, err := p.train(X, y, trainOptions{})
	return m, err
}

// trainOptions are for tests and experiments inside the package only; the
// SQL layer reaches Train, which always adds both noises.
type trainOptions struct {
	noiseOff bool    // b = 0 and no output step
	delta    float64 // overrides Δ when > 0 (noise-off experiments)
	target   float64 // overrides the solver's distance target when > 0
	iters    int     // overrides the iteration count when > 0
}

func (p *Trainer) train(X [][]float64, y []int, opt trainOptions) (*mechanism.Model, solution, error) {
	n, C, D := p.cfg.N, p.classes, p.dim
	if len(X) != n || len(y) != n {
		return nil, solution{}, fmt.Errorf("lmgc: plan is for n = %d rows, got %d rows and %d labels", n, len(X), len(y))
	}
	d := len(p.cfg.Features)
	xs := make([]float64, n*D)
	for i, row := range X {
		if len(row) != d {
			return nil, solution{}, fmt.Errorf("lmgc: row %d has %d values, want %d features", i, len(row), d)
		}
		p.scaler.Transform(xs[i*D:(i+1)*D], row)
	}
	labels := make([]int, n)
	for i, c := range y {
		if c >= 0 && c < C {
			labels[i] = c
		}
	}
	cal := p.cal
	delta := cal.StrongConvexity
	iters := cal.Iterations
	if opt.delta > 0 || opt.target > 0 {
		if opt.delta > 0 {
			delta = opt.delta
		}
		target := cal.Radius / 2
		if opt.target > 0 {
			target = opt.target
		}
		iters = aprioriIterations(cal.GradientBound, delta, float64(C)*cal.Curvature+delta, target)
	}
	if opt.iters > 0 {
		iters = opt.iters
	}
	var b []float64
	if !opt.noiseOff {
		b = p.objectiveNoise()
	}
	prob := newProblem(C, D, xs, labels, p.cfg.H, p.cfg.Lambda, delta, b)
	prob.stop = p.cfg.Stop
	sol := prob.solve(float64(C)*cal.Curvature+delta, iters)
	if err := p.cfg.Stop.Err(); err != nil {
		return nil, solution{}, err
	}
	phi := append([]float64(nil), sol.phi...)
	if !opt.noiseOff {
		if err := p.outputStep(phi); err != nil {
			return nil, solution{}, fmt.Errorf("lmgc: %w", err)
		}
	}
	projectPSD(phi, C, D)
	return p.model(phi), sol, nil
}

// outputStep releases the upper triangle of every block (m coordinates,
// ‖upper(Φ̂ − Φ*)‖₂ ≤ ‖Φ̂ − Φ*‖_F ≤ r) through the grid-safe Laplace step
// and mirrors it: the noise is the last operation on the released values
// (the PSD projection after it is post-processing).
func (p *Trainer) outputStep(phi []float64) error {
	C, D := p.classes, p.dim
	up := make([]float64, 0, p.cal.Dim)
	for c := 0; c < C; c++ {
		blk := phi[c*D*D : (c+1)*D*D]
		for i := 0; i < D; i++ {
			up = append(up, blk[i*D+i:(i+1)*D]...)
		}
	}
	if err := p.step.Apply(up); err != nil {
		return err
	}
	k := 0
	for c := 0; c < C; c++ {
		blk := phi[c*D*D : (c+1)*D*D]
		for i := 0; i < D; i++ {
			for j := i; j < D; j++ {
				blk[i*D+j], blk[j*D+i] = up[k], up[k]
				k++
			}
		}
	}
	return nil
}

// objectiveNoise draws the perturbation b ∈ 𝒮 with density
// ∝ exp(−‖b‖_F/β): in svec coordinates v = β·‖h‖·g with h ∈ ℝ^(m+1) and
// g ∈ ℝ^m standard normal. Its direction g/‖g‖ is uniform and its norm
// β·√(χ²_{m+1}·χ²_m) has the law β·Gamma(m) (Wilks' duplication identity
// 2√(Gamma(a)·Gamma(a+½)) ~ Gamma(2a) with a = m/2), so v has exactly the
// density of the ideal mechanism; no normalisation by ‖g‖ is needed, so a
// small perturbation of the normals moves v by a bounded amount
// (samplingRadius). The normals are the coupled draws of package noise; v
// is mapped to 𝒮 through the isometry svec⁻¹ (off-diagonals divided by √2).
//
// With δ > 0 (Calibration.Gaussian) b ~ N(0, σ²I_m) in svec coordinates:
// v = σ·g with g ∈ ℝ^m the coupled normals (§10).
func (p *Trainer) objectiveNoise() []float64 {
	C, D, m := p.classes, p.dim, p.cal.Dim
	var g []float64
	var scale float64
	if p.cal.Gaussian {
		g = noise.StandardNormalVec(m)
		scale = p.cal.PerturbationScale
	} else {
		nrm := noise.StandardNormalVec(2*m + 1)
		var h []float64
		h, g = nrm[:m+1], nrm[m+1:]
		var sq float64
		for _, v := range h {
			sq += v * v
		}
		scale = p.cal.PerturbationScale * math.Sqrt(sq)
	}
	out := make([]float64, C*D*D)
	k := 0
	for c := 0; c < C; c++ {
		blk := out[c*D*D : (c+1)*D*D]
		for i := 0; i < D; i++ {
			blk[i*D+i] = scale * g[k]
			k++
			for j := i + 1; j < D; j++ {
				blk[i*D+j] = scale * g[k] / math.Sqrt2
				blk[j*D+i] = blk[i*D+j]
				k++
			}
		}
	}
	return out
}

// model wraps released matrices with the public configuration.
func (p *Trainer) model(phi []float64) *mechanism.Model {
	C, D := p.classes, p.dim
	mats := make([][]float64, C)
	for c := range mats {
		mats[c] = append([]float64(nil), phi[c*D*D:(c+1)*D*D]...)
	}
	cal := p.cal
	return &mechanism.Model{
		Kind:     mechanism.KindLMGC,
		Label:    p.cfg.Label,
		Features: append([]string(nil), p.cfg.Features...),
		Classes:  append([]string(nil), p.cfg.Classes...),
		Scaler:   p.scaler,
		Phi:      mats,
		Params: map[string]float64{
			"epsilon":              p.cfg.Epsilon,
			"epsilon_charged":      p.ChargedEpsilon(),
			"delta":                p.cfg.Delta,
			"delta_charged":        p.ChargedDelta(),
			"epsilon_perturbation": cal.PerturbationEpsilon,
			"epsilon_jacobian":     cal.JacobianEpsilon,
			"epsilon_output":       cal.OutputEpsilon,
			"coupling_slack":       cal.CouplingSlack,
			"release_radius":       cal.ReleaseRadius,
			"output_laplace_scale": cal.OutputLaplaceScale,
			"output_noise_scale":   p.step.Scale,
			"iterations":           float64(cal.Iterations),
			"lambda":               p.cfg.Lambda,
			"h":                    p.cfg.H,
			"n":                    float64(p.cfg.N),
			"strong_convexity":     cal.StrongConvexity,
			"sensitivity":          cal.Sensitivity,
			"perturbation_scale":   cal.PerturbationScale,
			"output_scale":         cal.OutputScale,
			"radius":               cal.Radius,
		},
	}
}
