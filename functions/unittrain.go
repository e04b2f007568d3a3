package functions

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// Trainings and DP_EVALUATE on a table of a privacy unit (issue 27 item 5,
// docs/privacy/units.md §10): ONE reduction for every kind. The existing
// row-level release — replace-one-row neighbours, public n — runs unchanged
// on a data set of exactly m rows holding at most one row per person:
//
//  1. the call is planned on a public placeholder (unitPlanRows rows, no
//     data): every public check of the function runs, nothing uses n;
//  2. the unit's account is charged (ε, δ): the person count's Laplace ε₁
//     and the row-level release's (ε₂, δ) as one generic event;
//  3. the compiler's scan with persons (dpquery/rel, Env.Units) streams
//     the table; bound.Sampler keeps one uniform row per person, releases
//     P̃ and builds the m-row set (padding: the all-NULL row);
//  4. the call is planned again on that set, n = m (auto's kind, T rules,
//     the prior rule, the memory estimate all use m only), and its own
//     compute runs, reading the m rows through tableRef.sample.

// unitPlanRows is the public row count the first planning pass sees: it
// only runs the function's public checks (the plan it yields is dropped).
const unitPlanRows = 100000

// errCaptured ends a planning pass: execute hands the plan back instead of
// running it.
var errCaptured = errors.New("plan captured")

// unitSample is the m-row person-level data set of one unit table, served
// in place of the table to the row-level code (Rows).
type unitSample struct {
	base   Rows
	db     string
	table  string
	key    string
	cols   []string // schema order
	rows   [][]any  // nil in the planning pass
	m      int64
	delta  float64 // the δ of the charge, fixed for the second pass
	fixed  bool
	unit   string
	oneRow *bound.OneRow
	// A joined source (unitjoin.go) only: the FROM text as the call wrote
	// it (resolveTable serves it), the joined schema, the merged public
	// catalog entry and the table its models are listed under.
	source string
	schema sql.Schema
	entry  *catalog.Table
	anchor string
}

// unitCall is a planning pass running under a query: resolveTable attaches
// s to the table, execute captures the plan.
type unitCall struct {
	s    *unitSample
	plan *releasePlan
	dry  bool
}

func (rt *runtimeState) unitCallOf(ctx *sql.Context) *unitCall {
	if ctx == nil {
		return nil
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.units[ctx]
}

// rows is the storage a release reads ref from: its person-level sample,
// or the store.
func (e *Env) rows(ref tableRef) Rows {
	if ref.sample != nil {
		return ref.sample
	}
	return e.Store
}

// capturePlan runs impl under ctx with s attached and returns the plan it
// would execute.
func (e *Env) capturePlan(ctx *sql.Context, s *unitSample, args []any, impl callFn) (*releasePlan, bool, error) {
	rt := e.rt()
	uc := &unitCall{s: s}
	rt.mu.Lock()
	if rt.units[ctx] != nil {
		rt.mu.Unlock()
		return nil, false, fmt.Errorf("a person-level release is already being planned in this statement")
	}
	rt.units[ctx] = uc
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		delete(rt.units, ctx)
		rt.mu.Unlock()
	}()
	_, err := impl(ctx, args)
	if errors.Is(err, errCaptured) && uc.plan != nil {
		return uc.plan, uc.dry, nil
	}
	if err == nil {
		err = fmt.Errorf("internal: the row-level function did not plan a release")
	}
	return nil, false, err
}

// personLevel wraps a training or DP_EVALUATE (table argument tableArg, ε
// argument epsArg): on a protected table of a unit, or on a FROM-clause
// source joining a unit's tables with public tables (unitjoin.go), it runs
// the reduction.
func (e *Env) personLevel(name string, tableArg, epsArg int, impl callFn) callFn {
	return func(ctx *sql.Context, args []any) (any, error) {
		if len(args) > max(tableArg, epsArg) {
			if table, err := argString(args, tableArg, "table"); err == nil {
				if isSourceText(table) {
					src, err := e.joinSource(ctx, name, table)
					if err != nil {
						return nil, err
					}
					return e.unitRowLevel(ctx, name, src, args, epsArg, impl)
				}
				if ref, err := e.resolveTable(ctx, table); err == nil && e.Catalog.IsProtected(ref.key) {
					if m, ok := e.Catalog.UnitOf(ref.key); ok {
						if e.Units == nil {
							return nil, errRowLevelOnUnit(ref.key, m, name)
						}
						scan, err := e.Units.CompileScan(ref.db, ref.table)
						if err != nil {
							return nil, fmt.Errorf("%s on %s (privacy unit %s): %w", name, ref.key, m.Unit, err)
						}
						if scan.Unit != m.Unit {
							return nil, fmt.Errorf("%s on %s: compiled for unit %s, the table is in %s", name, ref.key, scan.Unit, m.Unit)
						}
						return e.unitRowLevel(ctx, name, unitSource{ref: ref, scan: scan}, args, epsArg, impl)
					}
				}
			}
		}
		return impl(ctx, args)
	}
}

