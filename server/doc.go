// Package server is dpsql's MySQL wire-protocol front end: the listener
// (New, over go-mysql-server's server with fastpath's handler), TLS and
// require_secure_transport, login throttling with uniform answers
// (auth.go), the identity it advertises (Version), and the process limits
// (limits.go: the default release memory, the Go runtime's GC settings,
// ParseBytes for sizes on the command line), and MySQL conformance in
// front of the handler (conform.go, issue 29: status flags at connect,
// MySQL error codes, DO, DESCRIBE t 'pattern', CHECK/OPTIMIZE/REPAIR/
// ANALYZE/CHECKSUM TABLE, ALTER USER … ACCOUNT UNLOCK, read-only
// sessions, the processlist's User/Host/State) and on the wire (wire.go:
// the handshake's collation, result metadata, zero dates and date
// parameters of prepared statements, alias case, Ssl_cipher/Ssl_version,
// SHOW CREATE TABLE collations MariaDB can load), and COM_STATISTICS
// (comstats.go) and prepared DO / DESCRIBE t 'pattern' through the hooks
// of the patched protocol library (third_party/vitess/PATCHES.md), whose
// prepare hook also asks the inner handler (fastpath: a prepared SELECT
// WITH DIFFERENTIAL_PRIVACY).
//
// Imports: fastpath and store (sessions). It may not import engine (which
// wires it: engine.NewServer) nor any DP package: it never sees a release.
package server
