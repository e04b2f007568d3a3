// Package store is dpsql's durable storage backend for go-mysql-server,
// built on bbolt.
//
// The server opens one bbolt file and passes it to Open; the store owns the
// top-level bucket "data" (databases → tables → schema, counters, rows and
// indexes) and leaves every other bucket alone. Provider returns the
// sql.MutableDatabaseProvider to build the engine on; sessions built with
// NewSession give it transactions.
//
// Rows are stored in a compact binary format (codec.go) under a key that
// encodes the primary key (so bbolt enforces uniqueness) or, for tables
// without one, a sequence number. Secondary and unique indexes are buckets
// of order-preserving keys (index.go) that go-mysql-server uses for point
// and range lookups and joins (lookup.go).
//
// Transactions (txn.go) buffer their writes in memory and read a snapshot:
// the bbolt state corrected by the before images of later commits (mvcc.go)
// with their own writes laid over it. COMMIT applies everything in one bbolt
// write transaction, durable before the client hears back: through the
// write-ahead log (package wal) when the file was opened with it (a log
// record fdatasynced before bbolt commits without fsync; the client is
// answered at that fdatasync, and statements that start before bbolt's
// commit is published wait for it: txn.go, commitBatch), else bbolt's own
// fsync. Every other write of the store goes through wal.Update. Writers lock
// the rows they write until the end of their transaction and wait for each
// other (lock.go: 1205 on timeout, 1213 on a deadlock); a writer that finds
// a locked row changed since it read it has its statement re-executed by the
// server. Where no lock was taken (past the per-transaction caps, see
// lock.go) a conflicting commit fails with ER_LOCK_DEADLOCK (1213), which
// clients retry. Without a Session every statement is its own transaction.
//
// The store exposes nothing data-dependent to the engine's statistics:
// DataLength is 0 (so information_schema's DATA_LENGTH and AVG_ROW_LENGTH
// are 0), RowCount is the exact row count unless the HideRowCount hook
// hides it from the caller (then 0, not exact), and index cardinalities are
// reported as 0.
//
// Hooks let the engine veto SQL reads and writes per table, on every path
// (scans, index lookups, the existing row behind a duplicate key); the
// direct accessors (TableSchema, RowCount, ScanFloats, ScanValues,
// ImportCSV) bypass them and read committed data only: they are meant for
// the DP functions and the owner's bulk load.
//
// Imports: wal. It may not import catalog, budget, functions, guard,
// fastpath, engine or any other dpsql package: the guard reaches it through
// Hooks, the DP functions through functions.Rows.
package store
