// Command dpsql-accuracy is the accuracy benchmark of docs/results/accuracy.md:
// every DP_TRAIN kind's default call on the shared/ and synthetic sets, beside
// the non-private scikit-learn models and the constant predictors.
//
//	nice -n 10 go run ./cmd/dpsql-accuracy            # everything, resumable
//	go run ./cmd/dpsql-accuracy -sets iris,wine -kinds auto,lda -eps 1 -runs 3
//
// See docs/results/accuracy.md ("How to regenerate") for the details.
//
// Imports: budget, catalog, engine, mechanism, server. A command is the top floor: no package
// imports it (docs/architecture.md).
package main
