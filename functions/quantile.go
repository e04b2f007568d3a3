package functions

import (
	"fmt"
	"math"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism/agg"
)

// dpQuantile implements DP_QUANTILE('<table>', '<column>', q, ε [, 'grid=K']):
// report-noisy-max over K (default 1000) public grid points of the column's
// declared bounds (mechanism/agg/quantile.go).
func (e *Env) dpQuantile(ctx *sql.Context, args []any) (any, error) {
	name, err := argString(args, 0, "table")
	if err != nil {
		return nil, err
	}
	colArg, err := argString(args, 1, "column")
	if err != nil {
		return nil, err
	}
	q, err := argFloat(args, 2, "q")
	if err != nil {
		return nil, err
	}
	eps, err := argEpsilon(args, 3)
	if err != nil {
		return nil, err
	}
	k := 1000
	if len(args) > 4 {
		s, err := argString(args, 4, "options")
		if err != nil {
			return nil, err
		}
		opts, err := parseOptions(s)
		if err != nil {
			return nil, err
		}
		if k, err = opts.int("grid", 1000); err != nil {
			return nil, err
		}
		if err := opts.unknown(); err != nil {
			return nil, err
		}
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
		return nil, fmt.Errorf("column %s of %s has no declared bounds (CALL dp_bounds first): the quantile grid must be public", col, ref.key)
	}
	m, err := agg.NewQuantile(b.Lo, b.Hi, q, eps, k)
	if err != nil {
		return nil, err
	}
	return e.release(ctx, ref, "DP_QUANTILE", eps, 0, []budget.Event{m.Event()}, func() (any, error) {
		acc := m.Accumulator()
		if _, err := e.Store.ScanFloats(ref.db, ref.table, []string{col}, func(row []float64) error {
			acc.Add(row[0])
			return nil
		}); err != nil {
			return nil, fmt.Errorf("scan %s: %w", ref.key, err)
		}
		v, err := acc.Release()
		if err != nil {
			return nil, err
		}
		if math.IsNaN(v) {
			return nil, fmt.Errorf("quantile: NaN")
		}
		return v, nil
	})
}
