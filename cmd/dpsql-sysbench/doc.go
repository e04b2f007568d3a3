// Command dpsql-sysbench runs sysbench OLTP workloads against dpsql and a
// private MariaDB started for the purpose, and prints the results with
// their ratios as a markdown table (docs/results/storage.md).
//
// It needs sysbench and the Debian MariaDB server (apt-get install -y
// mariadb-server sysbench). MariaDB is started by the tool itself from a
// temporary data directory on a loopback port, with its default durability
// (innodb_flush_log_at_trx_commit=1, like dpsql's fsync per commit), and
// stopped at the end. dpsql runs in-process on its own temporary data
// directory.
//
//	go run ./cmd/dpsql-sysbench [-time 20] [-table-size 10000] [-threads 1,8]
//
// Imports: engine, server. A command is the top floor: no package
// imports it (docs/architecture.md).
package main
