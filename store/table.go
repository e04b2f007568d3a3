package store

import (
	"fmt"
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// Table is the sql.Table the engine sees. It is created per statement by
// Database.GetTableInsensitive; the durable state is in tableState and bbolt.
type Table struct {
	s    *Store
	ts   *tableState
	meta *tableMeta

	projNames []string // nil: all columns
	projOrds  []int
	projSch   sql.Schema

	slot *editorSlot // shared with projected copies
}

var (
	_ sql.Table              = (*Table)(nil)
	_ sql.StatisticsTable    = (*Table)(nil)
	_ sql.ProjectedTable     = (*Table)(nil)
	_ sql.PrimaryKeyTable    = (*Table)(nil)
	_ sql.CommentedTable     = (*Table)(nil)
	_ sql.Databaseable       = (*Table)(nil)
	_ sql.InsertableTable    = (*Table)(nil)
	_ sql.UpdatableTable     = (*Table)(nil)
	_ sql.DeletableTable     = (*Table)(nil)
	_ sql.ReplaceableTable   = (*Table)(nil)
	_ sql.TruncateableTable  = (*Table)(nil)
	_ sql.AutoIncrementTable = (*Table)(nil)
	_ sql.AlterableTable     = (*Table)(nil)
)

func newTable(s *Store, ts *tableState) *Table {
	return &Table{s: s, ts: ts, meta: ts.meta.Load(), slot: &editorSlot{}}
}

func (t *Table) Name() string     { return t.meta.name }
func (t *Table) String() string   { return t.meta.name }
func (t *Table) Database() string { return t.meta.dbName }
func (t *Table) Comment() string  { return t.meta.comment }

func (t *Table) Schema() sql.Schema {
	if t.projNames != nil {
		return t.projSch
	}
	return t.meta.schema()
}

func (t *Table) PrimaryKeySchema() sql.PrimaryKeySchema { return t.meta.pk }

func (t *Table) Collation() sql.CollationID { return t.meta.collation }

// DataLength is always 0: information_schema derives DATA_LENGTH and
// AVG_ROW_LENGTH from it, and sizes are data-dependent.
func (t *Table) DataLength(*sql.Context) (uint64, error) { return 0, nil }

// RowCount is the exact row count (as the statement's transaction sees it),
// or 0 and not exact when the HideRowCount hook hides it from the caller
// (the count is not public for tables of a privacy unit).
func (t *Table) RowCount(ctx *sql.Context) (uint64, bool, error) {
	if t.s.hideRowCount(ctx, t.ts) {
		return 0, false, nil
	}
	t.refresh(ctx)
	v, release, err := t.view(ctx, true)
	if err != nil {
		return 0, false, err
	}
	defer release()
	n, err := v.rowCount()
	return n, err == nil, err
}

func (t *Table) WithProjections(cols []string) sql.Table {
	nt := *t
	nt.setProjections(cols)
	return &nt
}

// setProjections resolves projected column names against t.meta.
func (t *Table) setProjections(cols []string) {
	nt := t
	nt.projNames = append([]string{}, cols...)
	nt.projOrds = make([]int, len(cols))
	nt.projSch = make(sql.Schema, len(cols))
	for i, c := range cols {
		o, ok := t.meta.column(c)
		if !ok {
			// The engine only projects columns of Schema(); keep the
			// table usable and let PartitionRows report the problem.
			o = -1
		}
		nt.projOrds[i] = o
		if o >= 0 {
			nt.projSch[i] = t.meta.schema()[o]
		} else {
			nt.projSch[i] = &sql.Column{Name: c, Type: types.Null, Nullable: true, Source: t.meta.name}
		}
	}
}

// refresh moves a Table value to the table's current definition when that
// is safe: always for changes that keep the row layout (checks, foreign
// keys, names), and for layout changes made by ctx's own session, which the
// engine expects to see later in the same statement (a multi-clause ALTER
// validates a new CHECK on the rows it just rewrote). A layout change by
// another session makes reads fail with ER_TABLE_DEF_CHANGED instead.
func (t *Table) refresh(ctx *sql.Context) {
	cur := t.ts.meta.Load()
	if cur == t.meta {
		return
	}
	if cur.version != t.meta.version && (ctx == nil || ctx.Session == nil || t.ts.ddlBy.Load() != ctx.Session.ID()) {
		return
	}
	t.meta = cur
	if t.projNames != nil {
		t.setProjections(t.projNames)
	}
}

func (t *Table) Projections() []string { return t.projNames }

// partition is the single partition of a table.
type partition struct{}

func (partition) Key() []byte { return []byte("all") }

type partitionIter struct{ done bool }

func (p *partitionIter) Next(*sql.Context) (sql.Partition, error) {
	if p.done {
		return nil, io.EOF
	}
	p.done = true
	return partition{}, nil
}

func (p *partitionIter) Close(*sql.Context) error { return nil }

func (t *Table) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return &partitionIter{}, nil
}

