package functions

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
)

// DP functions on tables of a privacy unit (issue 27 item 5,
// docs/privacy/units.md §8). DP_MEAN, DP_HISTOGRAM and DP_QUANTILE on such a table are
// compiled into person-level queries of the DP query compiler
// (dpquery/rel, which imports this package and implements UnitCompiler;
// the engine wires it): DP_MEAN is AVG over the unit, DP_HISTOGRAM a
// grouped COUNT over public bins with each person's bins bounded,
// DP_QUANTILE a report-noisy-max over at most C values per person. They
// charge the unit's one account. The trainings and DP_EVALUATE keep one
// row per person (unittrain.go).

// UnitKind is a DP function compiled at person level.
type UnitKind int

const (
	UnitMean      UnitKind = iota + 1 // DP_MEAN: AVG, the mean of per-person means
	UnitHistogram                     // DP_HISTOGRAM: COUNT per public bin
	UnitQuantile                      // DP_QUANTILE: at most C values per person, report-noisy-max
)

// UnitRequest is a DP function call on a table of a unit, all public.
type UnitRequest struct {
	Kind              UnitKind
	DB, Table, Column string
	Epsilon           float64
	// MaxGroups (bins per person, histogram) and MaxRows (rows per person
	// and bin; quantile: values per person); 0: the compiler's defaults.
	MaxGroups, MaxRows int
	// Quantile: q and the grid size K.
	Q    float64
	Grid int
	// Histogram bins: public labels, the bin of a stored value (−1: none;
	// total, no panic) and the binning's canonical text.
	Labels []string
	BinOf  func(v any) int
	BinKey string
}

// UnitRelease is a compiled person-level release: what it charges to the
// unit's account, its public description, and the run (after the charge).
type UnitRelease struct {
	Unit               string   // "db.unit"
	Tables             []string // the unit's tables read
	Events             []budget.Event
	Delta              float64
	MaxGroups, MaxRows int
	Mechanism          string
	Bound              string // the per-person contribution bound, in words
	Calibration        map[string]float64
	// Run reads the rows and releases one value per bin (DP_MEAN: one);
	// check is called at public points and aborts the run with its error.
	Run func(check func() error) ([]float64, error)
	// Memory is the run's memory estimate for the admission check before
	// the charge (Env.AdmitUnit); nil: none.
	Memory func() (float64, error)
}

// UnitCompiler compiles a UnitRequest, refusing (before any charge) what
// the compiler cannot bound.
type UnitCompiler interface {
	CompileUnit(req UnitRequest) (*UnitRelease, error)
	// CompileScan compiles the scan of every column of db.table with each
	// row's person found along the table's unit path (the compiler's
	// scan; rows with no person are dropped), for the one-row-per-person
	// reduction of the trainings (unittrain.go).
	CompileScan(db, table string) (*UnitScan, error)
	// CompileFrom compiles a training source written as a FROM clause
	// (tables and inner equi-joins; unqualified tables in db) with the
	// compiler's join rules: each joined row with its person, every column
	// of every table named alias.column (unitjoin.go). Tables canRead
	// refuses are reported as missing.
	CompileFrom(db, from string, canRead func(db, table string) bool) (*UnitScan, error)
}

// UnitScan is a compiled scan with persons of one unit table.
type UnitScan struct {
	Unit    string   // "db.unit"
	Tables  []string // the unit's tables read (the table and its path)
	Columns []string // every column of the table, schema order
	// A joined source (CompileFrom) only: where each column comes from,
	// the canonical FROM text, and its first protected table (the table
	// its models are listed under).
	Origins []ColumnOrigin
	From    string
	Anchor  string
	// Run streams the rows (row valid during the call only) with their
	// person; check is called at public points and aborts with its error.
	Run func(check func() error, fn func(person string, row []any)) error
}

// ColumnOrigin is the stored column behind a column of a joined source.
type ColumnOrigin struct {
	DB, Table, Column string
	Public            bool // the table is public (not protected)
}

// planUnit plans a DP function on a table of unit m through Env.Units:
// the release is charged to the unit's account, and decode turns the
// released values into the function's result.
func (e *Env) planUnit(ctx *sql.Context, ref tableRef, m catalog.Member, fn string, req UnitRequest, decode func([]float64) (any, error)) (*releasePlan, error) {
	if e.Units == nil {
		return nil, errRowLevelOnUnit(ref.key, m, fn)
	}
	req.DB, req.Table = ref.db, ref.table
	r, err := e.Units.CompileUnit(req)
	if err != nil {
		return nil, fmt.Errorf("%s on %s (privacy unit %s): %w", fn, ref.key, m.Unit, err)
	}
	if r.Unit != m.Unit {
		return nil, fmt.Errorf("%s on %s: compiled for unit %s, the table is in %s", fn, ref.key, r.Unit, m.Unit)
	}
	for _, k := range r.Tables {
		if u, ok := e.Catalog.UnitOf(k); !ok || u.Unit != r.Unit {
			return nil, fmt.Errorf("%s: table %s is not in unit %s", fn, k, r.Unit)
		}
	}
	return &releasePlan{
		fn: fn, ref: ref, account: catalog.UnitPrefix + r.Unit, reqEps: req.Epsilon, reqDelta: r.Delta, events: r.Events,
		mechanism: r.Mechanism, calibration: r.Calibration,
		hyper: map[string]any{"max_groups_contributed": r.MaxGroups, "max_rows_contributed_per_group": r.MaxRows},
		info: map[string]any{"column": req.Column, "unit": r.Unit, "unit_tables": r.Tables, "per_person_bound": r.Bound,
			"neighbours": "add or remove one person of unit " + r.Unit + " with all their rows"},
		admit: func(ctx *sql.Context) (func(), error) { return e.AdmitUnit(ctx, r.Memory) },
		compute: func() (any, error) {
			vals, err := r.Run(func() error { return ctx.Err() })
			if err != nil {
				return nil, err
			}
			return decode(vals)
		},
	}, nil
}
