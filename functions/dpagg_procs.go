package functions

import (
	"fmt"
	"strings"

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

// biProcedures are the procedures of issue 12: dp_defaults sets the ε, δ an
// account's DP aggregate queries spend when the session sets no
// dp_epsilon; dp_domain declares the public domain of a categorical column
// (the catalog entry of dp_labels, marked as not a label: catalog.Domains).
func (e *Env) biProcedures(okSchema sql.Schema) []sql.ExternalStoredProcedureDetails {
	return []sql.ExternalStoredProcedureDetails{
		{Name: "dp_defaults", Schema: okSchema, Function: e.dpDefaults},
		{Name: "dp_domain", Schema: okSchema, Function: e.domain},
	}
}

func (e *Env) dpDefaults(ctx *sql.Context, account string, eps, delta float64) (sql.RowIter, error) {
	if err := e.requireOwner(ctx, "dp_defaults"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(account) == "" {
		return nil, fmt.Errorf("dp_defaults: empty account name")
	}
	if err := e.Catalog.SetDPDefaults(account, eps, delta); err != nil {
		return nil, fmt.Errorf("dp_defaults: %w", err)
	}
	if eps == 0 {
		return done("DP aggregate defaults of %s removed", account)
	}
	return done("DP aggregate queries of %s spend ε = %v, δ = %v each unless the session sets dp_epsilon", account, eps, delta)
}
