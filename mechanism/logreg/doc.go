// Package logreg is dpsql's private logistic regression: binary (one
// weight vector, logistic loss) and multiclass (multinomial softmax loss,
// one weight vector per class, all released jointly). The derivation is
// docs/mechanisms/logreg.md.
//
// Mechanism: noisy full-batch gradient descent. Rows are mapped by public
// bounds only (mechanism.Scaler with an intercept, ‖x‖ ≤ 1; NULL → the
// middle of the bounds). For T steps (a public count) the gradient sum
// G(θ_t) = Σᵢ ∇ℓ(θ_t; xᵢ, yᵢ), stacked over all K′ weight vectors, is
// released with one noise draw on the whole K′·F vector — discrete
// Gaussian with its ℓ₂ sensitivity 2L (δ > 0; the T releases compose into
// one Gaussian event), or Laplace with its ℓ₁ sensitivity (δ = 0; ε/T per
// step) — and θ_{t+1} = θ_t − (η/n)·Ĝ_t. The model is the average of the
// iterates. Every released value is a snapped-grid noise release or a
// post-processing of them: no objective is perturbed and inverted, no
// convergence test is made, the number of steps and the work per step are
// fixed by public values, and nothing fails after the rows are read.
//
// Step rules (logreg.md §2, §8, §13): plain averaged GD; Nesterov's
// accelerated GD where the step cap binds; for K = 2 there instead a
// preconditioned rule that first releases XᵀX (discrete Gaussian, in the
// same zCDP event as the gradients) and steps with Böhning's bound
// P = (¼X̂ᵀX̂/n + λI)⁻¹ — all post-processing of the releases.
//
// The default step size comes from the averaged-iterate guarantee for
// convex L-Lipschitz losses: the horizon τ = ηT balances the optimisation
// term ‖θ*‖²/(2τ) against the noise term, from public n, d, K, ε, δ only.
//
// calibrate.go holds sensitivities, noise calibration and defaults;
// solver.go the descent; kernel_amd64.s the AVX2 + FMA kernels of the
// binary gradient pass and of XᵀX (chosen at run time by CPU features,
// the Go kernels in solver.go the fallback and the tests' reference).
// The descent is package-local (the SVM work builds a similar solver; a
// shared one is for later).
//
// Imports: budget, mechanism, mechanism/amp, noise, internal/bigmem (the
// scaled copy's huge pages), gonum/mat (the preconditioner's
// eigendecomposition), golang.org/x/sys/cpu (the AVX2 kernels' CPU
// check). Like every mechanism package it may not import catalog, store,
// functions, go-mysql-server or anything else that knows SQL, nor another
// mechanism that imports it (docs/architecture.md).
package logreg
