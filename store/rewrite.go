package store

import (
	"bytes"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	bolt "go.etcd.io/bbolt"
)

// Table rewrites. For ADD / DROP / MODIFY / RENAME COLUMN, ADD / DROP
// PRIMARY KEY and indexes on virtual columns, go-mysql-server reads every
// row, projects it to the new schema (defaults, generated columns,
// AUTO_INCREMENT values, ENUM remapping) and hands it to RewriteInserter;
// Close then installs the new definition, the rows and every index in one
// durable transaction. The rewrite fails, changing nothing, if another
// transaction wrote the table since the rows were read.

var _ sql.RewritableTable = (*Table)(nil)

// ShouldRewriteTable: always, so that the engine computes every value and
// the store never keeps a half-converted table.
func (t *Table) ShouldRewriteTable(*sql.Context, sql.PrimaryKeySchema, sql.PrimaryKeySchema, *sql.Column, *sql.Column) bool {
	return true
}

func (t *Table) RewriteInserter(ctx *sql.Context, oldSchema, newSchema sql.PrimaryKeySchema, oldColumn, newColumn *sql.Column, idxCols []sql.IndexColumn) (sql.RowInserter, error) {
	if err := t.s.checkWrite(ctx, t.ts.db.key, t.meta.name, OpAlter, nil); err != nil {
		return nil, err
	}
	if len(oldSchema.PkOrdinals) > 0 && len(newSchema.PkOrdinals) == 0 {
		if err := sql.ValidatePrimaryKeyDrop(ctx, t, oldSchema); err != nil {
			return nil, err
		}
	}
	for _, c := range idxCols {
		if i := newSchema.Schema.IndexOfColName(c.Name); i >= 0 && newSchema.Schema[i].PrimaryKey && c.Length > 0 {
			return nil, sql.ErrUnsupportedIndexPrefix.New(c.Name)
		}
	}
	if err := validateRowLength(newSchema.Schema); err != nil {
		return nil, err
	}
	if err := t.s.implicitCommit(ctx); err != nil {
		return nil, err
	}
	old := t.ts.meta.Load()
	if old.version != t.meta.version {
		return nil, errDefChanged(old.name)
	}
	var renamed map[string]string
	if oldColumn != nil && newColumn != nil && !strings.EqualFold(oldColumn.Name, newColumn.Name) {
		renamed = map[string]string{strings.ToLower(oldColumn.Name): strings.ToLower(newColumn.Name)}
	}
	nm, err := old.derive(old.version+1, old.name, newSchema, renamed)
	if err != nil {
		return nil, err
	}
	// The rows will be read in the statement's transaction: its snapshot
	// is the state the rewrite replaces.
	tx, eph, err := t.s.txnFor(ctx)
	if err != nil {
		return nil, err
	}
	tx.mu.Lock()
	snap := tx.snapshotLocked()
	tx.mu.Unlock()
	rw := &rewriter{t: t, old: old, nm: nm, snap: snap, ents: make([][]kv, len(nm.indexes))}
	if eph {
		// Without a session the rows are read in another, later snapshot;
		// this one is only kept (until Close) as the bound of the check.
		rw.eph = tx
	}
	return rw, nil
}

type rewriter struct {
	t         *Table
	old, nm   *tableMeta
	snap      uint64
	eph       *Txn
	rows      []kv
	ents      [][]kv // per index: entry key → row key
	uniq      [][]bool
	discarded bool
	closed    bool
}

func (r *rewriter) StatementBegin(*sql.Context) {}

func (r *rewriter) DiscardChanges(*sql.Context, error) error {
	r.discarded = true
	r.rows, r.ents = nil, nil
	return nil
}

func (r *rewriter) StatementComplete(*sql.Context) error { return nil }

