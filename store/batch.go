package store

import (
	"github.com/dolthub/go-mysql-server/sql"
)

// Batched inserts (issue 13). The engine's bulk path (fastpath/bulkload.go)
// hands the store rows in batches instead of one Insert call per row: the
// checks are Insert's, row by row and in order (the CheckWrite hook, the
// encoding, the key, the index entries, then under the transaction's lock
// the duplicate checks and the buffered writes), but the lock and the
// transaction's view are taken once per batch.

// BatchInserter is implemented by the RowInserter of a store table.
type BatchInserter interface {
	sql.RowInserter
	// InsertBatch inserts rows in order as Insert would, one at a time.
	// It stops at the first failing row and returns its index and error;
	// the rows before it are written (the caller's statement mark
	// discards them if the statement fails). With skipDup, a row whose
	// primary or unique key is taken is not written and does not stop
	// the batch: its index and duplicate-key error are in skipped (INSERT
	// IGNORE and LOAD DATA LOCAL semantics). failed is len(rows) when no
	// row failed.
	InsertBatch(ctx *sql.Context, rows []sql.Row, skipDup bool) (skipped []BatchSkip, failed int, err error)
}

// BatchSkip is a row InsertBatch skipped as a duplicate.
type BatchSkip struct {
	Row int
	Err error
}

var _ BatchInserter = (*editWrapper)(nil)

// prepared is a row encoded for insertion.
type prepared struct {
	key, val []byte
	ents     [][]byte
	uniq     []bool
}

// prepare does Insert's work that needs no lock.
func (e *editor) prepare(ctx *sql.Context, row sql.Row, buf []byte) (prepared, error) {
	val, err := e.meta.codec.encode(ctx, buf, row)
	if err != nil {
		return prepared{}, err
	}
	if e.meta.autoCol >= 0 && row[e.meta.autoCol] != nil {
		e.ts.bumpAutoInc(row[e.meta.autoCol])
	}
	var key []byte
	if e.meta.keys == nil {
		key = seqKey(e.ts.seq.Add(1) - 1)
	} else if key, err = e.meta.keys.key(ctx, nil, row); err != nil {
		return prepared{}, err
	}
	p := prepared{key: key, val: val}
	if len(e.meta.indexes) > 0 {
		if p.ents, p.uniq, err = e.entries(ctx, row, key); err != nil {
			return prepared{}, err
		}
	}
	return p, nil
}

// insertLocked is Insert's part under the transaction lock: a duplicate
// is returned, not written.
func (e *editor) insertLocked(tx *Txn, tt *txTable, v *tview, r prepared) (*dup, error) {
	fresh := true // absent from the snapshot
	// pend: the buffered entry of the key (a sequence key has none).
	var pend *pent
	if e.meta.keys != nil {
		// The key is locked (waiting for a transaction that inserted or
		// deleted it) unless this one holds too many already.
		if _, err := lockRowLocked(tx, e.ts, r.key, maxInsertLocks); err != nil {
			return nil, err
		}
		cur, p, err := e.lookupNew(tx, tt, v, r.key)
		if err != nil {
			return nil, err
		}
		if cur != nil {
			return &dup{val: cur}, nil
		}
		pend = p
		fresh = p == nil || p.fresh
		if p == nil && e.s.mv.changedSince(bucketID{table: e.ts.id}, string(r.key), v.snap) {
			// Committed by another transaction after the snapshot:
			// a duplicate now rather than at COMMIT, as in InnoDB.
			if cur, err = v.latest(0, r.key); err != nil || cur != nil {
				return &dup{val: cur}, err
			}
		}
	}
	for i, ek := range r.ents {
		if !r.uniq[i] {
			continue
		}
		other, err := uniqueClash(v, i, ek, r.key)
		if err != nil {
			return nil, err
		}
		if other != nil {
			return &dup{val: other, im: e.meta.indexes[i]}, nil
		}
	}
	tt.put(0, pent{key: string(r.key), val: r.val, fresh: fresh, readTS: readTSOf(pend, v)})
	if e.meta.keys == nil {
		e.keylessAdd(r.val, string(r.key))
	}
	for i, ek := range r.ents {
		if ek != nil {
			tt.put(i+1, pent{key: string(ek), val: r.key, uniq: r.uniq[i]})
		}
	}
	tt.addCount(1)
	return nil, nil
}

