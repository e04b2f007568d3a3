// Package syntest holds test-only data support shared by the mechanism
// packages' tests and result harnesses: loading a labelled CSV with its
// public declaration (the demo catalog's bounds for testdata/, the owner
// declarations below for the shared/ sets). No production package imports
// it, and it draws no randomness (math/rand stays in _test.go files).
//
// Imports: no dpsql package; it may not import any (it describes data, the
// tests that use it decide what to do with it).
package syntest
