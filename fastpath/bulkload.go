package fastpath

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/dpsql/dpsql/store"
)

// Store-level bulk writer (issue 13).
//
// go-mysql-server executes an INSERT as a chain of per-row iterators (the
// source, insertIter's conversions and checks, a table-editor iterator
// that brackets the statement, or every row for IGNORE, and an
// accumulator counting rows), each row then taking the store's transaction
// lock and view on its own. For the two bulk forms — LOAD DATA [LOCAL]
// INFILE and the large literal INSERT that bulkinsert.go hands the engine
// as INSERT … SELECT * FROM dp_insert_values(…) — the exec builder below
// replaces that chain by one iterator that pulls the same source rows,
// applies insertIter's steps to each (same order, same errors, same
// warnings: NOT NULL, CHECK constraints, type conversion, IGNORE's
// coercions) and hands the rows to the store in batches
// (store.BatchInserter: the CheckWrite hook, i.e. the guard's owner-only
// rule and declared bounds and label domains, encoding, keys, index
// entries and duplicate checks per row, in order, under one lock per
// batch). One statement mark covers the whole statement: a failing row N
// discards rows 1..N−1, also under IGNORE for an error IGNORE does not
// cover (rows IGNORE drops write nothing). go-mysql-server's per-row path
// kept rows 1..N−1 there; ignoreAtomicIter gives it the same rule. It
// answers the same OK packet (affected rows, insert id, ROW_COUNT(),
// LAST_INSERT_ID()) and the same warnings, in row order.
//
// Planning is untouched: privileges, the guard's analyzer rule, defaults,
// generated columns and AUTO_INCREMENT expressions stay the analyzer's.
// Taken only for a destination that is a store table without foreign keys
// (go-mysql-server then wraps it in a handler and the type check fails)
// in a database without triggers, with no REPLACE, ON DUPLICATE KEY
// UPDATE or RETURNING, no outer scope; anything else runs the ordinary
// chain. Rows of a table with an AUTO_INCREMENT column go one per batch,
// so that a failing row leaves the counter where the per-row path does.

// bulkBatchRows is the rows per store batch.
const bulkBatchRows = 1024

// bulkLoadOff disables the bulk writer (tests compare both paths).
var bulkLoadOff atomic.Bool

// bulkLoads counts statements run by the bulk writer.
var bulkLoads atomic.Int64

// InstallBulkWriter makes a's exec builder run the bulk forms with the
// bulk writer (the engine does; store/gmstest runs go-mysql-server's
// own LOAD DATA and INSERT suites through it).
func InstallBulkWriter(a *analyzer.Analyzer) {
	bx := &bulkExec{}
	a.ExecBuilder = rowexec.NewOverrideBuilder(bx)
	bx.full = a.ExecBuilder
}

// bulkExec is the engine's exec builder override.
type bulkExec struct {
	full sql.NodeExecBuilder // the whole builder, to build the source
}

