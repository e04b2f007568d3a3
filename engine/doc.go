// Package engine wires dpsql together: one durable bbolt file holding rows
// (package store), users, catalog, ledger and models; go-mysql-server
// on top; and the guard that keeps protected rows away from analysts.
//
// The guard has three layers, each sufficient on its own for reads:
//
//   - storage hooks: every row of a protected table that any SQL path would
//     produce passes through store.Hooks.CheckRead, which refuses analysts;
//     writes by analysts are refused and writes by owners are validated
//     against the declared bounds and label domains;
//   - an analyzer rule that refuses plans touching protected tables for
//     analysts (clear errors even for EXPLAIN), refuses ANALYZE of protected
//     tables, SHOW PROCESSLIST for analysts, and any DP release that could be
//     evaluated more than once (per row, in a join, in a subquery, UNION …);
//   - the DP functions read storage directly, with no privileges involved.
package engine
