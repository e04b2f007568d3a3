// Package rel is dpsql's DP query compiler for privacy units (issue 27,
// docs/privacy/units.md §4): a small relational algebra — scans of public
// and protected tables, inner equi-joins, a filter, and one grouped
// aggregate (COUNT(*), COUNT(col), SUM, AVG) — with the privacy unit tracked
// through every node. Compile checks everything on the query and the public
// catalog (joins must preserve the unit, columns must be bounded, group keys
// declared or privately selected, options in range) and returns a Plan or a
// refusal saying why, before anything is charged; Plan.Run scans storage
// directly, attaches each row's person along the unit's foreign-key path,
// joins, filters and hands the rows to mechanism/bound, which bounds each
// person's contribution and adds the noise. On tables attached from
// MariaDB/Spider the per-(person, group) counts and sums are computed by the
// backend when it can (push.go, functions.UnitPushdown); memory.go is the
// admission estimate from row counts rounded up to powers of two;
// explain.go describes a compiled plan for EXPLAIN (no row, no count).
// source.go parses a training source written as a FROM clause (tables and
// inner equi-joins, the trainings' table argument) into the same Node and
// compiles it with the same rules: the one-row-per-person reduction of the
// trainings (functions/unittrain.go) reads its joined rows with persons.
//
// Models: Qrlew's privacy_unit_tracking (privacy-unit-preserving relations,
// paths along foreign keys) and ZetaSQL's anonymization rewriter (per-user
// aggregation, group sampling and clamping, then the noisy aggregate).
//
// It reads the catalog (catalog.Table) and storage through narrow
// interfaces (Meta, Source) and may not import engine/. Filters take a
// Predicate; the total, constant-cost evaluator of issue 25 (dpquery/eval)
// plugs in behind it.
package rel