func (b *bulkExec) Build(ctx *sql.Context, n sql.Node, r sql.Row) (sql.RowIter, error) {
	ii, ok := n.(*plan.InsertInto)
	if !ok || len(r) != 0 {
		return nil, nil
	}
	// Cheap tests first: every INSERT passes here.
	bulk := !bulkLoadOff.Load() && bulkSource(ii)
	if !bulk && !ii.Ignore || !plainTarget(ctx, ii) {
		return nil, nil
	}
	insertable, err := plan.GetInsertable(ii.Destination)
	if err != nil {
		return nil, nil
	}
	tbl, ok := insertable.(*store.Table)
	if !ok {
		return nil, nil
	}
	if !bulk {
		// The per-row chain, under one statement mark (see ignoreAtomicIter).
		iter, err := rowexec.DefaultBuilder.Build(ctx, ii, r)
		if err != nil {
			return nil, err
		}
		return &ignoreAtomicIter{child: iter, ed: tbl.Inserter(ctx)}, nil
	}
	source := ii.Source
	typed := len(ii.Checks()) == 0
	for _, c := range ii.Destination.Schema() {
		if c.Generated != nil {
			typed = false
		}
	}
	source = skipIdentityProject(source)
	source, _, err = transform.Node(source, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if ld, ok := n.(*plan.LoadData); ok && fastLoadEligible(ld) {
			return &fastLoadData{ld: ld, typed: typed}, transform.NewTree, nil
		}
		if tf, ok := n.(*insertValuesTF); ok {
			c := *tf
			c.pipe = true
			return &c, transform.NewTree, nil
		}
		return n, transform.SameTree, nil
	})
	if err != nil {
		return nil, err
	}
	src, err := b.full.Build(ctx, source, r)
	if err != nil {
		return nil, err
	}
	var unlocker func()
	if ii.FirstGeneratedAutoIncRowIdx >= 0 {
		// As go-mysql-server's buildInsertInto.
		_, v, _ := sql.SystemVariables.GetGlobal("innodb_autoinc_lock_mode")
		lockMode, ok := v.(int64)
		if !ok {
			_ = src.Close(ctx)
			return nil, fmt.Errorf("unexpected type for innodb_autoinc_lock_mode, expected int64, got %T", v)
		}
		if lockMode != 2 {
			if unlocker, err = tbl.AutoIncrementSetter(ctx).AcquireAutoIncrementLock(ctx); err != nil {
				_ = src.Close(ctx)
				return nil, err
			}
		}
	}
	ins, ok := tbl.Inserter(ctx).(store.BatchInserter)
	if !ok {
		_ = src.Close(ctx)
		if unlocker != nil {
			unlocker()
		}
		return nil, errors.New("bulk insert: the store's inserter does not take batches")
	}
	batch := bulkBatchRows
	for _, c := range ii.Destination.Schema() {
		if c.AutoIncrement {
			batch = 1
		}
	}
	bulkLoads.Add(1)
	return &bulkIter{
		schema:      ii.Destination.Schema(),
		ins:         ins,
		src:         src,
		unlocker:    unlocker,
		insertExprs: insertExpressions(ii.Source),
		checks:      ii.Checks(),
		ignore:      ii.Ignore,
		firstAuto:   ii.FirstGeneratedAutoIncRowIdx,
		deferred:    ii.DeferredDefaults,
		batchRows:   batch,
		exactKind:   exactKinds(ii.Destination.Schema()),
	}, nil
}

// exactKind names a column type whose conversion passes one Go type
// through unchanged.
type exactKind uint8

const (
	exactNone exactKind = iota
	exactFloat64
	exactInt64
)

func exactKinds(sch sql.Schema) []exactKind {
	ks := make([]exactKind, len(sch))
	for i, c := range sch {
		if _, ok := c.Type.(types.NumberTypeImpl_); !ok {
			continue
		}
		switch c.Type.Type() {
		case query.Type_FLOAT64:
			ks[i] = exactFloat64
		case query.Type_INT64:
			ks[i] = exactInt64
		}
	}
	return ks
}

// plainTarget: a plain INSERT (no REPLACE, ON DUPLICATE KEY UPDATE,
// RETURNING) into a database without triggers.
func plainTarget(ctx *sql.Context, ii *plan.InsertInto) bool {
	if ii.IsReplace || len(ii.OnDupExprs) > 0 || ii.Returning != nil || !ii.Resolved() {
		return false
	}
	db := ii.Database()
	if db == nil {
		return false
	}
	tdb, ok := db.(sql.TriggerDatabase)
	if !ok {
		return false
	}
	trs, err := tdb.GetTriggers(ctx)
	return err == nil && len(trs) == 0
}

// bulkSource: the statement is LOAD DATA or a rewritten literal INSERT.
func bulkSource(ii *plan.InsertInto) bool {
	bulk := false
	transform.Inspect(ii.Source, func(n sql.Node) bool {
		switch n.(type) {
		case *plan.LoadData, *insertValuesTF:
			bulk = true
		case *plan.TriggerExecutor, *plan.PrependNode:
			bulk = false
			return false
		}
		return true
	})
	return bulk
}