func (r *rewriter) Insert(ctx *sql.Context, row sql.Row) error {
	if r.discarded {
		return nil
	}
	val, err := r.nm.codec.encode(ctx, nil, row)
	if err != nil {
		return err
	}
	var key []byte
	if r.nm.keys == nil {
		key = seqKey(r.t.ts.seq.Add(1) - 1)
	} else if key, err = r.nm.keys.key(ctx, nil, row); err != nil {
		return err
	}
	if r.nm.autoCol >= 0 && row[r.nm.autoCol] != nil {
		r.t.ts.bumpAutoInc(row[r.nm.autoCol])
	}
	r.rows = append(r.rows, kv{k: key, v: val})
	if r.uniq == nil {
		r.uniq = make([][]bool, len(r.nm.indexes))
	}
	// Index entries come from the row as the engine computed it (virtual
	// generated columns included, which are not stored).
	for i, im := range r.nm.indexes {
		ek, u, err := im.entry(ctx, row, key)
		if err != nil {
			return err
		}
		if ek != nil {
			r.ents[i] = append(r.ents[i], kv{k: ek, v: key})
			r.uniq[i] = append(r.uniq[i], u)
		}
	}
	return nil
}

func (r *rewriter) Close(ctx *sql.Context) error {
	if r.eph != nil {
		defer r.eph.rollback()
	}
	if r.closed || r.discarded {
		r.closed = true
		return nil
	}
	r.closed = true
	t, ts, old, nm := r.t, r.t.ts, r.old, r.nm
	ts.ddlMu.Lock()
	defer ts.ddlMu.Unlock()
	if cur := ts.meta.Load(); cur.version != old.version || ts.ddlTS.Load() > r.snap {
		return errDefChanged(old.name)
	}
	sort.Slice(r.rows, func(i, j int) bool { return bytes.Compare(r.rows[i].k, r.rows[j].k) < 0 })
	for i := 1; i < len(r.rows); i++ {
		if bytes.Equal(r.rows[i].k, r.rows[i-1].k) {
			return sql.NewUniqueKeyErr(describeKey(nm, nil, r.rows[i].v), true, nil)
		}
	}
	err := t.s.ddlUpdate(ts, func(btx *bolt.Tx) error {
		tb := tableBucket(btx, ts.db.key, ts.id)
		st, err := readStat(tb, old)
		if err != nil {
			return err
		}
		if t.s.mv.touchedSince(ts.id, r.snap) {
			return errLockDeadlock(old.name)
		}
		if err := tb.DeleteBucket(bucketRows); err != nil {
			return err
		}
		dst, err := tb.CreateBucket(bucketRows)
		if err != nil {
			return err
		}
		dst.FillPercent = 0.9
		for _, e := range r.rows {
			if err := dst.Put(e.k, e.v); err != nil {
				return err
			}
		}
		if err := resetIndexBuckets(tb, nm); err != nil {
			return err
		}
		for i, im := range nm.indexes {
			b := indexBucket(tb, im.id)
			ents := r.ents[i]
			order := make([]int, len(ents))
			for j := range order {
				order[j] = j
			}
			sort.Slice(order, func(a, b int) bool { return bytes.Compare(ents[order[a]].k, ents[order[b]].k) < 0 })
			for _, j := range order {
				e := ents[j]
				if r.uniq[i][j] {
					prefix := e.k[:len(e.k)-len(e.v)]
					if k, _ := b.Cursor().Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) {
						return sql.NewUniqueKeyErr(describeKey(nm, im, dst.Get(e.v))+" for key '"+im.name+"'", false, nil)
					}
				}
				if err := b.Put(e.k, e.v); err != nil {
					return err
				}
			}
		}
		st.count = uint64(len(r.rows))
		st.seq = max(st.seq, ts.seq.Load())
		ts.autoMu.Lock()
		st.autoInc = max(st.autoInc, ts.autoNext)
		ts.autoMu.Unlock()
		if err := tb.Put(keyStat, st.bytes()); err != nil {
			return err
		}
		return putMeta(tb, nm)
	})
	if err != nil {
		return err
	}
	ts.meta.Store(nm)
	t.meta = nm
	t.projNames, t.projOrds, t.projSch = nil, nil, nil
	t.s.afterDDL(ctx, t.ts)
	return nil
}
