// Package selection is private hyperparameter selection by random stopping
// (Liu & Talwar, "Private Selection from Private Candidates", STOC 2019,
// Algorithm 1 / Theorem 3.1), truncated at a public cap.
//
// Each trial picks a candidate uniformly from a PUBLIC grid, trains it with
// ε_train and scores it with a DP score (ε_score); the loop keeps the best
// and, after each trial, stops with public probability γ. If each trial is
// ε₁-DP (ε₁ = ε_train + ε_score by sequential composition on the same rows)
// the released (best model, its noisy score) is 3ε₁-DP; truncating at
// MaxTrials adds δ_trunc = (1 + e^{3ε₁})(1 − γ)^T. The number of trials
// depends on the stopping coins only, never on the rows, and is not part of
// the output. Derivation: docs/mechanisms/selection.md.
//
// The package has no SQL imports; the loop is generic over the trial.
package selection
