package functions

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
)

// dpMean implements DP_MEAN('<table>', '<column>', ε).
func (e *Env) dpMean(ctx *sql.Context, args []any) (any, error) {
	name, err := argString(args, 0, "table")
	if err != nil {
		return nil, err
	}
	colArg, err := argString(args, 1, "column")
	if err != nil {
		return nil, err
	}
	eps, err := argEpsilon(args, 2)
	if err != nil {
		return nil, err
	}
	ref, err := e.protectedTable(ctx, name)
	if err != nil {
		return nil, err
	}
	col, err := ref.column(colArg)
	if err != nil {
		return nil, err
	}
	b, ok := e.Catalog.Bounds(ref.key, col)
	if !ok {
		return nil, fmt.Errorf("column %s of %s has no declared bounds (CALL dp_bounds first)", col, ref.key)
	}
	n, err := e.Store.RowCount(ref.db, ref.table)
	if err != nil {
		return nil, fmt.Errorf("row count of %s: %w", ref.key, err)
	}
	m, err := mechanism.NewMean(b.Lo, b.Hi, eps, n)
	if err != nil {
		return nil, err
	}
	return e.release(ctx, ref, "DP_MEAN", eps, 0, []budget.Event{m.Event()}, func() (any, error) {
		if v, pushed, err := e.pushMean(ref, col, m); pushed { // scale-out (issue 14)
			return v, err
		}
		acc := m.Accumulator()
		stop := scanCheck(ctx)
		if _, err := e.Store.ScanFloats(ref.db, ref.table, []string{col}, func(row []float64) error {
			acc.Add(row[0])
			return stop()
		}); err != nil {
			return nil, fmt.Errorf("scan %s: %w", ref.key, err)
		}
		return acc.Release()
	})
}
