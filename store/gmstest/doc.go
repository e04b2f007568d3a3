// Package gmstest runs go-mysql-server's own engine test suites against the
// dpsql store, with an unmodified suite: the harness below only supplies
// engines and sessions.
//
// Imports (tests only): store and fastpath (the bulk writer, as the engine
// installs it). No package imports it; it holds no production code.
package gmstest
