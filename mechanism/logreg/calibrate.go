package logreg

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Defaults and limits: public constants (docs/mechanisms/logreg.md §5),
// chosen on synthetic data and TRAINING splits only.
const (
	// DefaultSteps is the smallest default T for δ > 0 (the number of noisy
	// gradient steps); defaultSteps raises it to ⌈τ/MaxStepSize⌉ so the
	// horizon cap rarely binds, up to MaxDefaultSteps and DefaultWork.
	DefaultSteps = 100
	// MaxDefaultSteps and DefaultWork bound the default T (δ > 0): at most
	// 1000 steps and T·n·K′·F ≤ 10¹⁰ multiply-adds (a few seconds).
	MaxDefaultSteps = 1000
	DefaultWork     = 1e10
	// DefaultStepsPure is T for δ = 0. Laplace noise composes linearly in
	// T, and one step was best on every tuning set: θ₁ = −(η/n)·Ĝ(0), the
	// noisy class-centroid direction (argmax and sign do not depend on η).
	DefaultStepsPure = 1
	// HorizonScale is c in the default horizon τ = c·n·R/(L_C·√(K′F)), the
	// noise-dominated optimum ‖θ*‖·R·n/(2L_C√(K′F)) of the averaged-iterate
	// bound with the public prior ‖θ*‖ = 2c.
	HorizonScale = 30.0
	// ClipFraction sets the default per-row clipping bound C = ClipFraction·L
	// on ‖∇ℓ(θ; x, y)‖₂ (L = √2 multinomial, 1 binary).
	ClipFraction = 0.25
	// MinHorizon and MaxStepSize clamp the default τ to [1, MaxStepSize·T]:
	// beyond a step of a few hundred, plain GD on these losses oscillates
	// even without noise (synthetic n = 10⁵, K = 20: accuracy 0.47 at
	// τ = 10⁴–3·10⁴, 0.42 at 5·10⁵ with or without noise).
	MinHorizon  = 1.0
	MaxStepSize = 200.0
	// NesterovFactor sets the accelerated default (δ > 0, steps and horizon
	// not given, StepRule ""): where the plain rule's T₀ is capped below
	// ⌈τ/MaxStepSize⌉ (large n·R: T₀ = MaxDefaultSteps or the work cap, the
	// step cap binds and the noise is small against the signal), Nesterov's
	// method with the same step runs T = ⌈NesterovFactor·√T₀⌉ steps (the
	// accelerated rate L‖θ*‖²/T² against plain GD's L‖θ*‖²/T). Elsewhere the
	// plain rule is kept: momentum lost up to 1.3 points where T₀ was set
	// by the horizon (results/logreg.md §4). logreg.md §8.
	NesterovFactor = 2.0
	// PreconditionedSteps is the smallest T of the preconditioned default
	// (δ > 0, K = 2, steps and horizon not given, StepRule ""; precondSteps)
	// where the plain rule's T₀ is capped (the regime NesterovFactor was
	// written for): accelerated steps preconditioned by Böhning's bound
	// (logreg.md §13), chosen on the synthetic training sets of
	// results/logreg.md §5 (T ∈ {8, 12, 16, 24}).
	// Softmax keeps the Nesterov default: its bound ½(I − 11ᵀ/K) is K/2
	// times the curvature at p = 1/K, and 12–24 steps lost 0.3–1 point.
	// An explicit StepPreconditioned without steps gets the same T.
	PreconditionedSteps = 12
	// PrecondRidgeRatio is q₀ in precondSteps: up to a noise ridge of q₀
	// times the prior curvature, PreconditionedSteps steps suffice; beyond
	// it T grows as √(q/q₀) (d = 40: q ≈ 0.3, T = 22).
	PrecondRidgeRatio = 0.1
	// GramShare is ρ_H, the public share of the total zCDP ρ spent on the
	// release of XᵀX (logreg.md §13): the gradient σ grows by
	// 1/√(1 − ρ_H) = 1.054, the Gram noise is Δ_H/(√ρ_H·R).
	GramShare = 0.1
	// gramTail is t in the bound ‖N‖₂ ≤ σ_H·(√(2F) + t) on the Gram
	// noise, exceeded with probability ≤ e^(−t²/2) = 10⁻³ (logreg.md §13).
	// It is a utility bound only: the eigenvalue clamp keeps the
	// preconditioner positive definite whatever the noise drew.
	gramTail = 3.7169221888498383 // √(2·ln 1000)
	// MaxSteps bounds T.
	MaxSteps = 10000
	// MaxClasses bounds the label domain.
	MaxClasses = 1000
	// MaxFeatures bounds d.
	MaxFeatures = 10000
	// MaxEntries bounds n·F, the size of the scaled feature cache.
	MaxEntries = 1 << 27
	// MaxWork bounds T·n·K′·F, the multiply-adds of training (about a
	// minute on one core at the limit).
	MaxWork = 1e11
	// chunkRows is the number of rows per gradient block; it enters the
	// rounding bound, so it is a constant.
	chunkRows = 4096
)

