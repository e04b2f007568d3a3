// Command dpsql runs the dpsql server and its offline tools.
//
//	dpsql serve  --data-dir DIR --listen HOST:PORT [--demo] [--log-format text|json]
//	             [--max-release-memory SIZE] [--tls-cert F --tls-key F [--require-secure-transport]]
//	dpsql import --data-dir DIR --table db.t --csv FILE
//
// On first start of an empty data directory the root account is created
// with the password in DPSQL_ROOT_PASSWORD; if unset, one is generated and
// printed once on standard output.
//
// Imports: catalog, engine, server. A command is the top floor: no package
// imports it (docs/architecture.md).
package main
