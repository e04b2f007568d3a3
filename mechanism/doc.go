// Package mechanism holds dpsql's differentially private mechanisms and the
// numerical pieces they share: preprocessing from public bounds, random
// Fourier features, and the solvers. One file per mechanism:
//
//	mean.go  DP_MEAN (Laplace, sensitivity (hi−lo)/n)
//	svm.go   PRIVATESVM-FINITE and PRIVATESVM (Rubinstein et al.)
//	lsq.go   private least squares (Nie & Wang; Fukuchi et al.; baselines)
//	lmgc.go  large-margin multiclass Gaussian classifier (Pathak & Raj, corrected)
//
// The package imports nothing from SQL: the functions package adapts it.
// All privacy noise comes from package noise. Sensitivities are derived from
// public quantities only (catalog bounds, n, ε, δ and fixed hyperparameters).
//
// Imports: budget (costs) and noise. It may not import catalog, store,
// functions or anything that knows SQL, nor any package above it.
package mechanism