// unitRoundoff is u = 2⁻⁵³ for float64.
const unitRoundoff = 0x1p-53

// gamma is Higham's γ_k = k·u/(1 − k·u).
func gamma(k float64) float64 {
	ku := k * unitRoundoff
	return ku / (1 - ku)
}

// kappaHat bounds the computed ‖x‖₂ of a scaled row (mechanism.Prepared
// clamps to [−1, 1] and multiplies by fl(1/fl(√F)): each coordinate is at
// most (1 + u)³/√F, so ‖x‖₂ ≤ 1 + 4u and ‖x‖₁ ≤ √F(1 + 4u)).
const kappaHat = 1 + 0x1p-50

// sensitivity returns the ℓ₂ and ℓ₁ sensitivities of one computed gradient
// sum G(θ) = Σᵢ sᵢ·r̂ᵢ ⊗ xᵢ under replace-one neighbours, for a fixed θ, and
// the effective per-row bound L_C = min(L, C).
//
// Exact arithmetic: for softmax (K′ = K ≥ 3 vectors) rᵢ = pᵢ − e_{yᵢ} with
// ‖r‖₂ ≤ √2 and ‖r‖₁ ≤ 2; for binary logistic (K′ = 1) r = σ(s) − y ∈
// [−1, 1]. Each row's term is clipped, sᵢ = min(1, C/(‖rᵢ‖‖xᵢ‖)), so its ℓ₂
// norm is at most min(L, C) and its ℓ₁ norm ‖r‖₁‖x‖₁·s is at most
// min(r₁√F, C√(K′F)) (‖r‖₁ ≤ √K′‖r‖₂, ‖x‖₁ ≤ √F‖x‖₂). The replaced row moves
// G by at most twice the row bound.
//
// Floating point: the computed residuals satisfy the unclipped bounds up
// to 1 + γ_{K+4} (softmax weights are non-negative and sum to at most
// 1 + γ_{K+2}); the computed norms err by γ_{K′+2} and γ_{F+2}, the scale
// and the product by a few more roundings, so a clipped row has norm at
// most C(1 + γ_{K′+F+10}). The computed sum differs from the exact sum of
// the computed terms by at most γ_m·Σᵢ‖termᵢ‖ ≤ γ_m·n·(row bound) in ℓ₂
// (and in ℓ₁), m = chunkRows + ⌈n/chunkRows⌉ + 2 the longest chain of
// additions (a block's rows in order, then the blocks in order). Both
// tables' errors are added.
func sensitivity(n, f, kPrime int, binary bool, clip float64) (l2, l1, lipC float64) {
	lip, r1 := math.Sqrt2, 2.0
	if binary {
		lip, r1 = 1, 1
	}
	fv, kv := float64(f), float64(kPrime)
	grow := (1 + gamma(kv+4)) * kappaHat
	cgrow := 1 + gamma(kv+fv+10)
	l2Row := math.Min(lip*grow, clip*cgrow)
	l1Row := math.Min(r1*math.Sqrt(fv)*grow, clip*math.Sqrt(kv*fv)*cgrow)
	m := float64(chunkRows) + math.Ceil(float64(n)/chunkRows) + 2
	g := gamma(m)
	l2 = 2*l2Row + 2*g*float64(n)*l2Row
	l1 = 2*l1Row + 2*g*float64(n)*l1Row
	return l2, l1, math.Min(lip, clip)
}

