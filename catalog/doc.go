// Package catalog keeps dpsql's public metadata: which tables are protected,
// the public bounds of their numeric columns, the public label domains, the
// accounts that own the data, and the released models (named per database:
// that of their training table, like tables; see PutModel).
//
// Everything in the catalog is public by construction: it is declared by the
// data owner (bounds, domains) or is a DP output (models). Mechanisms take
// their sensitivities from here, never from the rows.
//
// The catalog lives in the server's single bbolt file (bucket "catalog") and
// is cached in memory; every change is committed (and fsynced) before the
// call returns.
//
// Imports: wal (durable writes). It is on the ground floor with budget: it
// may not import budget, store, functions, mechanism, guard, engine or any
// package above them (docs/architecture.md).
package catalog
