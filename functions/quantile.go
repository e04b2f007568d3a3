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
// declared bounds (mechanism/agg/quantile.go). Options: grid=K, dry_run=1;
// on a table of a privacy unit, max_rows_contributed_per_group=C (values
// per person, default 1; mechanism/bound/quantile.go).
func (e *Env) dpQuantile(ctx *sql.Context, args []any) (any, error) {
	p, dry, err := e.planQuantile(ctx, args)
	if err != nil {
		return nil, err
	}
	return e.execute(ctx, p, dry)
}

// planQuantile plans DP_QUANTILE from public inputs only.
func (e *Env) planQuantile(ctx *sql.Context, args []any) (*releasePlan, bool, error) {
	name, err := argString(args, 0, "table")
	if err != nil {
		return nil, false, err
	}
	colArg, err := argString(args, 1, "column")
	if err != nil {
		return nil, false, err
	}
	q, err := argFloat(args, 2, "q")
	if err != nil {
		return nil, false, err
	}
	eps, err := argEpsilon(args, 3)
	if err != nil {
		return nil, false, err
	}
	opts, err := optionsArg(args, 4)
	if err != nil {
		return nil, false, err
	}
	dry, err := dryRunOption(opts)
	if err != nil {
		return nil, false, err
	}
	k, err := opts.int("grid", 1000)
	if err != nil {
		return nil, false, err
	}
	c, err := opts.positiveInt("max_rows_contributed_per_group")
	if err != nil {
		return nil, false, err
	}
	if err := opts.unknown(); err != nil {
		return nil, false, err
	}
	ref, err := e.protectedTable(ctx, name)
	if err != nil {
		return nil, false, err
	}
	col, err := ref.column(colArg)
	if err != nil {
		return nil, false, err
	}
	b, ok := e.Catalog.Bounds(ref.key, col)
	if !ok {
		return nil, false, fmt.Errorf("column %s of %s has no declared bounds (CALL dp_bounds first): the quantile grid must be public", col, ref.key)
	}
	if u, ok := e.Catalog.UnitOf(ref.key); ok {
		// Person level: at most C values per person (docs/privacy/units.md §8).
		p, err := e.planUnit(ctx, ref, u, "DP_QUANTILE", UnitRequest{Kind: UnitQuantile, Column: col, Epsilon: eps, Q: q, Grid: k, MaxRows: c},
			func(v []float64) (any, error) {
				if len(v) != 1 || math.IsNaN(v[0]) {
					return nil, fmt.Errorf("DP_QUANTILE: released %v", v)
				}
				return v[0], nil
			})
		if err != nil {
			return nil, false, err
		}
		delete(p.hyper, "max_groups_contributed")
		p.hyper["q"], p.hyper["grid"] = q, k
		return p, dry, nil
	}
	if c != 0 {
		return nil, false, fmt.Errorf("option max_rows_contributed_per_group applies to tables of a privacy unit only")
	}
	m, err := agg.NewQuantile(b.Lo, b.Hi, q, eps, k)
	if err != nil {
		return nil, false, err
	}
	p := &releasePlan{
		fn: "DP_QUANTILE", ref: ref, reqEps: eps, events: []budget.Event{m.Event()},
		mechanism:   "report-noisy-max over K public grid points of the declared bounds (mechanism/agg/quantile.go)",
		calibration: map[string]float64{"sensitivity": 1, "laplace_scale": m.Scale()},
		hyper:       map[string]any{"q": q, "grid": k, "lower_bound": b.Lo, "upper_bound": b.Hi},
		info:        map[string]any{"column": col},
	}
	p.compute = func() (any, error) {
		acc := m.Accumulator()
		if _, err := e.scanDP(ref, []string{col}, func(row []float64) error {
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
	}
	return p, dry, nil
}