// plan is the calibrated release: T steps of noise σ (Gaussian) or b
// (Laplace) on the gradient sum.
type plan struct {
	steps   int
	horizon float64 // τ = η·T
	eta     float64 // step size η
	l2, l1  float64 // sensitivities of one gradient sum
	lip     float64 // L_C = min(L, C), the per-row gradient bound
	clip    float64 // C
	sigma   float64 // Gaussian σ per coordinate and step (δ > 0)
	scale   float64 // Laplace b per coordinate and step (δ = 0)
	ratio   float64 // the composed Gaussian ratio √T·Δ₂/σ charged (δ > 0)
	snr     float64 // R (or its Laplace equivalent) used by the default τ
	rule    string  // StepPlain, StepNesterov or StepPreconditioned
	// Preconditioned rule (logreg.md §13): the Gram release and the ridge.
	gramL2    float64 // Δ_H, ℓ₂ sensitivity of the weighted packed XᵀX
	gramSigma float64 // σ_H per packed coordinate
	gramShare float64 // ρ_H
	ridge     float64 // λ of P = (c·X̂ᵀX̂/n + λI)⁻¹
	l2reg     float64 // 1/τ, the ridge of the objective (part of λ)
	events    []budget.Event
}

// calibrate computes the noise for T steps and the default horizon.
func calibrate(cfg Config, f, kPrime int, binary bool) (plan, error) {
	p := plan{steps: cfg.Steps}
	lip := math.Sqrt2
	if binary {
		lip = 1
	}
	p.clip = cfg.Clip
	if p.clip == 0 {
		p.clip = ClipFraction * lip
	}
	if !(p.clip > 0) || math.IsInf(p.clip, 0) {
		return plan{}, fmt.Errorf("clip must be positive and finite (or 0 for the default), got %v", cfg.Clip)
	}
	p.rule = cfg.StepRule
	if p.rule == "" {
		p.rule = StepPlain
	}
	// eta0 is the step of the plain default plan when the accelerated rule
	// replaces it (0 otherwise).
	var eta0 float64
	if p.rule == StepPreconditioned && !(cfg.Delta > 0) {
		return plan{}, fmt.Errorf("step rule %q needs delta > 0 (its XᵀX release is Gaussian)", StepPreconditioned)
	}
	if p.steps == 0 {
		p.steps = DefaultStepsPure
		if cfg.Delta > 0 {
			var err error
			if p.steps, err = defaultSteps(cfg, f, kPrime, math.Min(lip, p.clip)); err != nil {
				return plan{}, err
			}
			if cfg.StepRule == "" && cfg.Horizon == 0 && p.steps > DefaultSteps {
				unit, err := mechanism.GaussianSigma(1, cfg.Epsilon, cfg.Delta)
				if err != nil {
					return plan{}, err
				}
				t0 := float64(p.steps)
				tau := defaultHorizon(cfg.N, f, kPrime, math.Min(lip, p.clip), 1/unit)
				if tau > MaxStepSize*t0 {
					// The step cap binds: T₀ = 1000 or the work cap stops
					// plain GD short of its horizon. The plain plan's step
					// MaxStepSize is kept; the number of steps and the
					// update change.
					eta0 = MaxStepSize
					p.steps = int(math.Ceil(NesterovFactor * math.Sqrt(t0)))
					p.rule = StepNesterov
					if binary {
						// Binary: Böhning's ¼ is the logistic curvature
						// at p = ½, so the preconditioned step is close to
						// Newton's (§13).
						p.rule = StepPreconditioned
						p.steps = precondSteps(cfg, f, t0, unit)
					}
				}
			}
			if cfg.StepRule == StepPreconditioned {
				unit, err := mechanism.GaussianSigma(1, cfg.Epsilon, cfg.Delta)
				if err != nil {
					return plan{}, err
				}
				p.steps = precondSteps(cfg, f, float64(p.steps), unit)
			}
		}
	}
	if p.steps < 1 || p.steps > MaxSteps {
		return plan{}, fmt.Errorf("steps must be in [1, %d], got %d", MaxSteps, p.steps)
	}
	T := float64(p.steps)
	p.l2, p.l1, p.lip = sensitivity(cfg.N, f, kPrime, binary, p.clip)
	if cfg.Delta > 0 {
		// T adaptive Gaussian releases of ratio Δ₂/σ compose to
		// ½T(Δ₂/σ)²-zCDP: one Gaussian event of ratio √T·Δ₂/σ.
		sigma, err := mechanism.GaussianSigma(math.Sqrt(T)*p.l2, cfg.Epsilon, cfg.Delta)
		if err != nil {
			return plan{}, err
		}
		ratio := math.Sqrt(T) * p.l2 / sigma
		if p.rule == StepPreconditioned {
			// One Gaussian event of ratio R = √T·Δ₂/σ₀ (σ₀ the single-rule
			// σ): the Gram release takes ρ_H·R², the T gradients the rest.
			p.gramShare = GramShare
			p.gramL2 = gramSensitivity(cfg.N, f)
			p.gramSigma = p.gramL2 / (math.Sqrt(p.gramShare) * ratio)
			sigma /= math.Sqrt(1 - p.gramShare)
			if p.gramL2/p.gramSigma < noise.GaussianMinRatio {
				return plan{}, fmt.Errorf("XᵀX noise multiplier σ_H/Δ_H = %v exceeds what the Gaussian sampler supports", p.gramSigma/p.gramL2)
			}
			if err := noise.AddGaussianVec(nil, p.gramSigma); err != nil {
				return plan{}, fmt.Errorf("XᵀX noise scale out of range: %w", err)
			}
			ratio = math.Hypot(math.Sqrt(T)*p.l2/sigma, p.gramL2/p.gramSigma)
		}
		if p.l2/sigma < noise.GaussianMinRatio {
			return plan{}, fmt.Errorf("noise multiplier σ/Δ₂ = %v per step exceeds what the Gaussian sampler supports; lower steps", sigma/p.l2)
		}
		if err := noise.AddGaussianVec(nil, sigma); err != nil {
			return plan{}, fmt.Errorf("noise scale out of range: %w", err)
		}
		p.sigma = sigma
		p.ratio = ratio
		p.events = []budget.Event{mechanism.GaussianEvent(ratio, 1, cfg.Epsilon, cfg.Delta)}
		unit, err := mechanism.GaussianSigma(1, cfg.Epsilon, cfg.Delta)
		if err != nil {
			return plan{}, err
		}
		p.snr = 1 / unit
	} else {
		// T Laplace releases of ε/T each (sequential composition).
		epsStep := cfg.Epsilon / T
		if min := noise.LaplaceMinEpsilon(kPrime * f); epsStep < min {
			return plan{}, fmt.Errorf("epsilon per step %v is below the Laplace sampler's minimum %v; lower steps", epsStep, min)
		}
		p.scale = p.l1 / epsStep
		if err := noise.AddLaplaceVec(nil, p.scale); err != nil {
			return plan{}, fmt.Errorf("noise scale out of range: %w", err)
		}
		p.events = make([]budget.Event, p.steps)
		for i := range p.events {
			p.events[i] = budget.Event{Kind: budget.Laplace, Epsilon: epsStep}
		}
		// The Gaussian SNR with the same per-step noise variance 2b²:
		// σ_g = 2L√T/R ⇔ R = 2L√T/(√2·b).
		p.snr = 2 * p.lip * math.Sqrt(T) / (math.Sqrt2 * p.scale)
	}
	p.horizon = cfg.Horizon
	if eta0 > 0 {
		p.horizon = eta0 * T
	} else if p.horizon == 0 {
		p.horizon = math.Min(MaxStepSize*T, defaultHorizon(cfg.N, f, kPrime, p.lip, p.snr))
	}
	if !(p.horizon > 0) || math.IsInf(p.horizon, 0) {
		return plan{}, fmt.Errorf("horizon must be positive and finite, got %v", p.horizon)
	}
	p.eta = p.horizon / T
	if p.rule == StepPreconditioned {
		// The step is P·(Ĝ/n + θ/τ) (factor 1): τ sets the ridge 1/τ of
		// the objective instead. Default τ: the horizon the plain rule
		// reaches, min(τ*, MaxStepSize·T₀) — where the cap binds, the
		// implicit ridge of the old default's early stop (§13).
		if cfg.Horizon == 0 {
			t0, err := defaultSteps(cfg, f, kPrime, p.lip)
			if err != nil {
				return plan{}, err
			}
			p.horizon = math.Min(MaxStepSize*float64(t0), defaultHorizon(cfg.N, f, kPrime, p.lip, p.snr))
		}
		p.eta = 1
		p.l2reg = 1 / p.horizon
		p.ridge = gramRidge(cfg.N, f, binary, p.gramSigma, p.horizon)
	}
	return p, nil
}

