package store

import (
	"bytes"
	"fmt"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
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

// RowCount is the exact committed row count, which dpsql treats as public.
func (t *Table) RowCount(*sql.Context) (uint64, bool, error) {
	n, err := t.s.rowCount(t.ts)
	return n, err == nil, err
}

func (t *Table) WithProjections(cols []string) sql.Table {
	nt := *t
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
	return &nt
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

// PartitionRows calls CheckRead, then streams the rows.
func (t *Table) PartitionRows(ctx *sql.Context, _ sql.Partition) (sql.RowIter, error) {
	if err := t.s.checkRead(ctx, t.ts); err != nil {
		return nil, err
	}
	ords := t.projOrds
	if t.projNames == nil {
		ords = make([]int, len(t.meta.schema()))
		for i := range ords {
			ords[i] = i
		}
	}
	for i, o := range ords {
		if o < 0 {
			return nil, sql.ErrTableColumnNotFound.New(t.meta.name, t.projNames[i])
		}
	}
	return &rowIter{t: t, proj: newProjection(len(t.meta.schema()), ords), width: len(ords)}, nil
}

// scanChunk is the number of rows read per bbolt read transaction by SQL
// scans. No read transaction stays open between Next calls: a slow client
// must not pin the file's memory map (bbolt writers wait for readers when
// the map grows) and the same goroutine may commit writes mid-scan.
const scanChunk = 2048

// rowIter reads a table in chunks, each in its own read transaction, resuming
// after the last key read. A scan therefore sees every row committed before
// it started and not deleted before it ended, but not a single snapshot.
type rowIter struct {
	t     *Table
	proj  projection
	width int
	buf   []sql.Row
	pos   int
	last  []byte
	done  bool
}

func (it *rowIter) Next(ctx *sql.Context) (sql.Row, error) {
	for it.pos >= len(it.buf) {
		if it.done {
			return nil, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := it.fill(); err != nil {
			return nil, err
		}
	}
	r := it.buf[it.pos]
	it.buf[it.pos] = nil
	it.pos++
	return r, nil
}

func (it *rowIter) fill() error {
	m := it.t.meta
	it.buf, it.pos = it.buf[:0], 0
	return it.t.s.db.View(func(tx *bolt.Tx) error {
		tb := tableBucket(tx, it.t.ts.db.key, it.t.ts.id)
		if _, err := readStat(tb, m); err != nil {
			return err
		}
		c := tb.Bucket(bucketRows).Cursor()
		var k, v []byte
		if it.last == nil {
			k, v = c.First()
		} else {
			k, v = c.Seek(it.last)
			if k != nil && bytes.Equal(k, it.last) {
				k, v = c.Next()
			}
		}
		slab := make([]any, scanChunk*it.width)
		for n := 0; n < scanChunk; n++ {
			if k == nil {
				it.done = true
				return nil
			}
			row := sql.Row(slab[n*it.width : (n+1)*it.width : (n+1)*it.width])
			if err := m.codec.decode(v, &it.proj, row); err != nil {
				return fmt.Errorf("table %s: %w", m.name, err)
			}
			it.buf = append(it.buf, row)
			it.last = append(it.last[:0], k...)
			k, v = c.Next()
		}
		if k == nil {
			it.done = true
		}
		return nil
	})
}

func (it *rowIter) Close(*sql.Context) error { return nil }

// Truncate removes all rows in one durable transaction.
func (t *Table) Truncate(ctx *sql.Context) (int, error) {
	if err := t.s.checkWrite(ctx, t.ts.db.key, t.meta.name, OpTruncate, nil); err != nil {
		return 0, err
	}
	var n uint64
	err := t.s.db.Update(func(tx *bolt.Tx) error {
		tb := tableBucket(tx, t.ts.db.key, t.ts.id)
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
		st.count = 0
		return tb.Put(keyStat, st.bytes())
	})
	if err != nil {
		return 0, fmt.Errorf("truncating %s: %w", t.meta.name, err)
	}
	return int(n), nil
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
	return a.t.s.db.Update(func(tx *bolt.Tx) error {
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

func (t *Table) Inserter(*sql.Context) sql.RowInserter { return t.openEditor(OpInsert) }
func (t *Table) Updater(*sql.Context) sql.RowUpdater   { return t.openEditor(OpUpdate) }
func (t *Table) Deleter(*sql.Context) sql.RowDeleter   { return t.openEditor(OpDelete) }
func (t *Table) Replacer(*sql.Context) sql.RowReplacer { return t.openEditor(OpReplace) }