// unitSource is what the reduction reads: a unit table, or a joined
// source (text, schema and entry set; ref's key is the canonical FROM).
type unitSource struct {
	ref    tableRef
	scan   *UnitScan
	text   string
	schema sql.Schema
	entry  *catalog.Table
}

// unitRowLevel is the reduction of one call (see the top of this file).
func (e *Env) unitRowLevel(ctx *sql.Context, fn string, src unitSource, args []any, epsArg int, impl callFn) (any, error) {
	ref, scan := src.ref, src.scan
	eps, err := argEpsilon(args, epsArg)
	if err != nil {
		return nil, err
	}
	or, err := bound.NewOneRow(eps)
	if err != nil {
		return nil, err
	}
	inner := append([]any(nil), args...)
	inner[epsArg] = or.Eps2
	sample := func(rows [][]any, n int64) *unitSample {
		return &unitSample{base: e.Store, db: ref.db, table: ref.table, key: ref.key, cols: scan.Columns,
			rows: rows, m: n, unit: scan.Unit, oneRow: or,
			source: src.text, schema: src.schema, entry: src.entry, anchor: scan.Anchor}
	}
	// Pass 1: the function's public checks, on no data.
	p0, dry, err := e.capturePlan(ctx, sample(nil, unitPlanRows), inner, impl)
	if err != nil {
		return nil, err
	}
	delta := p0.reqDelta
	if err := withinCharge(p0, or.Eps2, delta); err != nil {
		return nil, err
	}
	if e.MaxReleaseMemory > 0 && !dry {
		// The estimates grow with n: one that exceeds the limit at the
		// smallest m (MinRows) exceeds it at every m, so it is refused now,
		// from public values only, before anything is charged.
		est, ok := e.withSample(ctx, sample(nil, bound.MinRows), func() (memEstimate, bool) { return e.estimate(ctx, fn, inner) })
		if ok && est.bytes > float64(e.MaxReleaseMemory) {
			return nil, fmt.Errorf("this release would need more than %s of memory even on a one-row training set (%s), above the server's limit of %s per release (--max-release-memory); nothing was charged",
				formatBytes(est.bytes), est.detail, formatBytes(float64(e.MaxReleaseMemory)))
		}
	}
	account := catalog.UnitPrefix + scan.Unit
	events := []budget.Event{or.CountEvent(), {Kind: budget.Generic, Epsilon: or.Eps2, Delta: delta}}
	info := map[string]any{}
	for k, v := range p0.info {
		switch k {
		case "n", "auto", "params": // decided from m, after the count
		default:
			info[k] = v
		}
	}
	if _, auto := p0.info["auto"]; auto {
		// auto's kind (and the default model name from it) is chosen
		// from m, after the count.
		delete(info, "kind")
		delete(info, "model")
	}
	bnd := fmt.Sprintf("one row per person, uniformly chosen (crypto RNG); the row-level mechanism runs on exactly m rows, m = max(%d, ⌊P̃ − %v⌋) from a noisy person count P̃ (Laplace scale %v, ε₁ = %v), a uniform m-subset of the persons' rows or, if m exceeds the persons, all of them and all-NULL padding rows",
		bound.MinRows, or.Margin, or.CountScale(), or.Eps1)
	maps := map[string]any{"unit": scan.Unit, "unit_tables": scan.Tables, "per_person_bound": bnd, "rows_per_person": 1,
		"neighbours":     "add or remove one person of unit " + scan.Unit + " with all their rows",
		"row_level_plan": "decided after the person count from m (auto's kind, iteration counts, calibration, the memory estimate); no row count is used before",
		"epsilon_split":  map[string]float64{"persons_count": or.Eps1, "row_level": or.Eps2}}
	if src.text != "" {
		maps["source"] = scan.From
		maps["join_rule"] = "the compiler's joins (docs/privacy/units.md §4): protected ⨝ public on any key, protected ⨝ protected of unit " + scan.Unit + " on the unit's keys; every joined row belongs to the one person of its unit rows, and one joined row per person is kept however many the join gives them"
	}
	for k, v := range maps {
		info[k] = v
	}
	plan := &releasePlan{
		fn: p0.fn, ref: ref, account: account, reqEps: eps, reqDelta: delta, events: events,
		mechanism: fmt.Sprintf("person level (docs/privacy/units.md §10): one row per person, a noisy person count at ε₁ = %v sets the public size m, then the row-level %s at (ε₂ = %v, δ = %v) on exactly m rows", or.Eps1, fn, or.Eps2, delta),
		calibration: map[string]float64{"persons_count_epsilon": or.Eps1, "persons_laplace_scale": or.CountScale(),
			"size_margin": or.Margin, "size_beta": bound.SizeBeta, "row_level_epsilon": or.Eps2},
		hyper: map[string]any{"count_share": bound.CountShare, "min_rows": bound.MinRows},
		info:  info,
	}
	plan.compute = func() (any, error) {
		sp := or.Sampler()
		stop := stopOf(ctx)
		if err := scan.Run(func() error {
			if stop.Stopped() {
				return ErrKilled
			}
			return nil
		}, sp.Row); err != nil {
			return nil, err
		}
		rows, size, err := sp.Release(make([]any, len(scan.Columns)))
		if err != nil {
			return nil, err
		}
		s := sample(rows, int64(size))
		s.delta, s.fixed = delta, true
		// Pass 2: the row-level plan at n = m. Everything here depends on
		// m only (a post-processing of P̃), failures included.
		p1, _, err := e.capturePlan(ctx, s, inner, impl)
		if err != nil {
			return nil, err
		}
		if err := withinCharge(p1, or.Eps2, delta); err != nil {
			return nil, err
		}
		if e.MaxReleaseMemory > 0 {
			est, ok := e.withSample(ctx, s, func() (memEstimate, bool) { return e.estimate(ctx, fn, inner) })
			if ok && est.bytes > float64(e.MaxReleaseMemory) {
				return nil, fmt.Errorf("the m-row training set needs about %s (%s), above --max-release-memory", formatBytes(est.bytes), est.detail)
			}
		}
		return p1.compute()
	}
	return e.execute(ctx, plan, dry)
}