// precondSteps is T of the preconditioned rule when none is given:
// ⌈PreconditionedSteps·max(1, √(q/PrecondRidgeRatio))⌉, at most
// ⌈NesterovFactor·√T₀⌉ (the accelerated plain count it replaces), where
// q = σ_H(√(2F) + t)·3F/n is the noise ridge of gramRidge relative to the
// curvature c/(3F) of features spread evenly over their bounds (a public
// prior): the ridge slows the directions it dominates, and accelerated
// steps need √ of the condition number (logreg.md §13). All inputs are
// public; unit is GaussianSigma(1, ε, δ), so σ_H = Δ_H·unit/√ρ_H.
func precondSteps(cfg Config, f int, t0, unit float64) int {
	sigmaH := gramSensitivity(cfg.N, f) * unit / math.Sqrt(GramShare)
	q := sigmaH * (math.Sqrt(2*float64(f)) + gramTail) * 3 * float64(f) / float64(cfg.N)
	t := math.Ceil(PreconditionedSteps * math.Sqrt(math.Max(1, q/PrecondRidgeRatio)))
	return int(math.Max(1, math.Min(t, math.Ceil(NesterovFactor*math.Sqrt(t0)))))
}

// gramSensitivity is Δ_H, the ℓ₂ sensitivity under replace-one of the
// released vector v(S) = (S_ii; fl(√2)·S_ij, i < j) of the computed
// S = Σᵣ x̂ᵣx̂ᵣᵀ (logreg.md §13). Exact arithmetic: v weights each
// off-diagonal by √2, so ‖v(D)‖ = ‖D‖_F for D = aaᵀ − bbᵀ, and
// ‖D‖_F² = ‖a‖⁴ + ‖b‖⁴ − 2(a·b)² ≤ 2κ̂⁴. Floating point: every entry of
// S is a chain of at most m = chunkRows + ⌈n/chunkRows⌉ + 2 additions of
// rounded products, so the computed S̃ = S + E with ‖E‖_F ≤ γ_{m+1}·Σᵣ‖x̂ᵣ‖²
// ≤ γ_{m+1}·n·κ̂²; the weighting rounds once more (relative u on
// ‖S̃‖_F ≤ (1 + γ_{m+1})nκ̂²) and fl(√2) ≤ √2(1 + u). Both tables' errors
// are added: Δ_H = (1 + u)·κ̂²·(√2 + 2n·γ_{m+2}).
func gramSensitivity(n, f int) float64 {
	m := float64(chunkRows) + math.Ceil(float64(n)/chunkRows) + 2
	k2 := kappaHat * kappaHat * (1 + unitRoundoff)
	return (1 + unitRoundoff) * k2 * (math.Sqrt2 + 2*float64(n)*gamma(m+2))
}