// PartitionRows calls CheckRead, then streams the rows as of the statement's
// transaction.
func (t *Table) PartitionRows(ctx *sql.Context, _ sql.Partition) (sql.RowIter, error) {
	t.refresh(ctx)
	if err := t.s.checkRead(ctx, t.ts); err != nil {
		return nil, err
	}
	p, width, err := t.projection()
	if err != nil {
		return nil, err
	}
	v, release, err := t.view(ctx, false)
	if err != nil {
		return nil, err
	}
	return &rowIter{meta: t.meta, it: v.iter(0, interval{}, false), proj: p, width: width, release: release}, nil
}

// projection is the decoding plan of the table's projected columns.
func (t *Table) projection() (projection, int, error) {
	ords := t.projOrds
	if t.projNames == nil {
		ords = seqOrds(len(t.meta.schema()))
	}
	for i, o := range ords {
		if o < 0 {
			return projection{}, 0, sql.ErrTableColumnNotFound.New(t.meta.name, t.projNames[i])
		}
	}
	return newProjection(len(t.meta.schema()), ords), len(ords), nil
}

// view opens a read view in the statement's transaction (see Txn.view);
// release ends a transaction opened just for it.
func (t *Table) view(ctx *sql.Context, live bool) (*tview, func(), error) {
	tx, eph, err := t.s.txnFor(ctx)
	if err != nil {
		return nil, nil, err
	}
	v, err := tx.view(t.ts, t.meta, live, singleStatement(ctx))
	if err != nil {
		if eph {
			tx.rollback()
		}
		return nil, nil, err
	}
	release := func() {}
	if eph {
		release = tx.rollback
	}
	return v, release, nil
}

// rowIter decodes the rows of a key/value scan.
type rowIter struct {
	meta    *tableMeta
	it      *kvIter
	proj    projection
	width   int
	slab    []any
	release func()
}

func (it *rowIter) Next(ctx *sql.Context) (sql.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, ok, err := it.it.next()
	if err != nil {
		return nil, err
	}
	if !ok {
		it.done()
		return nil, io.EOF
	}
	if len(it.slab) < it.width {
		it.slab = make([]any, 256*max(it.width, 1))
	}
	row := sql.Row(it.slab[:it.width:it.width])
	it.slab = it.slab[it.width:]
	if err := it.meta.codec.decode(e.v, &it.proj, row); err != nil {
		return nil, fmt.Errorf("table %s: %w", it.meta.name, err)
	}
	return row, nil
}

func (it *rowIter) done() {
	if it.release != nil {
		it.release()
		it.release = nil
	}
}

func (it *rowIter) Close(*sql.Context) error {
	it.done()
	return nil
}