// withSample runs f with s attached to ctx (the memory estimate of the
// second pass resolves the table again).
func (e *Env) withSample(ctx *sql.Context, s *unitSample, f func() (memEstimate, bool)) (memEstimate, bool) {
	rt := e.rt()
	rt.mu.Lock()
	rt.units[ctx] = &unitCall{s: s}
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		delete(rt.units, ctx)
		rt.mu.Unlock()
	}()
	return f()
}

// withinCharge checks that a row-level plan spends at most (ε₂, δ) under
// basic composition (the generic event charged for it).
func withinCharge(p *releasePlan, eps2, delta float64) error {
	e, d := eventsCost(p.events)
	const slack = 1 + 1e-9
	if e > eps2*slack || d > delta*slack || p.reqEps > eps2*slack || p.reqDelta > delta*slack {
		return fmt.Errorf("internal: the row-level plan spends (%v, %v), more than the (%v, %v) charged for it", e, d, eps2, delta)
	}
	return nil
}

// Rows over the sample: the unit table is the m rows, every other table
// the store's.

func (s *unitSample) is(db, table string) bool {
	return strings.EqualFold(db, s.db) && strings.EqualFold(table, s.table)
}

func (s *unitSample) TableSchema(db, table string) (sql.Schema, error) {
	if s.schema != nil && s.is(db, table) {
		return s.schema, nil
	}
	return s.base.TableSchema(db, table)
}

func (s *unitSample) RowCount(db, table string) (int64, error) {
	if s.is(db, table) {
		return s.m, nil
	}
	return s.base.RowCount(db, table)
}

// project maps requested columns to positions of the sample's rows.
func (s *unitSample) project(cols []string) ([]int, error) {
	at := make([]int, len(cols))
	for i, c := range cols {
		at[i] = -1
		for j, sc := range s.cols {
			if strings.EqualFold(c, sc) {
				at[i] = j
			}
		}
		if at[i] < 0 {
			return nil, fmt.Errorf("table %s has no column %q", s.key, c)
		}
	}
	return at, nil
}

func (s *unitSample) ScanValues(db, table string, cols []string, fn func(row []any) error) (int64, error) {
	if !s.is(db, table) {
		return s.base.ScanValues(db, table, cols, fn)
	}
	at, err := s.project(cols)
	if err != nil {
		return 0, err
	}
	out := make([]any, len(cols))
	for _, r := range s.rows {
		for i, j := range at {
			out[i] = r[j]
		}
		if err := fn(out); err != nil {
			return 0, err
		}
	}
	return int64(len(s.rows)), nil
}

// ScanFloats converts as the store does: NULL and non-numbers are NaN.
func (s *unitSample) ScanFloats(db, table string, cols []string, fn func(row []float64) error) (int64, error) {
	if !s.is(db, table) {
		return s.base.ScanFloats(db, table, cols, fn)
	}
	at, err := s.project(cols)
	if err != nil {
		return 0, err
	}
	out := make([]float64, len(cols))
	for _, r := range s.rows {
		for i, j := range at {
			f, ok := ToFloat(r[j])
			if !ok {
				f = math.NaN()
			}
			out[i] = f
		}
		if err := fn(out); err != nil {
			return 0, err
		}
	}
	return int64(len(s.rows)), nil
}