// gramRidge is λ = c·‖N‖/n + 1/τ: the first term is the high-probability
// bound σ_H·(√(2F) + t) on the Gram noise's spectral norm (t = gramTail:
// the weighted release makes N a GOE-scaled matrix — off-diagonal
// variance σ_H²/2, diagonal σ_H² — so E‖N‖₂ ≤ √(2F)·σ_H, and ‖N‖₂ ≤ ‖N‖_F
// = ‖ξ‖₂ is 1-Lipschitz in the released noise ξ, hence Gaussian
// concentration), times the Böhning factor c (¼ binary, ½ softmax) over
// n, so that c·X̂ᵀX̂/n + λI ⪰ c·XᵀX/n except with probability 10⁻³ and the
// preconditioned step stays a majorisation step; 1/τ is the objective's
// ridge (calibrate), from public n, R, F, K only.
func gramRidge(n, f int, binary bool, sigmaH, horizon float64) float64 {
	bound := sigmaH * (math.Sqrt(2*float64(f)) + gramTail)
	return bohningFactor(binary)*bound/float64(n) + 1/horizon
}

// bohningFactor is c in Böhning's bound on the Hessian of the mean loss,
// ∇²J ⪯ c·(I − 11ᵀ/K) ⊗ XᵀX/n: ¼ for the logistic loss (σ(1 − σ) ≤ ¼), ½
// for the softmax loss (diag p − ppᵀ ⪯ ½(I − 11ᵀ/K), Böhning 1992).
func bohningFactor(binary bool) float64 {
	if binary {
		return 0.25
	}
	return 0.5
}

