// Package gauss trains Gaussian classifiers from noisy sufficient
// statistics: linear discriminant analysis (lda, shared covariance),
// quadratic discriminant analysis (qda, one covariance per class) and
// Gaussian naive Bayes (gnb, per-class per-feature variances).
//
// Each feature is mapped by its public catalog bounds to [−1, 1] (clipped,
// NULL ↦ 0, the midpoint), giving u ∈ [−1, 1]^d. One pass over the rows
// computes the class counts n_k, the class sums S_k = Σ uᵢ and the second
// moments (lda: M = Σ uᵢuᵢᵀ; qda: M_k per class; gnb: Σ uᵢ∘uᵢ per class).
// The whole statistic vector is weighted per block and released ONCE with
// one draw of the discrete Gaussian (δ > 0) or Laplace (δ = 0) noise of
// package noise, calibrated to the joint sensitivity of the weighted vector
// under replace-one neighbours (a row may change class: its count, sum and
// moment move in two cells). Everything after that is post-processing of
// the released vector with public quantities: class means and priors from
// floored counts, covariances denoised by a spectral rule that knows the
// noise level, and the discriminant written as a mechanism.Model (lda: a
// linear scorer with the intercept in the weights; qda and gnb: a
// quadratic scorer Φ_c in homogeneous coordinates).
//
// Usage follows the Plan/Events/Train split of every dpsql mechanism:
//
//	tr, err := gauss.Plan(cfg)      // public quantities only
//	events := tr.Events()           // reserve with the accountant
//	model, err := tr.Train(X, y)    // one pass, one noise draw, post-processing
//
// The derivation (sensitivities, calibration, post-processing and the rule
// behind the defaults) is in docs/mechanisms/gauss.md; measured accuracy in
// docs/results/gauss.md.
//
// Imports: budget, mechanism, noise. Like every mechanism package it may not
// import catalog, store, functions, go-mysql-server or anything else that
// knows SQL, nor another mechanism that imports it (docs/architecture.md).
package gauss
