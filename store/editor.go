package store

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	bolt "go.etcd.io/bbolt"
)

// ErrWriteConflict is the cause of the ER_LOCK_DEADLOCK error returned when a
// row a statement updates or deletes disappeared or was changed by another
// transaction since its snapshot.
var ErrWriteConflict = errors.New("row was changed by a concurrent transaction")

// errDupAtCommit aborts a bulk import's write transaction on a duplicate key.
var errDupAtCommit = errors.New("duplicate key at commit")

// Statement semantics. The writes of a statement go to its transaction's
// buffers (txn.go); the statement's first StatementBegin takes a savepoint
// and DiscardChanges returns to it, so a failing statement leaves nothing
// behind and INSERT IGNORE drops only the failing rows. Each write is checked
// against the transaction's view at once: duplicate primary or unique keys
// fail the statement (1062, with the existing row for REPLACE and ON
// DUPLICATE KEY UPDATE), and updating or deleting a row that a later commit
// changed restarts the statement under the row's lock (lock.go), or rolls
// the transaction back (1213) where it cannot. Without a transaction of a
// Session, the statement runs in its own transaction, committed when its
// last editor closes.

// editorSlot lets the inserter and the updater of one INSERT … ON DUPLICATE
// KEY UPDATE share one editor.
type editorSlot struct {
	mu sync.Mutex
	e  *editor
}

type editor struct {
	s    *Store
	ts   *tableState
	meta *tableMeta
	slot *editorSlot

	mu      sync.Mutex
	refs    int
	eph     *Txn // the statement's own transaction, without a Session
	marks   []mark
	seed    maphash.Seed
	keyless map[uint64][]string // tables without primary key: hash(row) → keys, kept current
	// undoCreate: the statement that created the table failed.
	undoCreate bool
	// tail caches the largest committed row key (see absentAbove).
	tail tailCache
}

// tailCache is the largest key of a table's committed rows bucket, read
// after snapshot snap was taken (under the transaction's lock).
type tailCache struct {
	tx    *Txn
	gen   uint64
	snap  uint64
	empty bool
	key   []byte
}

// absentAbove reports whether key is certainly absent from the committed
// rows as of v.snap because it sorts after every key bbolt held when the
// cache was filled: any key added since was committed after the snapshot
// (its timestamp is larger), so it is not visible at v.snap either.
// Bulk loads with increasing keys then need no bbolt read per row. Called
// with tx.mu held.
func (e *editor) absentAbove(tx *Txn, v *tview, key []byte) (bool, error) {
	c := &e.tail
	if c.tx != tx || c.gen != tx.gen || c.snap != v.snap {
		*c = tailCache{tx: tx, gen: tx.gen, snap: v.snap}
		err := e.s.db.View(func(btx *bolt.Tx) error {
			b, err := v.open(btx, 0)
			if err != nil {
				return err
			}
			k, _ := b.Cursor().Last()
			c.empty = k == nil
			c.key = append([]byte(nil), k...)
			return nil
		})
		if err != nil {
			c.tx = nil
			return false, err
		}
	}
	return c.empty || bytes.Compare(key, c.key) > 0, nil
}

func (t *Table) openEditor(ctx *sql.Context, op WriteOp) *editWrapper {
	t.refresh(ctx)
	t.slot.mu.Lock()
	defer t.slot.mu.Unlock()
	if t.slot.e == nil {
		t.slot.e = &editor{s: t.s, ts: t.ts, meta: t.meta, slot: t.slot}
	}
	e := t.slot.e
	e.mu.Lock()
	e.refs++
	e.mu.Unlock()
	return &editWrapper{e: e, op: op}
}

