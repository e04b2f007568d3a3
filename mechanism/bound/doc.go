// Package bound is the person-level grouped aggregate of privacy units
// (issue 27, docs/privacy/units.md §3): it takes rows tagged with a person
// and a group, bounds each person's contribution (at most k groups, drawn
// uniformly with the crypto RNG of package noise; at most C rows per group
// for COUNT; a clamp of the person's per-group SUM; the person's per-group
// mean for AVG) and releases noisy per-group COUNT, SUM and AVG, over a
// public group domain or with person-level private partition selection;
// and the person-level quantile (quantile.go: at most C values per person,
// report-noisy-max over agg.Quantile's public grid); and automatic bounds
// (auto.go: C and SUM clamps chosen by a person-level quantile over the
// kept (person, group) pairs, with a public fraction of ε, before the
// release that uses them).
//
// Privacy unit: one person; neighbours: add or remove one person with all
// their rows. Nothing here uses a row or person count in a noise scale.
//
// It owns the bounding and the noise calibration only. It imports noise,
// budget (event records), mechanism (compensated sums) and mechanism/agg
// (the quantile grid); it has no SQL
// imports and knows nothing of tables, joins or the catalog (dpquery/rel
// does).
package bound
