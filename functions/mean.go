package functions

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
)

// dpMean implements DP_MEAN('<table>', '<column>', ε [, '<options>']); the
// only option is dry_run=1.
func (e *Env) dpMean(ctx *sql.Context, args []any) (any, error) {
	return e.executeDryRunOnly(ctx, args, 3, e.planMean)
}

// planMean plans DP_MEAN from public inputs: the column's declared bounds
// and the row count.
func (e *Env) planMean(ctx *sql.Context, args []any) (*releasePlan, error) {
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
	if u, ok := e.Catalog.UnitOf(ref.key); ok {
		// Person level: AVG over the unit, the mean of per-person means,
		// each clamped to the declared bounds (no row count: it is not
		// public on a unit's table).
		return e.planUnit(ctx, ref, u, "DP_MEAN", UnitRequest{Kind: UnitMean, Column: col, Epsilon: eps}, func(v []float64) (any, error) {
			if len(v) != 1 {
				return nil, fmt.Errorf("DP_MEAN: %d values released, want 1", len(v))
			}
			return v[0], nil
		})
	}
	n, err := e.Store.RowCount(ref.db, ref.table)
	if err != nil {
		return nil, fmt.Errorf("row count of %s: %w", ref.key, err)
	}
	m, err := mechanism.NewMean(b.Lo, b.Hi, eps, n)
	if err != nil {
		return nil, err
	}
	return &releasePlan{
		fn: "DP_MEAN", ref: ref, reqEps: eps, events: []budget.Event{m.Event()},
		mechanism:   "Laplace mean: clipped sum / n + Laplace noise, clamped to the bounds",
		calibration: map[string]float64{"sensitivity": m.Sensitivity(), "laplace_scale": m.Scale()},
		hyper:       map[string]any{"lower_bound": b.Lo, "upper_bound": b.Hi},
		info:        map[string]any{"column": col, "n": n},
		compute: func() (any, error) {
			if tf := e.Reads(ref.key, []string{col})[0].Transform; tf == "" { // scale-out (issue 14); transforms are applied on read
				if v, pushed, err := e.pushMean(ref, col, m); pushed {
					return v, err
				}
			}
			acc := m.Accumulator()
			stop := scanCheck(ctx)
			if _, err := e.scanDP(ref, []string{col}, func(row []float64) error {
				acc.Add(row[0])
				return stop()
			}); err != nil {
				return nil, fmt.Errorf("scan %s: %w", ref.key, err)
			}
			return acc.Release()
		},
	}, nil
}
