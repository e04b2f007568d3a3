package functions

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/mechanism"
)

// Env is what the SQL adapters need: storage read directly (not through the
// analyst's privileges), the catalog and the accountant.
type Env struct {
	Store   Rows
	Catalog *catalog.Catalog
	Budget  *budget.Accountant
	Log     logrus.FieldLogger
	// CanRead reports whether the account running ctx may use db.table in
	// DP functions and see it in the dp_* views (the engine checks for the
	// SELECT privilege). Tables it may not use are answered exactly like
	// tables that do not exist. nil allows everything (embedded use).
	CanRead func(ctx *sql.Context, db, table string) bool
	// MaxReleaseMemory bounds, in bytes, the public memory estimate of one
	// release and the sum of the estimates of all running releases
	// (limits.go); 0 means no limit.
	MaxReleaseMemory int64
	// ForeignKeys lists a database's declared foreign keys, for privacy
	// units inherited through them (units.go); nil: explicit units only.
	ForeignKeys ForeignKeySource
	// Units compiles DP functions on tables of a privacy unit into
	// person-level releases (unitfn.go; dpquery/rel, wired by the engine);
	// nil: they are refused.
	Units UnitCompiler

	// unitMu orders unit declarations (exclusive) against the check-and-
	// reserve of row-level releases (shared), see declareUnits.
	unitMu sync.RWMutex
	rtOnce sync.Once
	rtv    *runtimeState
}

// tableRef is a resolved table argument.
type tableRef struct {
	db, table string
	key       string // catalog key "db.table"
	schema    sql.Schema
	// ctx is the query that resolved the table: a model name reserved for
	// the release is held in its name (modelName) until the call ends.
	ctx *sql.Context
	// sample, on a table of a privacy unit, is the person-level data set
	// the release reads instead of the table (unittrain.go).
	sample *unitSample
}

var identRE = regexp.MustCompile(`^[A-Za-z0-9_$]{1,64}$`)

// resolveTable resolves '<table>' (current database) or '<db>.<table>'.
// Everything it reports (existence, protection) is public.
func (e *Env) resolveTable(ctx *sql.Context, name string) (tableRef, error) {
	if uc := e.rt().unitCallOf(ctx); uc != nil && uc.s.source != "" && name == uc.s.source {
		return uc.s.joinedRef(ctx), nil // the joined source of the call planning now (unitjoin.go)
	}
	if isSourceText(name) {
		return tableRef{}, fmt.Errorf("invalid table name %q: a FROM clause (a join) is a training source of DP_TRAIN, DP_SVM_TRAIN, DP_LSQ, DP_LSQ_PREDICT, DP_LMGC_TRAIN and DP_EVALUATE only; aggregates over a join are SELECT … FROM … JOIN … with DP (docs/sql.md)", strings.TrimSpace(name))
	}
	db, table, err := qualify(ctx, name, "table")
	if err != nil {
		return tableRef{}, err
	}
	if !identRE.MatchString(db) || !identRE.MatchString(table) {
		return tableRef{}, fmt.Errorf("invalid table name %q", name)
	}
	// A table the account may not read is reported exactly as a missing
	// one, so that its existence does not leak either.
	if !e.canRead(ctx, db, table) {
		return tableRef{}, noSuchTable(db, table)
	}
	schema, err := e.Store.TableSchema(db, table)
	if err != nil {
		return tableRef{}, noSuchTable(db, table)
	}
	ref := tableRef{db: db, table: table, key: catalog.Key(db, table), schema: schema, ctx: ctx}
	if uc := e.rt().unitCallOf(ctx); uc != nil && uc.s.key == ref.key {
		ref.sample = uc.s
	}
	return ref, nil
}

// qualify splits 'db.name' or places a bare name in the session's current
// database, as MySQL does for tables (and dpsql for models); what ("table",
// "model") names the object in the error when there is no database.
func qualify(ctx *sql.Context, name, what string) (db, bare string, err error) {
	db, bare, qualified := strings.Cut(name, ".")
	if !qualified {
		db, bare = ctx.GetCurrentDatabase(), name
		if db == "" {
			return "", "", fmt.Errorf("no database selected: write the %s as '<db>.<%s>'", what, what)
		}
	}
	return strings.Trim(db, "`"), strings.Trim(bare, "`"), nil
}

