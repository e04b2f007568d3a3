// Package audit is dpsql's statistical privacy audit: it draws outputs of a
// mechanism on a pair of neighbouring inputs and computes a Clopper–Pearson
// lower confidence bound on the ε the mechanism actually provides.
//
// The test event {output > T} or {output < T} is chosen on a calibration half
// of the samples and evaluated on the other half, so the bound is valid:
// with probability at least 1 − α, the reported EpsLower is below the true
// ε of the mechanism (for the given δ). A correct mechanism therefore passes
// (EpsLower ≤ ε claimed) except with probability α, and a mechanism whose
// noise is too small fails once N is large enough. Test helpers RequirePass
// and RequireCatch keep both kinds of test in the suite; see
// docs/privacy/auditing.md for the method and its measured power.
//
// Imports: only the standard library and gonum: it judges samples produced
// by its callers' mechanisms. It may not import any dpsql package
// (the mechanisms' audit tests import it, not the other way round).
package audit