// ignoreAtomicIter makes an INSERT IGNORE or LOAD DATA LOCAL that the
// bulk writer does not run atomic too: go-mysql-server brackets every row
// as a statement of its own, so an error IGNORE does not cover (a
// declared bound, a refused write) at row N left rows 1..N−1 to be
// committed. An outer mark on the same editor discards them. It sits
// above the accumulator (sql.MutableRowIter), so the OK packet is
// unchanged.
type ignoreAtomicIter struct {
	child        sql.RowIter
	ed           sql.RowInserter
	begun, ended bool
}

var _ sql.MutableRowIter = (*ignoreAtomicIter)(nil)

func (a *ignoreAtomicIter) GetChildIter() sql.RowIter { return a.child }

func (a *ignoreAtomicIter) WithChildIter(c sql.RowIter) sql.RowIter {
	n := *a
	n.child = c
	return &n
}

func (a *ignoreAtomicIter) Next(ctx *sql.Context) (sql.Row, error) {
	if !a.begun {
		a.begun = true
		a.ed.StatementBegin(ctx)
	}
	row, err := a.child.Next(ctx)
	if err != nil && err != io.EOF && !a.ended {
		a.ended = true
		if derr := a.ed.DiscardChanges(ctx, err); derr != nil {
			return nil, derr
		}
	}
	return row, err
}

func (a *ignoreAtomicIter) Close(ctx *sql.Context) error {
	cerr := a.child.Close(ctx)
	if a.begun && !a.ended {
		a.ended = true
		if cerr != nil {
			_ = a.ed.DiscardChanges(ctx, cerr)
		} else if serr := a.ed.StatementComplete(ctx); serr != nil {
			cerr = serr
		}
	}
	if err := a.ed.Close(ctx); err != nil && cerr == nil {
		cerr = err
	}
	return cerr
}

// skipIdentityProject drops projections that pass their child's row
// through unchanged (every expression is the child's field at the same
// position, possibly under an alias): they only copy each row.
func skipIdentityProject(n sql.Node) sql.Node {
	for {
		p, ok := n.(*plan.Project)
		if !ok || len(p.Projections) != len(p.Child.Schema()) {
			return n
		}
		for i, e := range p.Projections {
			if a, ok := e.(*expression.Alias); ok {
				e = a.Child
			}
			gf, ok := e.(*expression.GetField)
			if !ok || gf.Index() != i {
				return n
			}
		}
		n = p.Child
	}
}

// insertExpressions is go-mysql-server's getInsertExpressions.
func insertExpressions(values sql.Node) []sql.Expression {
	var exprs []sql.Expression
	transform.Inspect(values, func(node sql.Node) bool {
		if p, ok := node.(*plan.Project); ok {
			exprs = p.Projections
			return false
		}
		return true
	})
	return exprs
}

// bulkIter runs the statement on its first Next and returns its OkResult.
type bulkIter struct {
	schema      sql.Schema
	ins         store.BatchInserter
	src         sql.RowIter
	unlocker    func()
	insertExprs []sql.Expression
	checks      sql.CheckConstraints
	ignore      bool
	firstAuto   int
	deferred    sql.FastIntSet
	batchRows   int

	done, closed bool
	// settled: the pending rows were written before the current row's
	// first warning (warnings come in row order, as on the per-row path).
	settled bool
	// exactKind: per column, the Go type Convert passes through unchanged.
	exactKind []exactKind
	// conv: scratch row for prepare's conversions.
	conv sql.Row
	// rows waiting for the store.
	pending      []sql.Row
	affected     int
	lastInsertID uint64
	idSet        bool
	// marked: a statement mark is open.
	marked bool
}

