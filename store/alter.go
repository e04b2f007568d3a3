package store

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// AddColumn, DropColumn and ModifyColumn rewrite every row into a new
// bucket and swap it in, all in one write transaction, so an ALTER either
// happens completely or not at all. The engine fills non-NULL defaults
// afterwards through an Updater (a second statement).

func (t *Table) AddColumn(ctx *sql.Context, column *sql.Column, order *sql.ColumnOrder) error {
	old := t.meta.schema()
	if _, ok := t.meta.column(column.Name); ok {
		return sql.ErrColumnExists.New(column.Name)
	}
	pos, err := insertPosition(t.meta, order)
	if err != nil {
		return err
	}
	nc := *column
	if nc.PrimaryKey {
		return fmt.Errorf("adding a primary key column with ALTER TABLE is not supported")
	}
	sch := make(sql.Schema, 0, len(old)+1)
	sch = append(sch, old[:pos]...)
	sch = append(sch, &nc)
	sch = append(sch, old[pos:]...)
	fill := initialValue(ctx, &nc)
	return t.rewrite(ctx, withPK(sch, t.meta), nil, func(r sql.Row) (sql.Row, error) {
		out := make(sql.Row, 0, len(r)+1)
		out = append(out, r[:pos]...)
		out = append(out, fill)
		return append(out, r[pos:]...), nil
	})
}

func (t *Table) DropColumn(ctx *sql.Context, name string) error {
	i, ok := t.meta.column(name)
	if !ok {
		return sql.ErrTableColumnNotFound.New(t.meta.name, name)
	}
	old := t.meta.schema()
	if old[i].PrimaryKey {
		return fmt.Errorf("cannot drop primary key column %q", old[i].Name)
	}
	if len(old) == 1 {
		return fmt.Errorf("cannot drop the only column of %s; use DROP TABLE", t.meta.name)
	}
	sch := append(append(sql.Schema{}, old[:i]...), old[i+1:]...)
	return t.rewrite(ctx, withPK(sch, t.meta), nil, func(r sql.Row) (sql.Row, error) {
		return append(append(sql.Row{}, r[:i]...), r[i+1:]...), nil
	})
}

func (t *Table) ModifyColumn(ctx *sql.Context, name string, column *sql.Column, order *sql.ColumnOrder) error {
	i, ok := t.meta.column(name)
	if !ok {
		return sql.ErrTableColumnNotFound.New(t.meta.name, name)
	}
	old := t.meta.schema()
	if j, exists := t.meta.column(column.Name); exists && j != i {
		return sql.ErrColumnExists.New(column.Name)
	}
	nc := *column
	nc.PrimaryKey = old[i].PrimaryKey
	// Remove the column, then re-insert it at its new place.
	rest := append(append(sql.Schema{}, old[:i]...), old[i+1:]...)
	pos := i
	if order != nil {
		tmp := &tableMeta{colIndex: map[string]int{}, pk: sql.PrimaryKeySchema{Schema: rest}}
		for j, c := range rest {
			tmp.colIndex[strings.ToLower(c.Name)] = j
		}
		var err error
		if pos, err = insertPosition(tmp, order); err != nil {
			return err
		}
	}
	sch := append(append(append(sql.Schema{}, rest[:pos]...), &nc), rest[pos:]...)
	// PK ordinals follow the columns by name (the renamed column by position).
	renamed := strings.ToLower(old[i].Name)
	pkNames := make([]string, len(t.meta.pk.PkOrdinals))
	for k, o := range t.meta.pk.PkOrdinals {
		pkNames[k] = strings.ToLower(old[o].Name)
		if pkNames[k] == renamed {
			pkNames[k] = strings.ToLower(nc.Name)
		}
	}
	var ords []int
	for _, n := range pkNames {
		for j, c := range sch {
			if strings.ToLower(c.Name) == n {
				ords = append(ords, j)
			}
		}
	}
	// A column that becomes AUTO_INCREMENT continues after its largest
	// value, as in MySQL (the counter would otherwise hand out 1 again).
	newAuto := nc.AutoIncrement && !old[i].AutoIncrement
	var maxAuto any
	err := t.rewrite(ctx, sql.NewPrimaryKeySchema(sch, ords...), map[string]string{renamed: strings.ToLower(nc.Name)}, func(r sql.Row) (sql.Row, error) {
		v := r[i]
		if v != nil {
			cv, inRange, err := nc.Type.Convert(ctx, v)
			if err != nil {
				return nil, err // its kind is the MySQL error (e.g. data truncated)
			}
			if !inRange {
				return nil, sql.ErrValueOutOfRange.New(v, nc.Type)
			}
			v = cv
			if newAuto {
				if c, err := nc.Type.Compare(ctx, v, maxAuto); maxAuto == nil || err == nil && c > 0 {
					maxAuto = v
				}
			}
		}
		rr := append(append(sql.Row{}, r[:i]...), r[i+1:]...)
		return append(append(append(sql.Row{}, rr[:pos]...), v), rr[pos:]...), nil
	})
	if err != nil || !newAuto {
		return err
	}
	if maxAuto != nil {
		t.ts.bumpAutoInc(maxAuto)
	}
	return t.s.persistAutoInc(t.ts)
}

