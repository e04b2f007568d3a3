// Package box is the private per-feature box of DP_TRAIN's classification
// kinds (docs/mechanisms/box.md, issue 11).
//
// Owners declare feature bounds from the domain ([0, 100] for a percentage,
// [1, 16000] for a run length), and real rows often sit in a corner of that
// box. The kinds scale every feature by its declared box, so the signal of
// such a feature is a few percent of the range the noise is calibrated to,
// and the model collapses to the majority class. This package releases, for
// every feature j, a lower and an upper DP quantile (report-noisy-max on a
// public grid inside the declared [lo_j, hi_j]); rows are then clipped to
// the released box and the kind runs with it as its public bounds. The box
// is a release, public afterwards: the kind's sensitivity follows from it
// exactly as from declared bounds (post-processing plus adaptive
// composition). Split accounts the 2d quantiles and the kind's Gaussian
// release as one zCDP event at the charged (ε, δ), as linreg's private
// clipping does (linreg.md §11).
//
// Imports: budget, mechanism, noise. Like every mechanism package it may not
// import catalog, store, functions, go-mysql-server or anything else that
// knows SQL, nor another mechanism that imports it (docs/architecture.md).
package box
