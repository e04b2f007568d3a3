// Command scalebench measures DP releases on a table attached from a
// MariaDB/Spider backend against the same aggregate run directly on the
// backend and against the embedded store (docs/scale-out.md).
//
//	testdata/spider/up.sh DIR 2   # with ROWS=1000000
//	go run ./cmd/scalebench --dsn 'dpsql:dpsql@tcp(127.0.0.1:PORT)/' --shards 127.0.0.1:P1,127.0.0.1:P2 --embedded
//
// It prints one Markdown table row per measurement: the median of --reps
// runs after one warm-up, and the bytes that crossed the dpsql↔head link
// and the head↔shards links per run.
//
// Imports: engine, functions, mechanism/linreg, server, store. A command is the top floor: no package
// imports it (docs/architecture.md).
package main