func (e *editor) insert(ctx *sql.Context, row sql.Row) error {
	// Room for fixed-size values up front: growing from nil costs several
	// copies per row in bulk loads.
	r, err := e.prepare(ctx, row, make([]byte, 0, 16+9*len(row)))
	if err != nil {
		return err
	}
	return e.op(ctx, func(tx *Txn, tt *txTable, v *tview) (*dup, error) {
		return e.insertLocked(tx, tt, v, r)
	})
}

func (w *editWrapper) InsertBatch(ctx *sql.Context, rows []sql.Row, skipDup bool) ([]BatchSkip, int, error) {
	e := w.e
	// Checks and encodings first, in row order; the first failing row
	// ends the batch after the rows before it are written.
	preps := make([]prepared, 0, len(rows))
	var perr error
	if len(rows) > 0 {
		// One arena for the batch's encodings (each row's slice is capped,
		// so an encoding that outgrows its estimate reallocates alone).
		per := 16 + 9*len(rows[0])
		arena := make([]byte, 0, per*len(rows))
		for _, row := range rows {
			if perr = w.check(ctx, row); perr != nil {
				break
			}
			start := len(arena)
			buf := arena[start:start:min(cap(arena), start+per)]
			r, err := e.prepare(ctx, row, buf)
			if err != nil {
				perr = err
				break
			}
			if len(r.val) <= per && cap(arena)-start >= len(r.val) {
				arena = arena[:start+len(r.val)]
			}
			preps = append(preps, r)
		}
	}
	var skipped []BatchSkip
	var dups []struct {
		row int
		d   *dup
	}
	failed := 0 // stays 0 if op fails before fn runs
	// next is the first row not yet written: op runs fn again from the
	// start after waiting for a row lock (editor.op), and the rows before
	// the one that waited are already in the buffers.
	next := 0
	err := e.op(ctx, func(tx *Txn, tt *txTable, v *tview) (*dup, error) {
		failed = len(preps)
		tt.batch = &undoBatch{}
		defer tt.endBatch()
		for i := next; i < len(preps); i++ {
			r := preps[i]
			if i > next {
				syncView(v, tt)
			}
			d, err := e.insertLocked(tx, tt, v, r)
			if err != nil {
				failed = i
				if _, wait := err.(*needLock); wait {
					next = i
				}
				return nil, err
			}
			if d != nil {
				if !skipDup {
					failed = i
					return d, nil
				}
				dups = append(dups, struct {
					row int
					d   *dup
				}{i, d})
			}
		}
		return nil, nil
	})
	// The duplicate errors call a hook: built outside the lock.
	for _, x := range dups {
		skipped = append(skipped, BatchSkip{Row: x.row, Err: e.dupError(ctx, x.d.val, x.d.im)})
	}
	if err != nil {
		return skipped, failed, err
	}
	if perr != nil {
		return skipped, len(preps), perr
	}
	return skipped, len(rows), nil
}

// syncView lets a live view see the buffer trees that writes made since
// it was taken (a tree is created on its first write; the view shares
// the others).
func syncView(v *tview, tt *txTable) {
	if len(v.trees) < len(tt.trees) {
		v.trees = append(v.trees, make([]*tree, len(tt.trees)-len(v.trees))...)
	}
	for i, t := range tt.trees {
		if v.trees[i] == nil {
			v.trees[i] = t
		}
	}
	v.count = tt.count
}

// undoBatch is the undo of one InsertBatch call: the keys it added to each
// buffer tree (absent before) and the row count change. Logging one entry
// per tree rather than two or more per row keeps the undo log of a large
// statement small (growing it was ≈ 8 % of a bulk load's CPU).
type undoBatch struct {
	keys [][]string
	dc   int64
}

func (b *undoBatch) add(i int, key string) {
	for len(b.keys) <= i {
		b.keys = append(b.keys, nil)
	}
	b.keys[i] = append(b.keys[i], key)
}

// endBatch moves the collected undo into the transaction's log (with the
// transaction locked, before anything reads the log).
func (tt *txTable) endBatch() {
	b := tt.batch
	tt.batch = nil
	tx := tt.tx
	if b == nil || tx == nil || tx.marksOpen == 0 {
		return
	}
	for i, ks := range b.keys {
		if len(ks) > 0 {
			tx.undo = append(tx.undo, undoEnt{tt: tt, i: i, keys: ks})
		}
	}
	if b.dc != 0 {
		tx.undo = append(tx.undo, undoEnt{tt: tt, i: -1, dc: b.dc})
	}
}
