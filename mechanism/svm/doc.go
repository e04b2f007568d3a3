// Package svm is DP_SVM_TRAIN: the private support vector machines of
// Rubinstein, Bartlett, Huang & Taft, "Learning in a large function space:
// privacy-preserving mechanisms for SVM learning" (PRIVATESVM-FINITE,
// Algorithm 2, for the linear kernel; PRIVATESVM, Algorithm 3, for the rbf,
// laplacian and cauchy kernels through d̂ random Fourier features).
//
// A release is planned from public information only and then trained:
//
//	t, err := svm.Plan(cfg)      // validate, noise scale λ, privacy cost, RFF draw
//	events := t.Events()         // reserve these before touching the data
//	model, err := t.Train(X, y)  // solve, add Laplace(λ) noise, return the model
//
// Rows are mapped to the unit ball with the public catalog bounds
// (mechanism.Scaler; the linear kernel gets a constant intercept feature,
// regularised like the others), so κ = 1. Train minimises the paper's
// objective ½‖w‖² + (C/n)·Σℓ(yᵢ⟨w, φ(xᵢ)⟩) with the hinge (default),
// logistic or huberised hinge loss (all 1-Lipschitz) by dual coordinate
// descent, and stops only when the duality gap is certified, including
// floating-point rounding, to be at most τ, a tolerance fixed by Plan from
// C, n and L. Strong convexity turns the gap into ‖w − w*‖ ≤ √(2τ), so the
// released weights have ℓ₂ sensitivity Δ₂ = 4LCκ/n + 2√(2τ) (Lemma 6 plus
// the optimisation error) and each coordinate gets Laplace noise of scale
// λ = √F·Δ₂/ε_k, F = d + 1 (linear) or 2d̂ (random features). More than two
// classes are trained one-vs-rest with ε_k = ε/K each.
//
// Only the noisy weight vectors are released, with the public scaler and the
// data-independent random frequencies; never dual coefficients, support
// vectors or the achieved gap.
//
// Errors. Plan's errors depend on the configuration only. Train's shape
// checks fire only on a caller bug. The one data-dependent error is a solve
// that does not certify τ within MaxEpochs passes: it returns a fixed
// message, releases nothing, and the reserved budget stays spent; the only
// information it carries is that one bit, which the ε-DP guarantee does not
// cover (see docs/mechanisms/svm.md).
//
// The derivation, the choice of τ and the paper's defects are in
// docs/mechanisms/svm.md; measured accuracy and speed in docs/results/svm.md.
package svm