func (it *bulkIter) Next(ctx *sql.Context) (sql.Row, error) {
	if it.done {
		return nil, io.EOF
	}
	it.done = true
	// One mark for the whole statement, as TableEditorIter, also under
	// IGNORE: rows IGNORE drops write nothing, and an error IGNORE does
	// not cover (a declared bound, a refused write) fails the statement,
	// which then leaves no row (MySQL's statement atomicity).
	it.ins.StatementBegin(ctx)
	it.marked = true
	err := it.run(ctx)
	if it.marked {
		it.marked = false
		if err != nil {
			if derr := it.ins.DiscardChanges(ctx, err); derr != nil {
				err = derr
			}
		} else if serr := it.ins.StatementComplete(ctx); serr != nil {
			err = serr
		}
	}
	if err != nil {
		return nil, err
	}
	res := types.OkResult{RowsAffected: uint64(it.affected), InsertID: it.lastInsertID}
	ctx.SetLastQueryInfoInt(sql.RowCount, int64(res.RowsAffected))
	return sql.NewRow(res), nil
}

func (it *bulkIter) run(ctx *sql.Context) error {
	for {
		row, err := it.src.Next(ctx)
		if err == io.EOF {
			return it.flush(ctx)
		}
		if err != nil {
			// Rows before it were written first on the per-row path.
			if ferr := it.flush(ctx); ferr != nil {
				return ferr
			}
			if err = it.ignoreOrFail(ctx, row, err); err != nil {
				return err
			}
			continue
		}
		if len(row) > len(it.schema) {
			row = row[len(row)-len(it.schema):]
		}
		it.settled = false
		keep, err := it.prepare(ctx, row)
		if err != nil {
			if ferr := it.flush(ctx); ferr != nil {
				return ferr
			}
			return err
		}
		if keep && len(it.pending) >= it.batchRows {
			if err := it.flush(ctx); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			default:
			}
		}
	}
}

// prepare applies insertIter's per-row steps before the write; false
// when IGNORE dropped the row (or counted it, for a deferred default).
func (it *bulkIter) prepare(ctx *sql.Context, row sql.Row) (bool, error) {
	// Under IGNORE, warnings follow the earlier rows' (duplicates are
	// found at the write): settle writes those first.
	if it.ignore {
		for i, col := range it.schema {
			if !col.Nullable && row[i] == nil {
				if err := it.settle(ctx); err != nil {
					return false, err
				}
				break
			}
		}
	}
	if err := it.validateNullability(ctx, row); err != nil {
		return false, it.ignoreOrFail(ctx, row, err)
	}
	if err := it.evaluateChecks(ctx, row); err != nil {
		if it.ignore {
			if serr := it.settle(ctx); serr != nil {
				return false, serr
			}
		}
		return false, it.ignoreOrFail(ctx, row, err)
	}
	// The converted values go to a scratch row and replace the row's at
	// the end: until then row is the row before conversion, which the
	// error carries (insertIter copies it first; a copy per row was ≈ 10 %
	// of a load's CPU). A value already of its column's Go type, as
	// fastLoadData yields for DOUBLE and BIGINT, is left as is.
	conv := it.conv[:0]
	conv = append(conv, row...)
	it.conv = conv
	changed := false
	for idx, col := range it.schema {
		if row[idx] == nil || it.exact(idx, row[idx]) {
			continue
		}
		changed = true
		converted, inRange, cErr := col.Type.Convert(ctx, row[idx])
		if cErr == nil && !inRange {
			cErr = sql.ErrValueOutOfRange.New(row[idx], col.Type)
		}
		if cErr != nil {
			if it.ignore && col.Type.Type() != query.Type_JSON {
				if err := it.settle(ctx); err != nil {
					return false, err
				}
				if _, ok := col.Type.(sql.NumberType); ok {
					if converted == nil {
						converted = it.schema[idx].Type.Zero()
					}
					conv[idx] = converted
					ctx.Session.Warn(&sql.Warning{Level: "Note", Code: sql.CastSQLError(cErr).Num, Message: cErr.Error()})
				} else {
					conv = convertDataAndWarn(ctx, it.schema, conv, idx, cErr)
				}
				continue
			}
			if types.ErrLengthBeyondLimit.Is(cErr) {
				cErr = types.ErrLengthBeyondLimit.New(row[idx], col.Name)
			} else if sql.ErrNotMatchingSRID.Is(cErr) {
				cErr = sql.ErrNotMatchingSRIDWithColName.New(col.Name, cErr)
			}
			return false, sql.NewWrappedInsertError(row, cErr)
		}
		conv[idx] = converted
	}
	if changed {
		copy(row, conv)
	}
	it.pending = append(it.pending, row)
	return true, nil
}