// defaultSteps is T for δ > 0 when the caller gives none: enough steps that
// the step η = τ/T stays at most MaxStepSize, i.e. ⌈τ/MaxStepSize⌉ with τ the
// requested or default horizon, at least DefaultSteps and at most
// MaxDefaultSteps and DefaultWork/(n·K′·F) (when that bound is below
// DefaultSteps, DefaultSteps; Plan's MaxWork check still applies). All
// inputs are public. More steps cost no privacy at a fixed horizon: the
// Gaussian ratio is charged for √T·Δ₂ whatever T is, and σ grows as √T
// while the step shrinks as 1/T.
func defaultSteps(cfg Config, f, kPrime int, lipC float64) (int, error) {
	tau := cfg.Horizon
	if tau == 0 {
		unit, err := mechanism.GaussianSigma(1, cfg.Epsilon, cfg.Delta)
		if err != nil {
			return 0, err
		}
		tau = defaultHorizon(cfg.N, f, kPrime, lipC, 1/unit)
	}
	hi := math.Min(MaxDefaultSteps, math.Floor(DefaultWork/(float64(cfg.N)*float64(kPrime)*float64(f))))
	steps := math.Min(math.Ceil(tau/MaxStepSize), hi)
	return int(math.Max(steps, DefaultSteps)), nil
}

// defaultHorizon is τ = HorizonScale·n·R/(L_C·√(K′F)), at least
// MinHorizon (calibrate also caps it at MaxStepSize·T): the horizon that balances the two terms
// ‖θ*‖²/(2τ) and τ·K′F·2L_C²/(R²n²) of the averaged-iterate bound (§7) when
// the noise dominates, with ‖θ*‖ = 2·HorizonScale.
func defaultHorizon(n, f, kPrime int, lip, snr float64) float64 {
	tau := HorizonScale * float64(n) * snr / (lip * math.Sqrt(float64(kPrime*f)))
	return math.Max(MinHorizon, tau)
}
