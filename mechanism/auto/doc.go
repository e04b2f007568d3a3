// Package auto holds DP_TRAIN's public defaults: which mechanism kind=auto
// trains, and the default δ of a training release. Every rule here is a
// function of public quantities only — classification or regression (from
// the catalog), n, d, K, ε and the table's δ budget — never of the rows.
// The rules and the experiments they were derived from are in
// docs/mechanisms/auto.md.
//
// Imports: mechanism/gauss, mechanism/logreg. Like every mechanism package it may not
// import catalog, store, functions, go-mysql-server or anything else that
// knows SQL, nor another mechanism that imports it (docs/architecture.md).
package auto