// exact: v is already what the column's conversion returns for it
// (NumberTypeImpl_.Convert returns a float64 unchanged for DOUBLE and an
// int64 for BIGINT, in range), so Convert is skipped.
func (it *bulkIter) exact(idx int, v any) bool {
	switch it.exactKind[idx] {
	case exactFloat64:
		_, ok := v.(float64)
		return ok
	case exactInt64:
		_, ok := v.(int64)
		return ok
	}
	return false
}

// settle writes the pending rows once per row.
func (it *bulkIter) settle(ctx *sql.Context) error {
	if it.settled {
		return nil
	}
	it.settled = true
	return it.flush(ctx)
}

// ignoreOrFail is insertIter.ignoreOrClose: nil when IGNORE turns the
// error into a warning (the row is dropped; a NOT NULL column's deferred
// default is counted as go-mysql-server's accumulator counts it).
func (it *bulkIter) ignoreOrFail(ctx *sql.Context, row sql.Row, err error) error {
	if !it.ignore {
		return sql.NewWrappedInsertError(row, err)
	}
	werr := warnOnIgnorableError(ctx, row, err)
	if werr == nil {
		it.count(nil)
		return nil
	}
	if _, ok := werr.(sql.IgnorableError); ok {
		return nil
	}
	return werr
}

// count is the accumulator's insertRowHandler and insertIter's
// updateLastInsertId for a written row.
func (it *bulkIter) count(row sql.Row) {
	it.affected++
	if !it.idSet {
		it.idSet = true
		if row != nil {
			it.lastInsertID = uint64(it.autoIncVal(row))
		}
	}
}

func (it *bulkIter) autoIncVal(row sql.Row) int64 {
	for i, e := range it.insertExprs {
		if _, ok := e.(*expression.AutoIncrement); ok && i < len(row) {
			return toInt64(row[i])
		}
	}
	return 0
}

// flush writes the pending rows.
func (it *bulkIter) flush(ctx *sql.Context) error {
	if len(it.pending) == 0 {
		return nil
	}
	rows := it.pending
	it.pending = it.pending[:0:0]
	skipped, failed, err := it.ins.InsertBatch(ctx, rows, it.ignore)
	next := 0
	for i := 0; i < failed; i++ {
		if next < len(skipped) && skipped[next].Row == i {
			_ = warnOnIgnorableError(ctx, rows[i], skipped[next].Err)
			next++
			continue
		}
		it.inserted(ctx, rows[i])
	}
	if err != nil && it.ignore {
		if werr := warnOnIgnorableError(ctx, rows[failed], err); werr == nil {
			it.count(nil)
			err = nil
		} else if _, ok := werr.(sql.IgnorableError); ok {
			err = nil
		} else {
			err = werr
		}
		if err == nil {
			// Not reached for the store's errors (duplicates are skipped
			// in the batch), kept for safety: continue after the row.
			return it.retry(ctx, rows[failed+1:])
		}
	}
	if err != nil {
		if !it.ignore {
			return sql.NewWrappedInsertError(rows[failed], err)
		}
		return err
	}
	return nil
}

// retry writes the rest of a batch after an ignored error.
func (it *bulkIter) retry(ctx *sql.Context, rows []sql.Row) error {
	it.pending = append(it.pending[:0], rows...)
	return it.flush(ctx)
}

