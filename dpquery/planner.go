package dpquery

import (
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
)

// Planner plans analysts' DP aggregate queries (Plan, dpagg.go) over the
// catalog's protected tables, releasing through env (the accountant, the
// rows behind functions.Rows, the answer cache).
type Planner struct {
	cat *catalog.Catalog
	env *functions.Env
}

// New returns the DP aggregate planner of a catalog and the DP functions'
// environment.
func New(cat *catalog.Catalog, env *functions.Env) *Planner {
	return &Planner{cat: cat, env: env}
}

// HistogramTFName is the name of the DP_HISTOGRAM table function.
const HistogramTFName = histogramTFName

// NewHistogramTF returns the DP_HISTOGRAM table function over env, for the
// database provider.
func NewHistogramTF(env *functions.Env) sql.TableFunction { return &histogramTF{env: env} }

// TableRelease reports whether node is a ★ table function (DP_HISTOGRAM)
// and whether it is the sole source of root: the guard's check that it is
// evaluated exactly once (guard.Guard.TableRelease).
func TableRelease(root, node sql.Node) (release, sole bool) {
	tf, ok := node.(*histogramTF)
	return ok, ok && soleHistogramSource(root, tf)
}

// SetLegacyDPFilter switches DP aggregate scans back to go-mysql-server's
// evaluator, with its short-circuits, errors and panics (the must-fail
// variant of the issue-25 audits; tests only), and returns a function
// restoring it.
func SetLegacyDPFilter(on bool) (restore func()) {
	old := legacyDPFilter.Swap(on)
	return func() { legacyDPFilter.Store(old) }
}
