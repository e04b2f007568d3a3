// Package guard keeps protected rows away from analysts. It owns the three
// layers of the guard, each sufficient on its own for reads:
//
//   - storage hooks (Guard.Hooks): every row of a protected table that any
//     SQL path would produce passes through store.Hooks.CheckRead, which
//     refuses analysts; writes by analysts are refused and writes by owners
//     are validated against the declared bounds and label domains; a new
//     table whose name has a budget account is created protected; the row
//     count of a protected table of a privacy unit is hidden from analysts
//     (store.Hooks.HideRowCount: TABLE_ROWS, SHOW TABLE STATUS);
//   - an analyzer rule (Guard.Rule) that refuses plans touching protected
//     tables for analysts (clear errors even for EXPLAIN), refuses ANALYZE of
//     protected tables and any DP release
//     that could be evaluated more than once (per row, in a join, in a
//     subquery, UNION …); it answers public metadata statements (meta.go)
//     and hands analysts' aggregate queries over a protected table to the DP
//     aggregate planner (Guard.PlanDPAgg);
//   - the DP functions read storage directly, with no privileges involved.
//
// It also owns the authorisation wrapper that lets every account read the
// dpsql system views (NewAuthFactory), hides planner statistics of
// protected tables (ProtectStats), and shows an analyst only their own
// connections in the process list (OwnProcesses, processlist.go).
//
// Imports: catalog, functions, mechanism, store and go-mysql-server. It may
// not import engine, server, fastpath, dump or scaleout (they sit above it
// and call it), nor dpquery: the engine plugs the DP aggregate planner and
// DP_HISTOGRAM's check in (Guard.PlanDPAgg, Guard.TableRelease).
package guard
