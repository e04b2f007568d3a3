// Command dpsql-bench measures dpsql's SQL-level speed targets side by side
// in one process: each DP function against the plain SQL query it is
// compared with, alternating runs on the same table, medians reported.
//
//	go run ./cmd/dpsql-bench -rows 1000000 -reps 5
//
// Cases: bulk load (rows/s, durable); DP_MEAN vs SELECT AVG (1M × 10);
// DP_LSQ linear vs SELECT SUM (1M × 20); DP_SVM_TRAIN rbf dim=256 on
// 200k × 20 (wall time; compare with the sklearn script in docs/results);
// train (-cases train): DP_TRAIN logreg, lda and gnb on a 1M × 20 table
// with a 0/1 label beside scikit-learn's LogisticRegression().fit on the
// same rows (a /usr/bin/python3 process fed the same CSV, timed by its own
// clock) and SELECT SUM(c1), …, SUM(c20), one run of each per round
// (docs/results/speed.md, issue 28).
//
// Imports: engine, noise, server, store. A command is the top floor: no package
// imports it (docs/architecture.md).
package main
