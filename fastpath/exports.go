package fastpath

import (
	gmsserver "github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/store"
)

// What the engine and the server wire in (issue 26 moved these files out of
// package engine), and the switches and counters its tests read.

// NewHandler puts the plan cache and statement restarts in front of
// go-mysql-server's handler h; sessions maps connections to their store
// sessions. SetSessionManager completes it once the server is built.
func NewHandler(h *gmsserver.Handler, pc *PlanCache, sessions *Sessions) *Handler {
	return &Handler{Handler: h, pc: pc, sessions: sessions}
}

// SetSessionManager gives the handler the server's session manager.
func (h *Handler) SetSessionManager(sm *gmsserver.SessionManager) { h.sm.Store(sm) }

// Put records the store session of connection id.
func (s *Sessions) Put(id uint32, ss *store.Session) { s.m.Store(id, ss) }

// NewBulkParser wraps p with the multi-row INSERT rewrite (bulkinsert.go).
func NewBulkParser(p sql.Parser, st *store.Store) sql.Parser { return bulkParser{Parser: p, st: st} }

// InsertValuesTFName is the name of the bulk INSERT's table function.
const InsertValuesTFName = insertValuesTFName

// NewInsertValuesTF returns the bulk INSERT's table function, for the
// database provider.
func NewInsertValuesTF() sql.TableFunction { return &insertValuesTF{} }

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
func (pc *PlanCache) SetTextInsertCache(on bool) (restore func()) {
	old := pc.textOff.Swap(!on)
	return func() { pc.textOff.Store(old) }
}

// SplitTextInsert is splitTextInsert (textinsert.go) for tests: the
// template, or false.
func SplitTextInsert(q string) (string, bool) {
	ti, ok := splitTextInsert(q)
	return ti.template, ok
}

// TextFastHits is the number of text INSERTs that re-used a plan without
// binding again (textinsert.go's fastInsert).
func (pc *PlanCache) TextFastHits() uint64 { return pc.textFast.Load() }

// StripLeadingComments drops a statement's leading blanks, semicolons and
// comments (the server's conformance rewrites match what follows).
func StripLeadingComments(q string) string { return stripLeadingComments(q) }
