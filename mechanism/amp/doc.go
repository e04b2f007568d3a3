// Package amp is the output step shared by every dpsql mechanism whose
// privacy proof is about an exact minimiser perturbed by continuous noise
// (objective perturbation and input perturbation in mechanism/lsq, the
// LMGC classifier in mechanism/lmgc).
//
// The pattern is approximate minima perturbation (Iyengar et al. 2019):
//
//  1. The IDEAL mechanism draws its noise from the continuous law of the
//     paper and returns the exact minimiser θ*; it is (ε₁, δ₁)-DP by the
//     mechanism's own proof.
//  2. The implementation draws its noise with the coupled samplers of
//     package noise (exact discrete objects whose probabilities are within
//     e^(±η) of the continuous law's mass on matching grid cells) and
//     computes θ̂ in floating point. An a-priori bound from public
//     quantities only — the noise cells, the float error of the
//     accumulation and of the solver — gives a PUBLIC radius r with
//     ‖θ̂ − θ*‖₂ ≤ r for every data set and every noise value in the
//     typical region.
//  3. The release is Step.Apply(θ̂): θ̂ snapped to a public grid plus
//     discrete Gaussian (δ > 0) or discrete Laplace (pure ε) noise
//     calibrated to an ℓ₂ sensitivity of 2r — a grid-safe additive release,
//     the last operation before anything leaves the mechanism.
//
// The release is then (ε₁ + 2η + ε₂, e^η·δ₁ + δ₂)-DP, with (ε₂, δ₂) the
// output step's own event, up to the tail mass of the typical region
// (below 2⁻¹⁰⁰⁰·e^(−ε) or charged in δ by the caller). The proof is in
// docs/mechanisms/lsq.md §9 ("The output step"). No released value is an
// invertible function of (data, noise) with the noise on a lattice: the
// last noise is added to the value being released, on a grid.
//
// Imports: budget, mechanism, noise. Like every mechanism package it may not
// import catalog, store, functions, go-mysql-server or anything else that
// knows SQL, nor another mechanism that imports it (docs/architecture.md).
package amp
