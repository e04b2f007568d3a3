// Package lsq is dpsql's private least-squares regression (DP_LSQ and
// DP_LSQ_PREDICT). Every constant and derivation is in
// docs/mechanisms/lsq.md; the code names follow the papers.
//
// Four releases share one preprocessing (features to the unit ball through
// mechanism.Scaler with an intercept, labels to y′ ∈ [−1, 1] so M = 1, both
// from public catalog bounds) and one pass over the rows that accumulates the
// sufficient statistics Σφφᵀ and Σy′φ:
//
//	output.go     model release (Kind "lsq"): ridge regression in a finite
//	              feature space (linear, or random Fourier features), ℓ₂
//	              sensitivity from Nie & Wang's Lemma 2 RKHS bound
//	              2κ(κR + M)/(λm), R = M/√λ; Laplace per coordinate
//	              (pure ε) or the discrete Gaussian calibrated by the CKS
//	              zCDP conversion (δ > 0).
//	input.go      Fukuchi, Tran & Sakuma's input perturbation (Algorithms
//	              1–2) for linear regression, with a corrected privacy proof.
//	objective.go  Kifer, Smith & Thakurta's objective perturbation with
//	              Gaussian noise (Obj-Gauss), constants redone for
//	              replace-one neighbours.
//	share.go      both of the above are released through the grid-safe
//	              output step of package amp: the computed minimiser is
//	              within an a-priori radius r of the ideal (continuous-noise,
//	              exact) one and is released with discrete Gaussian noise
//	              for ℓ₂ sensitivity 2r; share.go splits (ε, δ).
//	predict.go    Nie & Wang's private prediction π(f(x)) + Laplace, read
//	              as one noisy prediction per release (a scalar shift of the
//	              whole function is not DP).
//
// solve.go holds the linear algebra shared by all of them (a written-out
// Cholesky factorisation, the ridge solve, the minimiser of a quadratic over
// the ball ‖w‖ ≤ η by a fixed 64-step bisection on the multiplier, and
// their a-priori floating-point bounds) and calibrate.go the noise
// calibrations (Gaussian by the CKS zCDP conversion, χ² quantiles).
//
// Each release is planned from public information only (Plan / PlanPredict:
// validation, noise scale, privacy cost, random features), then trained on
// the rows (Train / Predict). All privacy noise comes from package noise.
//
// Imports: budget, mechanism, mechanism/amp, noise. Like every mechanism package it may not
// import catalog, store, functions, go-mysql-server or anything else that
// knows SQL, nor another mechanism that imports it (docs/architecture.md).
package lsq
