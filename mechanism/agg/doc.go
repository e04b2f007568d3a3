// Package agg is the mechanism behind DP aggregate SQL (issue 12): COUNT,
// SUM and AVG of clipped columns, grouped by keys from a public domain, and
// histograms (a grouped COUNT). It has no SQL imports; the derivation is in
// docs/mechanisms/agg.md.
//
// Privacy unit: one row; neighbours: replace-one, n public. A row belongs to
// at most one group (or to none, when a WHERE predicate or a NULL key drops
// it). Replacing one row can move it from group a to group b, so the count
// vector changes by −1 in a and +1 in b: ℓ₁ sensitivity 2. The centred sums
// Tⱼ = Σ (clip(x) − m), m the middle of the bounds, change by at most
// h ≈ w/2 in each of the two groups: ℓ₁ sensitivity 2h ≈ w, inflated by
// SumSlack(n) for float64 rounding (each centred sum is kept as two
// compensated sums of non-negative terms, see mechanism.SplitSum).
// Each measurement (the count vector, one sum vector per column) gets an
// equal share of ε and Laplace noise from noise.AddLaplaceVec; SUM and AVG
// are post-processing of the noisy count and centred sum.
//
// Imports: budget, mechanism, noise. Like every mechanism package it may not
// import catalog, store, functions, go-mysql-server or anything else that
// knows SQL, nor another mechanism that imports it (docs/architecture.md).
package agg
