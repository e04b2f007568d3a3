// Package explain answers the tabular EXPLAIN (EXPLAIN / DESCRIBE SELECT …
// without FORMAT=TREE, PLAN or ANALYZE) in MySQL's layout — id,
// select_type, table, partitions, type, possible_keys, key, key_len, ref,
// rows, filtered, Extra — from go-mysql-server's final plan, whose own
// answer is a placeholder row of NULLs (issue 29). It also clears
// go-mysql-server's "at most one row" flag on every EXPLAIN, which its
// handler otherwise applies to the plan's text ("max1Row iterator returned
// more than one row" for EXPLAIN FORMAT=TREE of a point lookup).
//
// It reads only the plan and a table's row count through
// sql.StatisticsTable, which the store answers under its HideRowCount hook:
// a count the caller may not learn is not shown (rows is NULL). Analysts'
// EXPLAINs of protected tables never get here: the guard refuses them
// first (its rule runs before this one).
//
// It also owns the EXPLAIN of a DP release (dp.go, docs/sql.md "EXPLAIN
// of a DP query"): its result schema and rows (Item), the interface a DP
// release node implements to describe its plan (Releaser: dpquery's
// row-level aggregate and dpquery/rel's unit aggregate) and the node that
// answers the statement with them (Node, found by Describe in an analysed
// EXPLAIN; the wire handler, fastpath/dpexplain.go, runs it, because
// go-mysql-server gives every EXPLAIN one of two fixed schemas).
//
// Imports: go-mysql-server only. It may not import any dpsql package.
package explain
