package lsq

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism/amp"
	"github.com/dpsql/dpsql/noise"
)

// kappaHat bounds ‖φ(x)‖₂ for the computed feature map: κ = 1 in exact
// arithmetic (mechanism.Scaler, mechanism.RFF); rounding in the scaling and
// in sin/cos moves it by a few units in the last place, far below 10⁻¹⁵.
const kappaHat = 1 + 1e-15

// outputPlan is the public part of the model release (output perturbation).
type outputPlan struct {
	lambda   float64 // λ of (1/n)Σ(⟨w, φᵢ⟩ − y′ᵢ)² + λ‖w‖²
	delta2   float64 // ℓ₂ sensitivity of the minimiser, rounding included
	tau      float64 // bound on the floating-point error of the computed minimiser
	gaussian bool    // δ > 0: discrete Gaussian (CKS zCDP calibration); else Laplace per coordinate
	scale    float64 // Laplace scale b per coordinate, or Gaussian σ
}

// lemma2Sensitivity is the ℓ₂ sensitivity of the ridge minimiser
// w = argmin (1/m)Σ(⟨w, φᵢ⟩ − yᵢ)² + λ‖w‖² under replace-one neighbours,
// from Nie & Wang's Lemma 2 argument with ‖φ‖ ≤ κ, |y| ≤ M and
// ‖w‖ ≤ R = M/√λ (λ‖w‖² ≤ J(w) ≤ J(0) ≤ M²):
//
//	‖w − w′‖₂ ≤ 2κ(κR + M)/(λm).
//
// Nie & Wang then relax κR + M ≤ R(κ + 1), which needs R ≥ M, i.e. λ ≤ 1;
// the form used here is tighter and needs no condition on λ.
func lemma2Sensitivity(kappa, m, lambda float64, n int) float64 {
	r := m / math.Sqrt(lambda)
	return 2 * kappa * (kappa*r + m) / (lambda * float64(n))
}

// ridgeRoundingBound bounds ‖ŵ − w*‖₂ for the ridge minimiser computed in
// float64 from n rows of F features (‖φ‖ ≤ 1, |y| ≤ 1), with ‖w*‖ ≤ R.
// Accumulating S = Σφφᵀ and c = Σyφ in any order errs by at most γ_n·n in
// spectral / Euclidean norm; forming S + λnI and the Cholesky solve add a
// backward error E_C with ‖E_C‖ ≤ γ_{3F+1}·tr(S + λnI)·(1 + γ_{3F+1}) ≤
// 1.01·γ_{3F+1}·n(1 + Fλ) (Higham, Thm 10.4). With ê the total relative to
// n, ‖ŵ − w*‖ ≤ (γ_n + ê·R)/(λ − ê). It returns an error when the bound is
// not meaningful (ê ≥ λ/2: λ too small for float64 at this n and F).
//
// The accumulation error uses the depth of the summation tree,
// γ_{d+1} with d = statsDepth(n) (two-level blocked sums), instead of γ_n.
// λ must also clear the Cholesky floor for trace n(1 + Fλ) (Demmel's
// condition, so that the factorisation cannot fail on any data).
func ridgeRoundingBound(n, f int, lambda, r float64) (float64, error) {
	return ridgeRoundingBoundDepth(statsDepth(n), n, f, lambda, r)
}

// ridgeRoundingBoundDepth is ridgeRoundingBound for statistics summed with
// depth dep (sumDepth: the embedded blocked sums or a backend's any order).
func ridgeRoundingBoundDepth(dep, n, f int, lambda, r float64) (float64, error) {
	gS := gammaN(dep + 1)
	e := gS + unitRoundoff*lambda + 1.01*gammaN(3*f+1)*(1+float64(f)*lambda)
	floor := choleskyFloor(f, kappaHat*kappaHat*(1+gS)+float64(f)*lambda)
	if !(e < lambda/2) || !(lambda-gS > floor) {
		return 0, fmt.Errorf("lambda %v is too small for a certified float64 solve with n = %d and %d features", lambda, n, f)
	}
	return (gS + e*r) / (lambda - e), nil
}

