package functions

import (
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
)

// ReleaseTable is release for callers outside this package (the engine's
// DP aggregate planner, issue 12): the cost is reserved durably before
// compute reads any row, and the outcome is recorded as one ledger entry.
func (e *Env) ReleaseTable(ctx *sql.Context, db, table, function string, reqEps, reqDelta float64, events []budget.Event, compute func() (any, error)) (any, error) {
	ref := tableRef{db: db, table: table, key: catalog.Key(db, table)}
	return e.release(ctx, ref, function, reqEps, reqDelta, events, compute)
}