// Truncate removes all rows. TRUNCATE TABLE is DDL, as in MySQL: it commits
// the session's transaction first and takes effect at once. The engine also
// runs DELETE without WHERE as a truncation; that one stays a transactional
// delete of every row (ROLLBACK brings them back).
func (t *Table) Truncate(ctx *sql.Context) (int, error) {
	if err := t.s.checkWrite(ctx, t.ts.db.key, t.meta.name, OpTruncate, nil); err != nil {
		return 0, err
	}
	if !isTruncateStatement(ctx) {
		return t.deleteAll(ctx)
	}
	if err := t.s.implicitCommit(ctx); err != nil {
		return 0, err
	}
	var n uint64
	err := t.s.ddlUpdate(t.ts, func(btx *bolt.Tx) error {
		tb := tableBucket(btx, t.ts.db.key, t.ts.id)
		st, err := readStat(tb, t.meta)
		if err != nil {
			return err
		}
		n = st.count
		if err := tb.DeleteBucket(bucketRows); err != nil {
			return err
		}
		if _, err := tb.CreateBucket(bucketRows); err != nil {
			return err
		}
		if err := resetIndexBuckets(tb, t.meta); err != nil {
			return err
		}
		st.count = 0
		return tb.Put(keyStat, st.bytes())
	})
	if err != nil {
		return 0, fmt.Errorf("truncating %s: %w", t.meta.name, err)
	}
	t.s.afterDDL(ctx, t.ts)
	return int(n), nil
}

func isTruncateStatement(ctx *sql.Context) bool {
	if ctx == nil {
		return true
	}
	q := strings.TrimSpace(ctx.Query())
	return q == "" || len(q) >= 8 && strings.EqualFold(q[:8], "TRUNCATE")
}

// deleteAll deletes every row through the statement's transaction.
func (t *Table) deleteAll(ctx *sql.Context) (int, error) {
	w := t.openEditor(ctx, OpDelete)
	e := w.e
	if tx, err := e.txn(ctx); err != nil || tx.readOnly {
		w.Close(ctx)
		if err == nil {
			err = errReadOnly()
		}
		return 0, err
	}
	n := 0
	err := e.op(ctx, func(tx *Txn, tt *txTable, v *tview) (*dup, error) {
		it := v.iter(0, interval{}, false)
		for {
			x, ok, err := it.next()
			if err != nil || !ok {
				return nil, err
			}
			if err := e.deleteKeyLocked(ctx, tx, tt, v, x.k); err != nil {
				return nil, err
			}
			n++
		}
	})
	if err != nil {
		w.DiscardChanges(ctx, err)
		w.Close(ctx)
		return 0, err
	}
	return n, w.Close(ctx)
}

// PeekNextAutoIncrementValue reports the AUTO_INCREMENT counter. It reveals
// how many rows were inserted, so it passes CheckRead; when that refuses,
// the counter is reported as 0, which information_schema shows as NULL.
func (t *Table) PeekNextAutoIncrementValue(ctx *sql.Context) (uint64, error) {
	if t.meta.autoCol < 0 {
		return 0, nil
	}
	if err := t.s.checkRead(ctx, t.ts); err != nil {
		return 0, nil
	}
	t.ts.autoMu.Lock()
	defer t.ts.autoMu.Unlock()
	return t.ts.autoNext, nil
}

// GetNextAutoIncrementValue hands out the next value when insertVal is nil
// and otherwise moves the counter past insertVal. Values are not returned on
// rollback, as in MySQL.
func (t *Table) GetNextAutoIncrementValue(ctx *sql.Context, insertVal any) (uint64, error) {
	// go-mysql-server asks for the value before handing the row to the
	// editor: a write the hooks refuse must not move the counter (an
	// analyst could push it to the column's maximum and block the owner's
	// inserts).
	if err := t.s.checkWrite(ctx, t.ts.db.key, t.meta.name, OpInsert, nil); err != nil {
		return 0, err
	}
	t.ts.autoMu.Lock()
	defer t.ts.autoMu.Unlock()
	if insertVal == nil {
		v := t.ts.autoNext
		t.ts.autoNext++
		return v, nil
	}
	cv, _, err := types.Uint64.Convert(ctx, insertVal)
	if err != nil {
		return 0, err
	}
	v := cv.(uint64)
	if v >= t.ts.autoNext {
		t.ts.autoNext = v + 1
	}
	return v, nil
}