// txn is the transaction the statement writes in: the session's (looked up
// on every call: the engine may keep an editor across statements), or one
// of the statement's own, committed when the editor closes.
func (e *editor) txn(ctx *sql.Context) (*Txn, error) {
	if ctx != nil && ctx.Session != nil {
		if t := asTxn(ctx.GetTransaction()); t != nil {
			return t, t.bind(e.s)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.eph == nil {
		e.eph = &Txn{}
		_ = e.eph.bind(e.s)
	}
	return e.eph, nil
}

// editWrapper is the RowInserter / RowUpdater / RowDeleter / RowReplacer
// handed to the engine; several may share one editor.
type editWrapper struct {
	e       *editor
	op      WriteOp
	checked bool
	closed  bool
}

var _ sql.TableEditor = (*editWrapper)(nil)

func (w *editWrapper) StatementBegin(ctx *sql.Context) {
	e := w.e
	tx, err := e.txn(ctx)
	if err != nil {
		return
	}
	tx.mu.Lock()
	tx.checkpointLocked()
	var tt *txTable
	if tt, err = tx.tableLocked(e.ts, e.meta); err == nil {
		tt.beginStatement()
	}
	m := mark{gen: tx.gen, epoch: tx.epoch, undo: len(tx.undo), tt: tt}
	tx.marksOpen++
	tx.mu.Unlock()
	e.mu.Lock()
	e.marks = append(e.marks, m)
	e.mu.Unlock()
}

// mark is a statement of the editor: the position in the transaction's
// undo log DiscardChanges returns to (go-mysql-server brackets every row
// of INSERT IGNORE, LOAD DATA and UPDATE as a statement, so this must be
// cheap: cloning the buffers here made every later write copy a tree path)
// and the buffer whose statement it brackets.
type mark struct {
	gen, epoch uint64
	undo       int
	tt         *txTable
}

func (e *editor) popMark() *mark {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(e.marks)
	if n == 0 {
		return nil
	}
	m := e.marks[n-1]
	e.marks = e.marks[:n-1]
	return &m
}

func (w *editWrapper) DiscardChanges(ctx *sql.Context, _ error) error {
	e := w.e
	m := e.popMark()
	e.mu.Lock()
	// The keyless lookup describes rows the discarded changes wrote.
	e.keyless = nil
	// CREATE TABLE … AS SELECT failing while filling the table it created:
	// undo the creation at Close, so the statement leaves nothing behind.
	if e.ts.createdIn(ctx) {
		e.undoCreate = true
	}
	e.mu.Unlock()
	if tx, err := e.txn(ctx); m != nil && err == nil {
		tx.mu.Lock()
		if m.gen == tx.gen && m.epoch == tx.epoch {
			tx.revertLocked(m.undo)
			if m.tt != nil {
				m.tt.endStatement()
			}
			tx.closeMarkLocked()
		}
		tx.mu.Unlock()
	}
	return nil
}

func (w *editWrapper) StatementComplete(ctx *sql.Context) error {
	e := w.e
	m := e.popMark()
	if tx, err := e.txn(ctx); m != nil && err == nil {
		tx.mu.Lock()
		if m.gen == tx.gen && m.epoch == tx.epoch {
			if m.tt != nil {
				m.tt.endStatement()
			}
			tx.closeMarkLocked()
		}
		tx.mu.Unlock()
	}
	return nil
}

// check runs CheckWrite once per statement and op, then for the row.
func (w *editWrapper) check(ctx *sql.Context, row sql.Row) error {
	e := w.e
	tx, err := e.txn(ctx)
	if err != nil {
		return err
	}
	if tx.readOnly {
		return errReadOnly()
	}
	if !w.checked {
		if err := e.s.checkWrite(ctx, e.ts.db.key, e.meta.name, w.op, nil); err != nil {
			return err
		}
		w.checked = true
	}
	if row != nil {
		return e.s.checkWrite(ctx, e.ts.db.key, e.meta.name, w.op, row)
	}
	return nil
}

func (w *editWrapper) Insert(ctx *sql.Context, row sql.Row) error {
	if err := w.check(ctx, row); err != nil {
		return err
	}
	return w.e.insert(ctx, row)
}

func (w *editWrapper) Update(ctx *sql.Context, old, row sql.Row) error {
	if err := w.check(ctx, row); err != nil {
		return err
	}
	return w.e.update(ctx, old, row)
}

func (w *editWrapper) Delete(ctx *sql.Context, row sql.Row) error {
	if err := w.check(ctx, nil); err != nil {
		return err
	}
	return w.e.delete(ctx, row)
}

// Close commits a statement that has no transaction of its own when the
// last wrapper of the editor closes.
func (w *editWrapper) Close(*sql.Context) error {
	if w.closed {
		return nil
	}
	w.closed = true
	e := w.e
	e.slot.mu.Lock()
	e.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last && e.slot.e == e {
		e.slot.e = nil
	}
	e.mu.Unlock()
	e.slot.mu.Unlock()
	if !last {
		return nil
	}
	e.mu.Lock()
	eph := e.eph
	e.eph = nil
	e.mu.Unlock()
	if eph != nil {
		if err := eph.commit(); err != nil {
			return err
		}
	}
	if e.undoCreate && !e.ts.gone.Load() {
		if n, err := e.s.rowCount(e.ts); err == nil && n == 0 {
			return e.s.dropTable(e.ts.db, e.meta.name)
		}
	}
	return nil
}

// dupError builds the engine's duplicate-key error, which carries the
// existing row (used by ON DUPLICATE KEY UPDATE and REPLACE). The row is
// data, so CheckRead is asked first.
func (e *editor) dupError(ctx *sql.Context, existing []byte, im *indexMeta) error {
	if err := e.s.checkRead(ctx, e.ts); err != nil {
		return err
	}
	full := newProjection(len(e.meta.schema()), seqOrds(len(e.meta.schema())))
	row := make(sql.Row, len(e.meta.schema()))
	if err := e.meta.codec.decode(existing, &full, row); err != nil {
		return err
	}
	return sql.NewUniqueKeyErr(describeKey(e.meta, im, existing), im == nil, row)
}

func seqOrds(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// dup is a duplicate found while holding the transaction lock; the error
// (which calls a hook) is built after releasing it.
type dup struct {
	val []byte
	im  *indexMeta
}

// op runs fn with the transaction locked, its buffers for the table and a
// live view (the transaction's writes so far, this statement's included).
func (e *editor) op(ctx *sql.Context, fn func(tx *Txn, tt *txTable, v *tview) (*dup, error)) error {
	tx, err := e.txn(ctx)
	if err != nil {
		return err
	}
	for {
		tx.mu.Lock()
		tt, err := tx.tableLocked(e.ts, e.meta)
		var d *dup
		if err == nil {
			var v *tview
			if v, err = tx.viewLocked(e.ts, e.meta, false); err == nil {
				v.snap = tt.currentRead(tx, singleStatement(ctx))
				d, err = fn(tx, tt, v)
			}
		}
		wait, _ := err.(*needLock)
		var o *lockOwner
		if wait != nil {
			o = tx.ownerLocked()
		}
		tx.mu.Unlock()
		if wait != nil {
			// Another transaction holds the row: wait without the
			// transaction's lock, then run fn again from the start.
			if err := e.waitLock(ctx, tx, o, wait.k); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if d != nil {
			return e.dupError(ctx, d.val, d.im)
		}
		return nil
	}
}

// waitLock waits for row lock k for owner o of tx (see lock.go). A
// wait-for cycle rolls the transaction back (1213), as InnoDB does with
// its deadlock victim; a timeout fails only the statement (1205).
func (e *editor) waitLock(ctx *sql.Context, tx *Txn, o *lockOwner, k lockKey) error {
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	err := o.lt.lock(done, o, k, lockWaitTimeout(ctx))
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if _, ok := err.(errDeadlockFound); ok {
		if tx.owner == o {
			return tx.abortLocked(errLockCycle(e.meta.name))
		}
		return errLockCycle(e.meta.name)
	}
	if err == nil && tx.owner != o {
		// The transaction ended while waiting (connection closed).
		o.release()
		return errLockDeadlock(e.meta.name)
	}
	return err
}

// lookup returns a row's current value in the view and its buffered entry.
func lookup(tt *txTable, v *tview, key []byte) ([]byte, *pent, error) {
	if t := tt.trees[0]; t != nil {
		if p, ok := t.Get(pent{key: string(key)}); ok {
			return p.val, &p, nil
		}
	}
	val, _, err := v.get(0, key)
	return val, nil, err
}

// lookupNew is lookup for a key being inserted: past the committed tail
// (absentAbove) the snapshot cannot hold it.
func (e *editor) lookupNew(tx *Txn, tt *txTable, v *tview, key []byte) ([]byte, *pent, error) {
	if t := tt.trees[0]; t != nil {
		// A key past the buffer's largest (a load in key order) is not
		// in it: the right spine is cheaper than a search.
		if mx, ok := t.Max(); ok && string(key) <= mx.key {
			if p, ok := t.Get(pent{key: string(key)}); ok {
				return p.val, &p, nil
			}
		}
	}
	if absent, err := e.absentAbove(tx, v, key); err != nil || absent {
		return nil, nil, err
	}
	val, _, err := v.get(0, key)
	return val, nil, err
}

// put writes a buffered entry, logging what it replaces while a statement
// mark is open.
func (tt *txTable) put(i int, p pent) {
	if tt.trees[i] == nil {
		tt.trees[i] = newTree()
	}
	old, had := tt.trees[i].ReplaceOrInsert(p)
	if tx := tt.tx; tx != nil && tx.marksOpen > 0 {
		if b := tt.batch; b != nil && !had {
			b.add(i, p.key)
			return
		}
		tx.undo = append(tx.undo, undoEnt{tt: tt, i: i, key: p.key, old: old, had: had})
	}
}

// addCount changes the buffered row count, logged like put.
func (tt *txTable) addCount(d int64) {
	tt.count += d
	if tt.batch != nil {
		tt.batch.dc += d
		return
	}
	if tx := tt.tx; tx != nil && tx.marksOpen > 0 {
		tx.undo = append(tx.undo, undoEnt{tt: tt, i: -1, dc: d})
	}
}

// entries computes the index entries of a row stored under rk.
func (e *editor) entries(ctx *sql.Context, row sql.Row, rk []byte) ([][]byte, []bool, error) {
	keys := make([][]byte, len(e.meta.indexes))
	uniq := make([]bool, len(e.meta.indexes))
	for i, im := range e.meta.indexes {
		k, u, err := im.entry(ctx, row, rk)
		if err != nil {
			return nil, nil, err
		}
		keys[i], uniq[i] = k, u
	}
	return keys, uniq, nil
}

// uniqueClash looks for another entry with the prefix of unique entry ek of
// index i (whose row key is rk) in the view; it returns the other row.
func uniqueClash(v *tview, i int, ek, rk []byte) ([]byte, error) {
	prefix := ek[:len(ek)-len(rk)]
	it := v.iter(i+1, prefixInterval(prefix), false)
	for {
		x, ok, err := it.next()
		if err != nil || !ok {
			return nil, err
		}
		if !bytes.Equal(x.k, ek) {
			val, _, err := v.get(0, x.v)
			return val, err
		}
	}
}

func (e *editor) decodeFull(val []byte) (sql.Row, error) {
	full := newProjection(len(e.meta.schema()), seqOrds(len(e.meta.schema())))
	row := make(sql.Row, len(e.meta.schema()))
	if err := e.meta.codec.decode(val, &full, row); err != nil {
		return nil, fmt.Errorf("table %s: %w", e.meta.name, err)
	}
	return row, nil
}

// keyOf finds the key a row read by this statement is stored under.
func (e *editor) keyOf(ctx *sql.Context, tt *txTable, v *tview, row sql.Row, val []byte) ([]byte, error) {
	if e.meta.keys != nil {
		return e.meta.keys.key(ctx, nil, row)
	}
	k, err := e.findKeyless(ctx, v, val)
	return []byte(k), err
}

// singleStatement reports whether the statement is its own transaction
// (autocommit, outside BEGIN).
func singleStatement(ctx *sql.Context) bool {
	if ctx == nil || ctx.Session == nil {
		return true
	}
	if asTxn(ctx.GetTransaction()) == nil {
		return true // the statement runs in a transaction of its own
	}
	if ctx.GetIgnoreAutoCommit() {
		return false
	}
	ac, err := plan.IsSessionAutocommit(ctx)
	return err == nil && ac
}

// readTSOf is the read timestamp a write records: the one of the
// transaction's first write of the key, else the view's.
func readTSOf(p *pent, v *tview) uint64 {
	if p != nil && p.readTS != 0 {
		return p.readTS
	}
	return v.snap
}

func pendingOf(tt *txTable, key []byte) *pent {
	if t := tt.trees[0]; t != nil {
		if p, ok := t.Get(pent{key: string(key)}); ok {
			return &p
		}
	}
	return nil
}

// conflictLocked locks the row under key (or asks op to wait for it) and
// handles a row another transaction changed after the view: the statement
// restarts (lock.go), or, where it cannot, the transaction is rolled back.
func (e *editor) conflictLocked(tx *Txn, v *tview, key []byte, p *pent) error {
	locked, err := lockRowLocked(tx, e.ts, key, maxRowLocks)
	if err != nil {
		return err
	}
	// Locked: no other transaction can change the row any more. If one
	// did after the view, the statement computed the row from an old
	// version: restart it from the latest commit (lock.go). Past the lock
	// limit, such a row is a conflict as before row locks.
	if p == nil && e.s.mv.changedSince(bucketID{table: e.ts.id}, string(key), v.snap) {
		if !locked {
			return tx.abortLocked(errLockDeadlock(e.meta.name))
		}
		return tx.restartLocked(e.meta.name)
	}
	return nil
}

func (e *editor) update(ctx *sql.Context, old, row sql.Row) error {
	oldVal, err := e.meta.codec.encode(ctx, nil, old)
	if err != nil {
		return err
	}
	val, err := e.meta.codec.encode(ctx, nil, row)
	if err != nil {
		return err
	}
	if e.meta.autoCol >= 0 && row[e.meta.autoCol] != nil {
		e.ts.bumpAutoInc(row[e.meta.autoCol])
	}
	return e.op(ctx, func(tx *Txn, tt *txTable, v *tview) (*dup, error) {
		oldKey, err := e.keyOf(ctx, tt, v, old, oldVal)
		if err != nil {
			return nil, err
		}
		newKey := oldKey
		if e.meta.keys != nil {
			if newKey, err = e.meta.keys.key(ctx, nil, row); err != nil {
				return nil, err
			}
		}
		cur, p, err := lookup(tt, v, oldKey)
		if err != nil {
			return nil, err
		}
		if err := e.conflictLocked(tx, v, oldKey, p); err != nil {
			return nil, err
		}
		if cur == nil {
			return nil, tx.abortLocked(errLockDeadlock(e.meta.name))
		}
		var oldEnts [][]byte
		if len(e.meta.indexes) > 0 {
			stored, err := e.decodeFull(cur)
			if err != nil {
				return nil, err
			}
			if oldEnts, _, err = e.entries(ctx, stored, oldKey); err != nil {
				return nil, err
			}
		}
		newEnts, uniq, err := e.entries(ctx, row, newKey)
		if err != nil {
			return nil, err
		}
		moved := !bytes.Equal(oldKey, newKey)
		freshNew := false
		if moved {
			if _, err := lockRowLocked(tx, e.ts, newKey, maxInsertLocks); err != nil {
				return nil, err
			}
			taken, np, err := lookup(tt, v, newKey)
			if err != nil {
				return nil, err
			}
			if taken != nil {
				return &dup{val: taken}, nil
			}
			freshNew = np == nil || np.fresh
		}
		for i, ek := range newEnts {
			if !uniq[i] || oldEnts[i] != nil && bytes.Equal(ek[:len(ek)-len(newKey)], oldEnts[i][:len(oldEnts[i])-len(oldKey)]) {
				continue
			}
			other, err := uniqueClash(v, i, ek, newKey)
			if err != nil {
				return nil, err
			}
			if other != nil && !(moved && bytes.Equal(other, cur)) {
				return &dup{val: other, im: e.meta.indexes[i]}, nil
			}
		}
		fresh := p != nil && p.fresh
		rts := readTSOf(p, v)
		if e.meta.keys == nil {
			e.keylessRemove(cur, string(oldKey))
			e.keylessAdd(val, string(oldKey))
		}
		if moved {
			tt.put(0, pent{key: string(oldKey), fresh: fresh, readTS: rts})
			tt.put(0, pent{key: string(newKey), val: val, fresh: freshNew, readTS: v.snap})
		} else {
			tt.put(0, pent{key: string(oldKey), val: val, fresh: fresh, readTS: rts})
		}
		for i, ek := range newEnts {
			if ek == nil || bytes.Equal(ek, oldEnts[i]) {
				continue
			}
			tt.put(i+1, pent{key: string(oldEnts[i])})
			tt.put(i+1, pent{key: string(ek), val: newKey, uniq: uniq[i]})
		}
		return nil, nil
	})
}

func (e *editor) delete(ctx *sql.Context, row sql.Row) error {
	oldVal, err := e.meta.codec.encode(ctx, nil, row)
	if err != nil {
		return err
	}
	return e.op(ctx, func(tx *Txn, tt *txTable, v *tview) (*dup, error) {
		key, err := e.keyOf(ctx, tt, v, row, oldVal)
		if err != nil {
			return nil, err
		}
		return nil, e.deleteKeyLocked(ctx, tx, tt, v, key)
	})
}

// deleteKeyLocked deletes the row under key and its index entries.
func (e *editor) deleteKeyLocked(ctx *sql.Context, tx *Txn, tt *txTable, v *tview, key []byte) error {
	cur, p, err := lookup(tt, v, key)
	if err != nil {
		return err
	}
	if err := e.conflictLocked(tx, v, key, p); err != nil {
		return err
	}
	if cur == nil {
		return tx.abortLocked(errLockDeadlock(e.meta.name))
	}
	if len(e.meta.indexes) > 0 {
		stored, err := e.decodeFull(cur)
		if err != nil {
			return err
		}
		ents, _, err := e.entries(ctx, stored, key)
		if err != nil {
			return err
		}
		for i, ek := range ents {
			if ek != nil {
				tt.put(i+1, pent{key: string(ek)})
			}
		}
	}
	tt.put(0, pent{key: string(key), fresh: p != nil && p.fresh, readTS: readTSOf(p, v)})
	if e.meta.keys == nil {
		e.keylessRemove(cur, string(key))
	}
	tt.addCount(-1)
	return nil
}

// findKeyless finds the sequence key of a row of a table without primary
// key from its value, via a hash index of the view built on first use in
// the statement and kept current by the statement's writes. Identical rows
// are interchangeable.
func (e *editor) findKeyless(ctx *sql.Context, v *tview, val []byte) (string, error) {
	if e.keyless == nil {
		e.seed = maphash.MakeSeed()
		e.keyless = map[uint64][]string{}
		it := v.iter(0, interval{}, false)
		for {
			x, ok, err := it.next()
			if err != nil {
				e.keyless = nil
				return "", err
			}
			if !ok {
				break
			}
			e.keylessAdd(x.v, string(x.k))
		}
	}
	for _, k := range e.keyless[maphash.Bytes(e.seed, val)] {
		cur, _, err := v.get(0, []byte(k))
		if err != nil {
			return "", err
		}
		if cur != nil && bytes.Equal(cur, val) {
			return k, nil
		}
	}
	// Not found by encoding: compare values (slow, should not happen).
	it := v.iter(0, interval{}, false)
	for {
		x, ok, err := it.next()
		if err != nil {
			return "", err
		}
		if !ok {
			return "", sql.ErrDeleteRowNotFound.New()
		}
		if e.meta.codec.sameRow(ctx, x.v, val) {
			return string(x.k), nil
		}
	}
}

func (e *editor) keylessAdd(val []byte, key string) {
	if e.keyless != nil {
		h := maphash.Bytes(e.seed, val)
		e.keyless[h] = append(e.keyless[h], key)
	}
}

func (e *editor) keylessRemove(val []byte, key string) {
	if e.keyless == nil {
		return
	}
	h := maphash.Bytes(e.seed, val)
	ks := e.keyless[h]
	for i, k := range ks {
		if k == key {
			e.keyless[h] = append(ks[:i:i], ks[i+1:]...)
			return
		}
	}
}