// persistAutoInc writes the in-memory AUTO_INCREMENT counter (if larger).
func (s *Store) persistAutoInc(ts *tableState) error {
	return wal.Update(s.db, func(btx *bolt.Tx) error {
		tb := tableBucket(btx, ts.db.key, ts.id)
		if tb == nil {
			return sql.ErrTableNotFound.New(ts.meta.Load().name)
		}
		st, err := parseStat(tb.Get(keyStat))
		if err != nil {
			return err
		}
		ts.autoMu.Lock()
		st.autoInc = max(st.autoInc, ts.autoNext)
		ts.autoMu.Unlock()
		return tb.Put(keyStat, st.bytes())
	})
}

// withPK keeps the key columns (by name) of m in a new column list.
func withPK(sch sql.Schema, m *tableMeta) sql.PrimaryKeySchema {
	var ords []int
	for _, o := range m.pk.PkOrdinals {
		n := strings.ToLower(m.schema()[o].Name)
		for j, c := range sch {
			if strings.ToLower(c.Name) == n {
				ords = append(ords, j)
			}
		}
	}
	return sql.NewPrimaryKeySchema(sch, ords...)
}

func insertPosition(m *tableMeta, order *sql.ColumnOrder) (int, error) {
	switch {
	case order == nil:
		return len(m.schema()), nil
	case order.First:
		return 0, nil
	default:
		j, ok := m.column(order.AfterColumn)
		if !ok {
			return 0, sql.ErrTableColumnNotFound.New(m.name, order.AfterColumn)
		}
		return j + 1, nil
	}
}

// initialValue is what existing rows get in a new column before the engine
// applies its default: the default if it evaluates without a row, else the
// type's zero value for NOT NULL columns, else NULL.
func initialValue(ctx *sql.Context, c *sql.Column) (v any) {
	zero := func() any {
		if c.Nullable {
			return nil
		}
		z, _, err := c.Type.Convert(ctx, c.Type.Zero())
		if err != nil {
			return nil
		}
		return z
	}
	if c.Default == nil || !c.Default.Resolved() {
		return zero()
	}
	defer func() {
		if recover() != nil {
			v = zero()
		}
	}()
	d, err := c.Default.Eval(ctx, nil)
	if err != nil {
		return zero()
	}
	if d != nil {
		if d, _, err = c.Type.Convert(ctx, d); err != nil {
			return zero()
		}
	}
	return d
}

// rewrite converts every row to a new schema, and rebuilds the indexes, in
// one transaction. renamed maps old lower-case column names to new ones.
func (t *Table) rewrite(ctx *sql.Context, pk sql.PrimaryKeySchema, renamed map[string]string, transform func(sql.Row) (sql.Row, error)) error {
	return t.changeDef(ctx, func(old *tableMeta) (*tableMeta, error) {
		return old.derive(old.version+1, old.name, pk, renamed)
	}, func(_ *bolt.Tx, tb *bolt.Bucket, old, nm *tableMeta) error {
		full := newProjection(len(old.schema()), seqOrds(len(old.schema())))
		// Convert everything first (bbolt's MoveBucket loses a bucket
		// filled in the same transaction, so the new rows cannot be
		// staged in a sibling bucket and swapped in).
		type kv struct{ k, v []byte }
		var out []kv
		row := make(sql.Row, len(old.schema()))
		err := tb.Bucket(bucketRows).ForEach(func(k, v []byte) error {
			if err := old.codec.decode(v, &full, row); err != nil {
				return err
			}
			nr, err := transform(row)
			if err != nil {
				return err
			}
			e := kv{}
			if e.v, err = nm.codec.encode(ctx, nil, nr); err != nil {
				return err
			}
			switch {
			case nm.keys == nil && old.keys == nil:
				e.k = append([]byte{}, k...)
			case nm.keys == nil: // primary key dropped: number the rows
				e.k = seqKey(t.ts.seq.Add(1) - 1)
			default:
				if e.k, err = nm.keys.key(ctx, nil, nr); err != nil {
					return err
				}
			}
			out = append(out, e)
			return nil
		})
		if err != nil {
			return err
		}
		sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].k, out[j].k) < 0 })
		for i := 1; i < len(out); i++ {
			if bytes.Equal(out[i].k, out[i-1].k) {
				return sql.NewUniqueKeyErr(describeKey(nm, nil, out[i].v), true, nil)
			}
		}
		if err := tb.DeleteBucket(bucketRows); err != nil {
			return err
		}
		dst, err := tb.CreateBucket(bucketRows)
		if err != nil {
			return err
		}
		dst.FillPercent = 0.9
		for _, e := range out {
			if err := dst.Put(e.k, e.v); err != nil {
				return err
			}
		}
		st, err := parseStat(tb.Get(keyStat))
		if err != nil {
			return err
		}
		st.seq = max(st.seq, t.ts.seq.Load())
		if err := tb.Put(keyStat, st.bytes()); err != nil {
			return err
		}
		if err := resetIndexBuckets(tb, nm); err != nil {
			return err
		}
		for _, im := range nm.indexes {
			if err := buildIndex(ctx, tb, nm, im); err != nil {
				return err
			}
		}
		return nil
	})
}
