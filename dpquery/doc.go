// Package dpquery answers analysts' ordinary SQL over protected tables with
// differential privacy: the home of the DP query compiler. Today it owns
//
//   - the DP aggregate planner (dpagg.go, Planner.Plan): an aggregate query
//     over one protected table (SELECT keys, COUNT(*), SUM, AVG … WHERE …
//     GROUP BY … with a session ε) is checked against the plan, the catalog
//     and the session before any charge, and its GROUP BY replaced by a node
//     that reserves the budget, scans the table once (the WHERE compiled by
//     dpquery/eval, total and fixed-cost) and releases one noisy row per
//     group of the public domain (mechanism/agg), or per privately selected
//     group;
//   - the answer cache (dpcache.go): the same query of the same account on
//     the same snapshot re-reads its released answer for free;
//   - DP_HISTOGRAM as a table function (histtf.go, TableRelease for the
//     guard's exactly-once check);
//   - the EXPLAIN of a DP aggregate (explain.go, and dpquery/rel's
//     explain.go for unit queries): the planned release as explain.Item
//     rows — charge (the accountant's read-only quote), unit, bounds,
//     groups, joins, every column's mechanism, ε, δ and noise scale —
//     from public inputs only, nothing read or charged.
//
// The guard hands it analysts' plans (guard.Guard.PlanDPAgg, wired by the
// engine). It reads rows only through functions.Env (the accountant's
// release order and the functions.Rows storage interface).
//
// Imports: catalog, explain, functions, mechanism/agg and dpquery/eval. It may not
// import engine, guard, server, fastpath, dump, scaleout or a storage
// backend (store, mysqlstore): storage is reached through functions.Rows.
package dpquery