func (t *Trainer) planOutput(cm common) error {
	cfg := cm.cfg
	if cfg.Eta != 0 {
		return fmt.Errorf("eta applies to the input and objective methods, not output")
	}
	rff, err := drawRFF(cm)
	if err != nil {
		return err
	}
	t.fm = newFeatureMap(cm.scaler, rff)
	lambda := cfg.Lambda
	if lambda == 0 {
		lambda = nieWangLambda(cfg.N, cfg.Epsilon)
	}
	r := 1 / math.Sqrt(lambda)
	tau, err := ridgeRoundingBoundDepth(sumDepth(cfg.N, cfg.AnyOrderSums), cfg.N, t.fm.f, lambda, r)
	if err != nil {
		return err
	}
	p := &outputPlan{lambda: lambda, tau: tau}
	// The computed minimisers of neighbours differ by at most the exact
	// sensitivity plus twice the rounding bound; the factor 2 on τ is slack
	// for the terms the bound leaves out (κ̂ > 1 by a few ulps).
	p.delta2 = lemma2Sensitivity(kappaHat, 1, lambda, cfg.N) + 4*tau
	t.lambda = lambda
	t.params = map[string]float64{"l2_sensitivity": p.delta2, "tolerance": tau}
	if cfg.Delta == 0 {
		f := t.fm.f
		if cfg.Epsilon < noise.LaplaceMinEpsilon(f) {
			return fmt.Errorf("epsilon %v is below the smallest the Laplace sampler supports for %d coordinates (%v)", cfg.Epsilon, f, noise.LaplaceMinEpsilon(f))
		}
		// ℓ₁ ≤ √F·ℓ₂ for the difference of two weight vectors.
		p.scale = math.Sqrt(float64(f)) * p.delta2 / cfg.Epsilon
		if err := noise.AddLaplaceVec(nil, p.scale); err != nil {
			return fmt.Errorf("the Laplace scale %v is outside the sampler's range (lambda or epsilon too extreme): %w", p.scale, err)
		}
		t.params["laplace_scale"] = p.scale
		t.events = []budget.Event{{Kind: budget.Laplace, Epsilon: cfg.Epsilon}}
	} else {
		sigma, err := amp.GaussianSigma(p.delta2, cfg.Epsilon, cfg.Delta)
		if err != nil {
			return err
		}
		if err := noise.AddGaussianVec(nil, sigma); err != nil {
			return fmt.Errorf("the Gaussian σ %v is outside the sampler's range (lambda or epsilon too extreme): %w", sigma, err)
		}
		if p.delta2/sigma < noise.GaussianMinRatio {
			return fmt.Errorf("noise multiplier σ/Δ₂ = %v exceeds what the Gaussian sampler supports", sigma/p.delta2)
		}
		p.gaussian, p.scale = true, sigma
		t.params["gaussian_sigma"] = sigma
		t.events = []budget.Event{{Kind: budget.Gaussian, Epsilon: cfg.Epsilon, Delta: cfg.Delta, Ratio: p.delta2 / sigma}}
	}
	t.out = p
	return nil
}

// solve returns the ridge minimiser (S + λn·I)⁻¹c (cannot fail: the plan
// checked the Cholesky floor).
func (p *outputPlan) solve(st stats) ([]float64, error) {
	return ridgeSolve(st.s, p.lambda*float64(st.n), st.c)
}

// releaseOutput solves the ridge problem exactly and adds the planned noise
// to every coordinate.
func (t *Trainer) releaseOutput(st stats) ([]float64, error) {
	w, err := t.out.solve(st)
	if err != nil {
		return nil, err
	}
	if t.out.gaussian {
		err = noise.AddGaussianVec(w, t.out.scale)
	} else {
		err = noise.AddLaplaceVec(w, t.out.scale)
	}
	if err != nil {
		return nil, fmt.Errorf("adding noise: %w", err)
	}
	return w, nil
}
