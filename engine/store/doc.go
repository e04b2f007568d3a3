// Package store is dpsql's durable storage backend for go-mysql-server,
// built on bbolt.
//
// The server opens one bbolt file and passes it to Open; the store owns the
// top-level bucket "data" (databases → tables → schema, counters and rows)
// and leaves every other bucket alone. Provider returns the
// sql.MutableDatabaseProvider to build the engine on.
//
// Rows are stored in a compact binary format (codec.go) under a key that
// encodes the primary key (so bbolt enforces uniqueness) or, for tables
// without one, a sequence number. Each SQL statement's writes to a table are
// buffered and committed in a single bbolt transaction, fsynced before the
// client gets OK (editor.go). BEGIN, COMMIT and ROLLBACK are accepted by the
// engine but have no effect with a non-transactional session: every
// statement is its own transaction (autocommit).
//
// The store exposes nothing data-dependent to the engine's statistics:
// DataLength is 0 (so information_schema's DATA_LENGTH and AVG_ROW_LENGTH
// are 0), RowCount is the exact row count, which dpsql treats as public,
// and tables declare no indexes, so ANALYZE TABLE builds no histograms.
//
// Hooks let the engine veto SQL reads and writes per table; the direct
// accessors (TableSchema, RowCount, ScanFloats, ScanValues, ImportCSV)
// bypass them and are meant for the DP functions and the owner's bulk load.
package store
