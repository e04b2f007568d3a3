package engine

// SetBulkInsertMinBytes sets the size from which multi-row INSERTs take the
// fast path and returns a function restoring the old value.
func SetBulkInsertMinBytes(n int) (restore func()) {
	old := bulkInsertMinBytes.Swap(int64(n))
	return func() { bulkInsertMinBytes.Store(old) }
}

// BulkRewrites is the number of INSERT statements rewritten so far.
func BulkRewrites() int64 { return bulkRewrites.Load() }

// SetBulkLoadOff disables (true) or enables the store-level bulk writer
// and returns a function restoring the old setting.
func SetBulkLoadOff(off bool) (restore func()) {
	old := bulkLoadOff.Swap(off)
	return func() { bulkLoadOff.Store(old) }
}

// BulkLoads is the number of statements the bulk writer ran so far.
func BulkLoads() int64 { return bulkLoads.Load() }

// IsLoadData is isLoadData (restart.go) for tests.
func IsLoadData(q string) bool { return isLoadData(q) }

// IsLockingRead is pinIfLockingRead's test (restart.go) for tests.
func IsLockingRead(q string) bool { return isSelect(q) && lockingRead.MatchString(q) }

// PipesRunning is the number of live bulk-source producers (bulkpipe.go).
func PipesRunning() int64 { return pipesRunning.Load() }

// IntLiteral is intLiteral (bulkinsert.go) for tests.
var IntLiteral = intLiteral

// SetTextInsertCache turns the text INSERT plan cache (textinsert.go) on or
// off and returns a function restoring the old setting.
func (e *Engine) SetTextInsertCache(on bool) (restore func()) {
	old := e.plans.textOff.Swap(!on)
	return func() { e.plans.textOff.Store(old) }
}

// SplitTextInsert is splitTextInsert (textinsert.go) for tests: the
// template, or false.
func SplitTextInsert(q string) (string, bool) {
	ti, ok := splitTextInsert(q)
	return ti.template, ok
}

// TextInsertFastHits is the number of text INSERTs that re-used a plan
// without binding again (textinsert.go's fastInsert).
func (e *Engine) TextInsertFastHits() uint64 { return e.plans.textFast.Load() }

// SetLegacyDPFilter switches DP aggregate scans back to go-mysql-server's
// evaluator, with its short-circuits, errors and panics (the must-fail
// variant of the issue-25 audits), and returns a function restoring it.
func SetLegacyDPFilter(on bool) (restore func()) {
	old := legacyDPFilter.Swap(on)
	return func() { legacyDPFilter.Store(old) }
}