// inserted records a written row (insertIter.updateLastInsertId and the
// accumulator).
func (it *bulkIter) inserted(ctx *sql.Context, row sql.Row) {
	if it.firstAuto >= 0 {
		if it.firstAuto == 0 {
			ctx.SetLastQueryInfoInt(sql.LastInsertId, it.autoIncVal(row))
		}
		it.firstAuto--
	}
	it.count(row)
}

func (it *bulkIter) Close(ctx *sql.Context) error {
	if it.closed {
		return nil
	}
	it.closed = true
	if it.marked {
		// Closed before Next ran the statement.
		it.marked = false
		_ = it.ins.DiscardChanges(ctx, errors.New("statement not run"))
	}
	if it.unlocker != nil {
		it.unlocker()
	}
	serr := it.src.Close(ctx)
	ierr := it.ins.Close(ctx)
	if serr != nil {
		return serr
	}
	return ierr
}

func (it *bulkIter) evaluateChecks(ctx *sql.Context, row sql.Row) error {
	for _, check := range it.checks {
		if !check.Enforced {
			continue
		}
		res, err := sql.EvaluateCondition(ctx, check.Expr, row)
		if err != nil {
			return err
		}
		if sql.IsFalse(res) {
			return sql.ErrCheckConstraintViolated.New(check.Name)
		}
	}
	return nil
}

func (it *bulkIter) validateNullability(ctx *sql.Context, row sql.Row) error {
	for i, col := range it.schema {
		if !col.Nullable && row[i] == nil {
			if !it.ignore {
				if it.deferred.Contains(i) {
					return sql.ErrInsertIntoNonNullableDefaultNullColumn.New(col.Name)
				}
				return sql.ErrInsertIntoNonNullableProvidedNull.New(col.Name)
			}
			row[i] = col.Type.Zero()
			_ = warnOnIgnorableError(ctx, row, sql.ErrInsertIntoNonNullableProvidedNull.New(col.Name))
		}
	}
	return nil
}

// convertDataAndWarn and warnOnIgnorableError are go-mysql-server's
// (sql/rowexec/insert.go, unexported there).
func convertDataAndWarn(ctx *sql.Context, tableSchema sql.Schema, row sql.Row, columnIdx int, err error) sql.Row {
	if types.ErrLengthBeyondLimit.Is(err) {
		maxLength := tableSchema[columnIdx].Type.(sql.StringType).MaxCharacterLength()
		row[columnIdx] = row[columnIdx].(string)[:maxLength]
	} else {
		row[columnIdx] = tableSchema[columnIdx].Type.Zero()
	}
	sqlerr := sql.CastSQLError(err)
	if ctx != nil && ctx.Session != nil {
		ctx.Session.Warn(&sql.Warning{Level: "Note", Code: sqlerr.Num, Message: err.Error()})
	}
	return row
}

func warnOnIgnorableError(ctx *sql.Context, row sql.Row, err error) error {
	for _, ie := range plan.IgnorableErrors {
		if ie.Is(err) {
			sqlerr := sql.CastSQLError(err)
			if ctx != nil && ctx.Session != nil {
				ctx.Session.Warn(&sql.Warning{Level: "Note", Code: sqlerr.Num, Message: err.Error()})
			}
			if sql.ErrInsertIntoNonNullableDefaultNullColumn.Is(err) {
				return nil
			}
			return sql.NewIgnorableError(row)
		}
	}
	return err
}

func toInt64(x any) int64 {
	switch x := x.(type) {
	case int:
		return int64(x)
	case uint:
		return int64(x)
	case int8:
		return int64(x)
	case uint8:
		return int64(x)
	case int16:
		return int64(x)
	case uint16:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case int64:
		return x
	case uint64:
		return int64(x)
	case float32:
		return int64(x)
	case float64:
		return int64(x)
	}
	return 0
}
