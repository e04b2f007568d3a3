// Command dpsql-bench measures dpsql's SQL-level speed targets side by side
// in one process: each DP function against the plain SQL query it is
// compared with, alternating runs on the same table, medians reported.
//
//	go run ./cmd/dpsql-bench -rows 1000000 -reps 5
//
// Cases: bulk load (rows/s, durable); DP_MEAN vs SELECT AVG (1M × 10);
// DP_LSQ linear vs SELECT SUM (1M × 20); DP_SVM_TRAIN rbf dim=256 on
// 200k × 20 (wall time; compare with the sklearn script in docs/results).
//
// Imports: engine, noise, server, store. A command is the top floor: no package
// imports it (docs/architecture.md).
package main