func noSuchTable(db, table string) error {
	return fmt.Errorf("table %s.%s does not exist", db, table)
}

// canRead applies Env.CanRead.
func (e *Env) canRead(ctx *sql.Context, db, table string) bool {
	return e.CanRead == nil || e.CanRead(ctx, db, table)
}

// canReadKey is canRead for a catalog key "db.table".
func (e *Env) canReadKey(ctx *sql.Context, key string) bool {
	db, table, ok := strings.Cut(key, ".")
	return ok && e.canRead(ctx, db, table)
}

// protectedTable resolves a table argument that must be protected.
func (e *Env) protectedTable(ctx *sql.Context, name string) (tableRef, error) {
	ref, err := e.resolveTable(ctx, name)
	if err != nil {
		return ref, err
	}
	if !e.isProtected(ref) {
		return ref, fmt.Errorf("table %s is not protected: DP functions run on protected tables (CALL dp_protect first)", ref.key)
	}
	return ref, nil
}

// rowLevelTable resolves the protected table of a row-level release and
// refuses a table of a privacy unit at once: planning, dry runs and memory
// estimates use the table's row count, which is not public at person level
// (docs/privacy/units.md §2), and row-level proofs protect one row, not a
// person. releaseAccount checks again under unitMu before charging.
func (e *Env) rowLevelTable(ctx *sql.Context, name, function string) (tableRef, error) {
	ref, err := e.protectedTable(ctx, name)
	if err != nil {
		return ref, err
	}
	if m, ok := e.Catalog.UnitOf(ref.key); ok && ref.sample == nil {
		return ref, errRowLevelOnUnit(ref.key, m, function)
	}
	return ref, nil
}

