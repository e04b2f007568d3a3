// Package linreg is dpsql's private linear regression by sufficient
// statistics perturbation with an adaptive ridge: AdaSSP (Yu-Xiang Wang,
// "Revisiting differentially private linear regression", UAI 2018,
// Algorithm 2), with constants redone for replace-one neighbours, a joint
// Gaussian calibration, a pure-ε Laplace variant and a floating-point
// argument. The derivation is docs/mechanisms/linreg.md.
//
// Rows are mapped by public bounds only (mechanism.Scaler with an
// intercept, so ‖x‖ ≤ 1; labels y′ = (y − mid)/half ∈ [−1, 1]; NULL →
// midpoint). One pass accumulates A = XᵀX and c = Xᵀy′; three releases
// follow:
//
//	XᵀX̂   A's upper triangle (the public intercept entry n/F left out)
//	      plus noise;
//	Xᵀŷ   c plus noise;
//	q̃     the smallest Rayleigh quotient of A along the eigenvectors of
//	      XᵀX̂ (an upper bound on λ_min(A), 1-sensitive for every fixed
//	      direction set) plus noise.
//
// With δ > 0 the three are discrete Gaussian releases calibrated jointly
// as one Gaussian event; with δ = 0 they are Laplace releases with ℓ₁
// sensitivities, ε split between them. The model
// θ = (XᵀX̂ + λI)⁻¹Xᵀŷ, λ = max(0, E − max(0, q̃ − margin)), with every
// eigenvalue raised to at least E (the noise-norm bound), is a
// post-processing of the three releases: no solver, no iteration, no error
// after the rows are read.
//
// With private bounds (§11) a share of ε buys clipping radii, optionally
// after a per-feature private box (box.go, §13), a first-stage
// preconditioner (precond.go, §12), and noisy gradient steps after the
// solve (refine.go, §15).
//
// Below the private clipping's n·ε the label is centred at a DP mean first,
// and at the smallest n·ε the model is that mean alone (centre.go, §14);
// with private radii the intercept is solved unpenalised.
//
// calibrate.go holds the noise calibration, stats.go the pass over the
// rows, solve.go the post-processing linear algebra.
//
// Imports: budget, mechanism, mechanism/agg, noise. Like every mechanism package it may not
// import catalog, store, functions, go-mysql-server or anything else that
// knows SQL, nor another mechanism that imports it (docs/architecture.md).
package linreg
