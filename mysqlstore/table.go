package mysqlstore

import (
	"database/sql"
	"io"

	gsql "github.com/dolthub/go-mysql-server/sql"
)

// ReadCheck is the engine's storage read hook (store.Hooks.CheckRead):
// it refuses analysts' reads of protected tables.
type ReadCheck func(ctx *gsql.Context, db, table string) error

// Table is the read-only SQL face of an attached table. Owners read it
// with ordinary SQL; writes and DDL go to the backend directly (dpsql
// refuses them: the table implements no write interface).
type Table struct {
	b     *Backend
	t     *table
	check ReadCheck
}

var _ gsql.Table = (*Table)(nil)

// Table returns the SQL table of an attached db.name.
func (b *Backend) Table(db, name string, check ReadCheck) (*Table, bool) {
	t, ok := b.lookup(db, name)
	if !ok {
		return nil, false
	}
	return &Table{b: b, t: t, check: check}, true
}

func (t *Table) Name() string                { return t.t.name }
func (t *Table) String() string              { return t.t.name }
func (t *Table) Schema() gsql.Schema         { return t.t.schema }
func (t *Table) Collation() gsql.CollationID { return gsql.Collation_Default }

// Comment says where the rows live (SHOW TABLE STATUS).
func (t *Table) Comment() string {
	return "attached from the MariaDB/MySQL backend (read-only in dpsql)"
}

func (t *Table) Partitions(*gsql.Context) (gsql.PartitionIter, error) {
	return &partIter{}, nil
}

// PartitionRows streams SELECT * FROM the backend table (one statement:
// one snapshot), after the engine's read check.
func (t *Table) PartitionRows(ctx *gsql.Context, _ gsql.Partition) (gsql.RowIter, error) {
	if t.check != nil {
		if err := t.check(ctx, t.t.db, t.t.name); err != nil {
			return nil, err
		}
	}
	names, kinds, _ := t.t.columns(nil)
	st, err := t.b.pool.PrepareContext(ctx, "SELECT "+selectList(names)+" FROM "+t.t.from())
	if err != nil {
		return nil, t.b.fail("read "+t.t.from(), err)
	}
	rows, err := st.QueryContext(ctx)
	if err != nil {
		st.Close()
		return nil, t.b.fail("read "+t.t.from(), err)
	}
	return &rowIter{b: t.b, from: t.t.from(), st: st, rows: rows, kinds: kinds}, nil
}

type partIter struct{ done bool }

type part struct{}

func (part) Key() []byte { return []byte("all") }

func (p *partIter) Next(*gsql.Context) (gsql.Partition, error) {
	if p.done {
		return nil, io.EOF
	}
	p.done = true
	return part{}, nil
}

func (p *partIter) Close(*gsql.Context) error { return nil }

type rowIter struct {
	b     *Backend
	from  string
	st    *sql.Stmt
	rows  *sql.Rows
	kinds []kind
}

func (it *rowIter) Next(*gsql.Context) (gsql.Row, error) {
	if !it.rows.Next() {
		if err := it.rows.Err(); err != nil {
			return nil, it.b.fail("read "+it.from, err)
		}
		return nil, io.EOF
	}
	vals := make([]any, len(it.kinds))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := it.rows.Scan(ptrs...); err != nil {
		return nil, it.b.fail("read "+it.from, err)
	}
	row := make(gsql.Row, len(vals))
	for i, v := range vals {
		row[i] = toValue(v, it.kinds[i])
	}
	return row, nil
}

func (it *rowIter) Close(*gsql.Context) error {
	it.rows.Close()
	return it.st.Close()
}
