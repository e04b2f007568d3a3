// Package selection is private hyperparameter selection.
//
// heldout.go is what DP_TRAIN(…, 'tune=1') runs: a secret uniformly random
// split of the row positions into A (n − ⌊n/10⌋ rows) and B (⌊n/10⌋ rows),
// drawn with crypto randomness independently of the rows; ONE noisy release
// on A at the call's full (ε, δ), post-processed into every candidate of a
// public grid; every candidate scored on B (sensitivity-1 scores on a
// public grid) and report-noisy-max (Laplace 2/ε_B) releasing only the
// index. A and B are disjoint, so the parts compose in parallel and the
// ledger records the A-release's events; ε_B is chosen so that its
// worst-case Rényi curve is dominated by theirs (ScoreEpsilon). Every
// candidate is always scored: no data-dependent branch or running time.
//
// Liu & Talwar's random stopping (STOC 2019), an earlier version of this
// package, was removed: its guarantee needs the number of trials hidden,
// and that number shows in the running time (selection.md §7).
// Derivations: docs/mechanisms/selection.md.
//
// The package has no SQL imports.
//
// Imports: budget, mechanism, mechanism/gauss, mechanism/linreg, noise. Like every mechanism package it may not
// import catalog, store, functions, go-mysql-server or anything else that
// knows SQL, nor another mechanism that imports it (docs/architecture.md).
package selection
