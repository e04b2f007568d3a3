// Package sqlcompat corrects go-mysql-server behaviours that differ from
// MariaDB where a client's own test suite notices (docs/results/drivers.md).
// Each correction is an analyzer rule that replaces one expression by a
// wrapper with MariaDB's semantics; it runs after the guard's rules, so the
// guard and the DP compiler always see go-mysql-server's own expressions.
//
// Today it owns CAST(x AS TIME) of a DATETIME string: MariaDB takes the
// time of day ('0001-01-01 03:25:45' → 03:25:45, which go-sql-driver sends
// for a time.Time parameter); go-mysql-server answers NULL.
//
// Imports: go-mysql-server only. It may not import any dpsql package.
package sqlcompat
