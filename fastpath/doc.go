// Package fastpath owns the paths that spare go-mysql-server its generic
// per-statement work, each with the checks that keep it equivalent to the
// ordinary path (issue 13):
//
//   - the plan cache (plancache.go): analysed plans of prepared statements,
//     and of plain text INSERTs split into template and values
//     (textinsert.go), re-used after the guard and the binder ran again;
//   - the connection handler in front of go-mysql-server's (Handler), which
//     also re-executes a statement the store asks to restart (restart.go)
//     and rewrites SELECT WITH DIFFERENTIAL_PRIVACY for the DP planner, in
//     text queries (restart.go) and in server-side prepared statements at
//     PREPARE and at every EXECUTE (prepclause.go), and in SQL-level
//     PREPARE … FROM '…' / EXECUTE (sqlprepare.go);
//   - the multi-row INSERT rewrite into a table function (bulkinsert.go,
//     fastfloat.go, numslab.go) and the bulk writer that sends INSERT …
//     VALUES/SELECT and LOAD DATA to the store in batches (bulkload.go,
//     bulkloaddata.go, bulkpipe.go).
//
// It also answers the EXPLAIN of a DP query with the DP plan
// (dpexplain.go): the statement is analysed as on the ordinary path and,
// when it became a DP release, run as explain.Node (its own columns).
//
// Imports: catalog, explain, functions, guard and store. It may not import engine,
// server, dump or scaleout; server and engine wire it in.
package fastpath
