// Package budget is dpsql's durable privacy accountant: a per-table privacy
// filter (ε, δ) and a ledger with one record per release, both stored in the
// server's single bbolt database (top-level buckets "budget" and "ledger").
//
// A release is a list of events (Laplace, Gaussian, generic (ε, δ)). Reserve
// checks, inside one bbolt write transaction that is fsync'd on commit, that
// the table's filter still admits the release after adding its events, and
// only then returns: callers compute from data after the charge is durable.
// Concurrent reservations are group-committed (one fsync for every request
// that queued while the previous commit was on disk).
//
// Two accounting modes are fixed per table when it is protected:
//
//   - Basic: sequential composition, Σε ≤ ε_total and Σδ ≤ δ_total.
//   - RDP: the basic certificate OR a Rényi filter over a fixed set of orders
//     α (exact Laplace curve, Gaussian α·(Δ₂/σ)²/2, generic (ε, δ) as
//     ε-randomised response plus its δ), converted to (ε, δ) with the
//     Canonne–Kamath–Steinke bound and a union bound over the orders; half of
//     δ_total is reserved for that conversion.
//
// Amounts are kept in fixed point (ε in units of 10⁻¹², δ in units of 10⁻¹⁸);
// charges are rounded up, totals down, and reported spend is never below the
// exact value. docs/privacy/accounting.md gives the formulas and proofs.
//
// Imports: wal (durable writes). It is on the ground floor with catalog: it
// may not import catalog, store, functions, mechanism, guard, engine or any
// package above them (docs/architecture.md).
package budget
