// Package engine wires dpsql together on go-mysql-server: it opens the one
// durable bbolt file (through wal) holding rows (store), accounts, catalog,
// ledger and models; builds the analyzer with the guard's rules (guard),
// dump and restore (dump), the plan cache and bulk paths (fastpath); the
// database provider with the dpsql system database, views, procedures,
// table functions and attached tables (provider.go, scaleout); the DP
// functions' environment (functions) and the DP aggregate planner and
// DP_HISTOGRAM (dpquery), which it plugs into the guard; the accounts; and
// the wire server (server, NewServer). demo.go imports CSV files and the
// sample datasets.
//
// engine is the top floor (docs/architecture.md): only the commands under
// cmd/ import it, and no package under it may import engine.
package engine