// column returns the schema's spelling of a column name.
func (r tableRef) column(name string) (string, error) {
	for _, c := range r.schema {
		if strings.EqualFold(c.Name, name) {
			return c.Name, nil
		}
	}
	if r.sample != nil && r.sample.source != "" && !strings.Contains(name, ".") {
		// A joined source's columns are alias.column: a bare name
		// resolves when exactly one table has it (as in SQL).
		var found []string
		for _, c := range r.schema {
			if _, bare, _ := strings.Cut(c.Name, "."); strings.EqualFold(bare, name) {
				found = append(found, c.Name)
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
		if len(found) > 1 {
			return "", fmt.Errorf("column %q is ambiguous in %s: write one of %s", name, r.key, strings.Join(found, ", "))
		}
	}
	return "", fmt.Errorf("table %s has no column %q", r.key, name)
}

// errMechanismFailed is what an analyst sees when a mechanism fails after
// touching data: the reason could depend on the rows, so it goes to the
// owner-only ledger and the log, never to the analyst.
var errMechanismFailed = errors.New("the mechanism failed after reading the data; the privacy charge is kept (the reason is in dp_ledger)")

// ErrKilled is what the client of a killed release sees (KILL QUERY or
// KILL on its connection). If the release was already charged, the charge
// stays and the ledger says "killed"; no result and no model are released.
var ErrKilled = errors.New("query killed: the release was stopped and returns nothing (if it had been charged, the charge is kept and dp_ledger says killed)")

// release reserves the cost of a release durably, runs compute, and records
// the outcome. Once compute has started the charge stays, whatever happens.
//
// compute runs on its own goroutine so that KILL QUERY / KILL (which cancel
// the query's context) return to the client within a second: the release is
// then completed as "killed" and any later attempt of compute to save a
// model is refused (commit); compute itself runs on until it notices (the
// adapters' scans check the context) or ends, holding its memory
// reservation until then.
func (e *Env) release(ctx *sql.Context, ref tableRef, function string, reqEps, reqDelta float64, events []budget.Event, compute func() (any, error)) (any, error) {
	return e.releaseAccount(ctx, ref, ref.key, function, reqEps, reqDelta, events, compute)
}

// releaseAccount is release charging budget account: the table's own for
// row-level releases (refused on a table of a privacy unit), the unit's
// for unit-level ones (ReleaseUnit).
func (e *Env) releaseAccount(ctx *sql.Context, ref tableRef, account, function string, reqEps, reqDelta float64, events []budget.Event, compute func() (any, error)) (any, error) {
	if ctx.Err() != nil {
		return nil, ErrKilled // nothing charged
	}
	e.unitMu.RLock()
	if account == ref.key {
		if m, ok := e.Catalog.UnitOf(ref.key); ok {
			e.unitMu.RUnlock()
			return nil, errRowLevelOnUnit(ref.key, m, function)
		}
	}
	rec, err := e.Budget.Reserve(budget.Request{
		Table:     account,
		User:      UserOf(ctx),
		Function:  function,
		Requested: [2]float64{reqEps, reqDelta},
		Events:    events,
	})
	e.unitMu.RUnlock()
	if err != nil {
		return nil, err
	}
	// A writing statement that made a release is not re-executed after a
	// row lock (fastpath/restart.go): it would charge the release again.
	if s, ok := ctx.Session.(interface{ NoStatementRestart() }); ok {
		s.NoStatementRestart()
	}
	rt := e.rt()
	// The gate lives until compute returns, which after a KILL is later
	// than this call: a late save must still find it closed.
	g := rt.beginRun(ctx)
	type result struct {
		out any
		err error
	}
	done := make(chan result, 1)
	free := rt.handOverMemory(ctx)
	// RunningReleases counts this release until its computation has ended
	// and its outcome is in the ledger, whichever comes last.
	recorded := make(chan struct{})
	defer close(recorded)
	rt.running.Add(1)
	go func() {
		defer func() { <-recorded; rt.running.Add(-1) }()
		defer rt.endRun(ctx, g)
		defer free()
		var r result
		func() {
			defer func() {
				if p := recover(); p != nil {
					r = result{err: fmt.Errorf("internal error: %v", p)}
					e.Log.WithField("stack", string(debug.Stack())).Error("release panicked")
				}
			}()
			r.out, r.err = compute()
		}()
		if r.err == nil {
			r.err = checkOutput(r.out)
		}
		done <- r
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		if g.kill() {
			if err := e.Budget.Complete(rec.ID, budget.StatusKilled, "stopped by KILL QUERY / KILL; nothing was returned or saved"); err != nil {
				e.Log.WithError(err).WithField("release", rec.ID).Error("could not record release outcome")
			}
			e.Log.WithFields(logrus.Fields{"table": ref.key, "function": function, "release": rec.ID, "user": UserOf(ctx)}).Warn("release killed after charge")
			return nil, ErrKilled
		}
		r = <-done // its model was already saved: the kill came too late
	}
	status, detail := budget.StatusOK, ""
	if r.err != nil {
		status, detail = budget.StatusFailed, r.err.Error()
	}
	if err := e.Budget.Complete(rec.ID, status, detail); err != nil {
		e.Log.WithError(err).WithField("release", rec.ID).Error("could not record release outcome")
	}
	if r.err != nil {
		e.Log.WithError(r.err).WithFields(logrus.Fields{"table": ref.key, "function": function, "release": rec.ID}).Warn("release failed after charge")
		if errors.Is(r.err, ErrBackend) {
			return nil, errBackendFailed // scale-out (issue 14)
		}
		return nil, errMechanismFailed
	}
	e.Log.WithFields(logrus.Fields{"table": ref.key, "function": function, "release": rec.ID, "user": UserOf(ctx)}).Info("release")
	return r.out, nil
}

// checkOutput is a last safety net on released numbers: a NaN or infinite
// value (a mis-configured noise scale, an overflow) is never released.
func checkOutput(out any) error {
	if f, ok := out.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return fmt.Errorf("the mechanism produced a non-finite value (%v); nothing is released", f)
	}
	return nil
}

// stopOf is the cooperative-cancellation handle of the query ctx, for
// mechanisms that check it (mechanism.Stop) between public-sized steps.
func stopOf(ctx *sql.Context) mechanism.Stop {
	if ctx == nil {
		return mechanism.Stop{}
	}
	return mechanism.NewStop(ctx.Done())
}

// scanCheck returns a scan callback wrapper that stops a scan (with
// ErrKilled) once the query is killed, checking every 4096 rows (a public
// schedule) so that the check costs nothing measurable.
func scanCheck(ctx *sql.Context) func() error {
	stop := stopOf(ctx)
	var n int
	return func() error {
		n++
		if n&4095 == 0 && stop.Stopped() {
			return ErrKilled
		}
		return nil
	}
}
