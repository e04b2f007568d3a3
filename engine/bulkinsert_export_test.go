package engine

import (
	"github.com/dpsql/dpsql/dpquery"
	"github.com/dpsql/dpsql/fastpath"
)

// The fast paths moved to package fastpath (issue 26); the tests here keep
// their names for its switches and counters.

// SetBulkInsertMinBytes sets the size from which multi-row INSERTs take the
// fast path and returns a function restoring the old value.
func SetBulkInsertMinBytes(n int) (restore func()) { return fastpath.SetBulkInsertMinBytes(n) }

// BulkRewrites is the number of INSERT statements rewritten so far.
func BulkRewrites() int64 { return fastpath.BulkRewrites() }

// SetBulkLoadOff disables (true) or enables the store-level bulk writer
// and returns a function restoring the old setting.
func SetBulkLoadOff(off bool) (restore func()) { return fastpath.SetBulkLoadOff(off) }

// BulkLoads is the number of statements the bulk writer ran so far.
func BulkLoads() int64 { return fastpath.BulkLoads() }

// IsLoadData is isLoadData (fastpath/restart.go) for tests.
func IsLoadData(q string) bool { return fastpath.IsLoadData(q) }

// IsLockingRead is pinIfLockingRead's test (fastpath/restart.go) for tests.
func IsLockingRead(q string) bool { return fastpath.IsLockingRead(q) }

// PipesRunning is the number of live bulk-source producers (fastpath/bulkpipe.go).
func PipesRunning() int64 { return fastpath.PipesRunning() }

// IntLiteral is intLiteral (fastpath/bulkinsert.go) for tests.
var IntLiteral = fastpath.IntLiteral

// SetTextInsertCache turns the text INSERT plan cache (fastpath/textinsert.go)
// on or off and returns a function restoring the old setting.
func (e *Engine) SetTextInsertCache(on bool) (restore func()) { return e.plans.SetTextInsertCache(on) }

// SplitTextInsert is splitTextInsert (fastpath/textinsert.go) for tests: the
// template, or false.
func SplitTextInsert(q string) (string, bool) { return fastpath.SplitTextInsert(q) }

// TextInsertFastHits is the number of text INSERTs that re-used a plan
// without binding again (fastpath/textinsert.go's fastInsert).
func (e *Engine) TextInsertFastHits() uint64 { return e.plans.TextFastHits() }

// SetLegacyDPFilter switches DP aggregate scans back to go-mysql-server's
// evaluator, with its short-circuits, errors and panics (the must-fail
// variant of the issue-25 audits), and returns a function restoring it.
func SetLegacyDPFilter(on bool) (restore func()) { return dpquery.SetLegacyDPFilter(on) }
