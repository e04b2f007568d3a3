package lsq

import "math"

// The default call: DP_LSQ with no method, λ or η given and the linear
// kernel. The method and λ are chosen from public quantities only — n, F
// (features + intercept), ε and δ — by a rule read off the measurements of
// docs/results/lsq_defaults.md (synthetic data and inner splits of the
// diabetes training part; no test split). Everything depends on
//
//	t = n·ε/F²,
//
// the signal-to-noise scale of the releases: objective perturbation's noise
// in θ along a data direction is β/(n/F) with β ∝ √F/ε (η = √F), i.e. its
// squared prediction error relative to the signal falls like F²/(nε).
//
//	δ > 0, t ≥ ObjectiveMinT: method=objective, extra ridge Δ_r =
//	    clamp(16/√t, 1/64, 4) × the Kifer/Fukuchi auto ridge √F·β/η;
//	δ > 0, t < ObjectiveMinT: method=output (Gaussian), λ = clamp(3/t, 10⁻⁴, 10);
//	δ = 0:                    method=output (Laplace),  λ = clamp(1/√t, 10⁻⁴, 10).
//
// Large λ at small t shrinks the model towards the label midpoint, which is
// what the measurements favour there: no release can learn the slope, and
// the shrunk model is at most as bad as the midpoint predictor.
const (
	// ObjectiveMinT is the smallest t = nε/F² for which the default is
	// objective perturbation (δ > 0).
	ObjectiveMinT = 15.0
	ruleLambdaMin = 1e-4
	ruleLambdaMax = 10.0
	ruleRidgeMin  = 1.0 / 64
	ruleRidgeMax  = 4.0
)

// defaultRule is the public choice of the default call.
type defaultRule struct {
	t         float64
	method    string
	lambda    float64 // output: λ
	ridgeMult float64 // objective: multiple of the auto ridge
}

// chooseDefault applies the rule to public n, F (d + 1), ε and δ.
func chooseDefault(n, f int, eps, delta float64) defaultRule {
	t := float64(n) * eps / float64(f*f)
	clamp := func(v, lo, hi float64) float64 { return math.Min(hi, math.Max(lo, v)) }
	switch {
	case delta > 0 && t >= ObjectiveMinT:
		return defaultRule{t: t, method: MethodObjective, ridgeMult: clamp(16/math.Sqrt(t), ruleRidgeMin, ruleRidgeMax)}
	case delta > 0:
		return defaultRule{t: t, method: MethodOutput, lambda: clamp(3/t, ruleLambdaMin, ruleLambdaMax)}
	default:
		return defaultRule{t: t, method: MethodOutput, lambda: clamp(1/math.Sqrt(t), ruleLambdaMin, ruleLambdaMax)}
	}
}

// isDefaultCall reports whether cfg leaves method, λ and η to the rule.
func isDefaultCall(cfg Config) bool {
	return cfg.Method == "" && cfg.Lambda == 0 && cfg.Eta == 0 && (cfg.Kernel == "" || cfg.Kernel == KernelLinear)
}

// defaultCenter is the default call's share ρ of ε for the label mean
// (center.go), from public n, F, ε and δ only (docs/results/lsq_defaults.md):
//
//	δ > 0, n·ε·(1 − CenterShareObjective)/F² ≥ ObjectiveMinT: ρ = CenterShareObjective
//	    (objective perturbation learns the intercept itself; a small share
//	    keeps it near the mean when the ridge shrinks);
//	δ > 0 otherwise: ρ = CenterShareOutput (the model is shrunk hard
//	    towards the centre, which should be the mean);
//	δ = 0: ρ = CenterShareLaplace when the mean's Laplace scale
//	    2/(n·ρ·ε) in label units is at most CenterMaxScale, else none.
func defaultCenter(n, f int, eps, delta float64) float64 {
	if delta > 0 {
		if float64(n)*eps*(1-CenterShareObjective)/float64(f*f) >= ObjectiveMinT {
			return CenterShareObjective
		}
		return CenterShareOutput
	}
	if 2/(float64(n)*CenterShareLaplace*eps) <= CenterMaxScale {
		return CenterShareLaplace
	}
	return CenterOff
}

const (
	CenterShareObjective = 0.1
	CenterShareOutput    = 0.5
	CenterShareLaplace   = 0.25
	// CenterMaxScale is the largest Laplace scale of the label mean (label
	// units, range [−1, 1]) for which the pure-ε default call centres.
	CenterMaxScale = 0.05
)
