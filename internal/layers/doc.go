// Package layers holds no code: its test checks that the packages of the
// module sit on the floors of docs/architecture.md — every dpsql import
// points to a lower floor, every package has a floor and a doc.go, and the
// mechanism packages and the privacy core import nothing that knows SQL.
//
// Imports: nothing. Its test runs `go list` on the module.
package layers
