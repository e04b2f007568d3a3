// Package svm is DP_SVM_TRAIN: output-perturbed support vector machines
// after Rubinstein, Bartlett, Huang & Taft, "Learning in a large function
// space: privacy-preserving mechanisms for SVM learning" (PRIVATESVM-FINITE
// for the linear kernel; PRIVATESVM for the rbf, laplacian and cauchy
// kernels through d̂ random Fourier features), with a solver whose privacy
// does not depend on convergence.
//
// A release is planned from public information only and then trained:
//
//	t, err := svm.Plan(cfg)      // validate, T, Δ₂, noise scale, privacy cost, RFF draw
//	events := t.Events()         // reserve these before touching the data
//	model, err := t.Train(X, y)  // T gradient steps, noise, model
//
// Rows are mapped to the unit ball with the public catalog bounds
// (mechanism.Scaler; the linear kernel gets a constant intercept feature,
// regularised like the others), so κ = 1. Train minimises
// P(w) = ½‖w‖² + (C/n)·Σℓ(yᵢ⟨w, φ(xᵢ)⟩) for a smooth loss — the
// Huber-smoothed hinge (default, half-width h) or the logistic loss; the
// hinge loss is refused — by full-batch gradient descent from w = 0 with
// step η = 2/(2 + C·β_ℓ), for exactly T iterations. T is fixed by Plan from
// public values (n, F, K, C, the loss, ε, δ): no stopping test, no failure
// path, the same work on every row. The gradient map is (1 − η)-contractive,
// so for replace-one neighbours ‖w_T − w′_T‖ ≤ 2LCκ/n·(1 − (1 − η)^T) for
// every T, plus a public bound on float64 rounding: that is Δ₂. The release
// is pure ε (Laplace of scale √F·Δ₂·K/ε on every coordinate; K one-vs-rest
// models for K > 2 classes, ε/K each) or, with δ > 0, one discrete-Gaussian
// draw on the stacked K·F weights calibrated to √K·Δ₂.
//
// Only the noisy weight vectors are released, with the public scaler, the
// data-independent random frequencies and the public parameters (C, T, Δ₂,
// the noise scale).
//
// Errors. Plan's errors depend on the configuration only (including the
// caps on C·β_ℓ and on the work T·n·F·K, and the noise parameters, which it
// exercises once). Train's only errors are shape checks that fire on a
// caller bug. No outcome of Train and no step count depends on the rows.
//
// The derivation, the floating-point argument, the defaults and the
// paper's defects are in docs/mechanisms/svm.md; measured accuracy and
// speed in docs/results/svm.md.
//
// Imports: budget, mechanism, noise. Like every mechanism package it may not
// import catalog, store, functions, go-mysql-server or anything else that
// knows SQL, nor another mechanism that imports it (docs/architecture.md).
package svm
