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
//	              (pure ε) or the analytic Gaussian mechanism (δ > 0).
//	input.go      Fukuchi, Tran & Sakuma's input perturbation (Algorithms
//	              1–2) for linear regression, with a corrected privacy proof.
//	objective.go  Kifer, Smith & Thakurta's objective perturbation with
//	              Gaussian noise (Obj-Gauss), constants redone for
//	              replace-one neighbours.
//	predict.go    Nie & Wang's private prediction π(f(x)) + Laplace, read
//	              as one noisy prediction per release (a scalar shift of the
//	              whole function is not DP).
//
// solve.go holds the linear algebra shared by all of them (Cholesky ridge
// solve, the exact minimiser of a quadratic over the ball ‖w‖ ≤ η by
// eigendecomposition and the secular equation, PSD square roots) and
// calibrate.go the noise calibrations (analytic Gaussian, χ² quantiles).
//
// Each release is planned from public information only (Plan / PlanPredict:
// validation, noise scale, privacy cost, random features), then trained on
// the rows (Train / Predict). All privacy noise comes from package noise.
package lsq