// bumpAutoInc moves the counter past an explicitly inserted value.
func (ts *tableState) bumpAutoInc(v any) {
	var u uint64
	switch x := v.(type) {
	case int8:
		u = uint64(max(x, 0))
	case int16:
		u = uint64(max(x, 0))
	case int32:
		u = uint64(max(x, 0))
	case int64:
		u = uint64(max(x, 0))
	case uint8:
		u = uint64(x)
	case uint16:
		u = uint64(x)
	case uint32:
		u = uint64(x)
	case uint64:
		u = x
	default:
		return
	}
	ts.autoMu.Lock()
	if u >= ts.autoNext {
		ts.autoNext = u + 1
	}
	ts.autoMu.Unlock()
}

func (t *Table) AutoIncrementSetter(*sql.Context) sql.AutoIncrementSetter {
	return &autoIncSetter{t: t}
}

type autoIncSetter struct {
	t   *Table
	set bool
}

func (a *autoIncSetter) SetAutoIncrementValue(ctx *sql.Context, v uint64) error {
	if err := a.t.s.checkWrite(ctx, a.t.ts.db.key, a.t.meta.name, OpAlter, nil); err != nil {
		return err
	}
	// As in InnoDB, the counter cannot go back to a value in use: below
	// the largest committed value it continues after it.
	if m := a.t.meta; m.autoCol >= 0 {
		if _, err := a.t.s.ScanValues(m.dbName, m.name, []string{m.schema()[m.autoCol].Name}, func(row []any) error {
			if row[0] == nil {
				return nil
			}
			if cv, _, err := types.Uint64.Convert(ctx, row[0]); err == nil {
				if u := cv.(uint64); u >= v {
					v = u + 1
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	a.t.ts.autoMu.Lock()
	a.t.ts.autoNext = v
	a.t.ts.autoMu.Unlock()
	a.set = true
	return nil
}

func (a *autoIncSetter) AcquireAutoIncrementLock(*sql.Context) (func(), error) {
	a.t.ts.autoLock.Lock()
	return a.t.ts.autoLock.Unlock, nil
}

// Close persists an explicitly set counter.
func (a *autoIncSetter) Close(*sql.Context) error {
	if !a.set {
		return nil
	}
	a.set = false
	ts := a.t.ts
	return wal.Update(a.t.s.db, func(tx *bolt.Tx) error {
		tb := tableBucket(tx, ts.db.key, ts.id)
		if tb == nil {
			return sql.ErrTableNotFound.New(a.t.meta.name)
		}
		st, err := parseStat(tb.Get(keyStat))
		if err != nil {
			return err
		}
		ts.autoMu.Lock()
		st.autoInc = ts.autoNext
		ts.autoMu.Unlock()
		return tb.Put(keyStat, st.bytes())
	})
}

func (t *Table) Inserter(ctx *sql.Context) sql.RowInserter { return t.openEditor(ctx, OpInsert) }
func (t *Table) Updater(ctx *sql.Context) sql.RowUpdater   { return t.openEditor(ctx, OpUpdate) }
func (t *Table) Deleter(ctx *sql.Context) sql.RowDeleter   { return t.openEditor(ctx, OpDelete) }
func (t *Table) Replacer(ctx *sql.Context) sql.RowReplacer { return t.openEditor(ctx, OpReplace) }

// IsTemporary: the store has no temporary tables. (go-mysql-server's
// read-only transaction check needs every written table to say so.)
func (t *Table) IsTemporary() bool { return false }

var _ sql.TemporaryTable = (*Table)(nil)

// SameTable reports whether a and b are Table values of the same live
// table with the same definition (the engine's prepared-plan cache re-uses
// a plan only then).
func SameTable(a, b sql.Table) bool {
	x, ok1 := a.(*Table)
	y, ok2 := b.(*Table)
	return ok1 && ok2 && x.ts == y.ts && x.meta == y.meta && !x.ts.gone.Load() && x.ts.meta.Load() == x.meta
}

// IsStoreTable reports whether t is a table of the store (possibly with an
// index lookup).
func IsStoreTable(t sql.Table) bool {
	switch t.(type) {
	case *Table, *indexedTable:
		return true
	}
	return false
}
