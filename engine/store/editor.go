package store

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"sort"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	bolt "go.etcd.io/bbolt"
)

// ErrWriteConflict is returned when a statement's commit finds that a row it
// updated or deleted was changed by another statement since it was read.
// Nothing of the statement is applied; it can be retried.
var ErrWriteConflict = errors.New("row was changed by a concurrent statement; statement not applied, retry it")

// Statement semantics. All writes of one statement to one table are
// buffered in an editor and applied in a single bbolt write transaction
// (fsync on commit) when the statement's last editor is closed, before the
// client gets OK. DiscardChanges rolls the buffer back to the last
// StatementBegin, so a failing statement leaves the table untouched and
// INSERT IGNORE drops only the failing rows. Writers are optimistic: the
// commit re-checks that inserted keys are still free and that updated or
// deleted rows still hold the values read, and otherwise fails the whole
// statement (duplicate key, or ErrWriteConflict).

// expectation is what the commit requires of a key's committed value.
type expectation uint8

const (
	expAbsent expectation = iota + 1 // key must not exist (insert)
	expValue                         // key must hold change.old (update, delete)
)

type change struct {
	exp expectation
	old []byte // expected committed value for expValue
	val []byte // value to write; nil deletes
}

type undoEntry struct {
	key      string
	prev     *change // nil: key was not pending
	consumed bool    // key was marked consumed (tables without primary key)
}

// editorSlot lets the inserter and the updater of one INSERT … ON DUPLICATE
// KEY UPDATE share one editor, so the statement commits once and the
// inserter sees the updater's changes.
type editorSlot struct {
	mu sync.Mutex
	e  *editor
}

type editor struct {
	s    *Store
	ts   *tableState
	meta *tableMeta
	slot *editorSlot

	mu       sync.Mutex
	refs     int
	pending  map[string]*change
	undo     []undoEntry
	mark     int
	lastCtx  *sql.Context
	keyBuf   []byte
	seed     maphash.Seed
	index    map[uint64][]string // tables without primary key: hash(row) → keys
	consumed map[string]bool
	// undoCreate: the statement that created the table failed.
	undoCreate bool
}

func (t *Table) openEditor(op WriteOp) *editWrapper {
	t.slot.mu.Lock()
	defer t.slot.mu.Unlock()
	if t.slot.e == nil {
		t.slot.e = &editor{s: t.s, ts: t.ts, meta: t.meta, slot: t.slot, pending: map[string]*change{}}
	}
	e := t.slot.e
	e.mu.Lock()
	e.refs++
	e.mu.Unlock()
	return &editWrapper{e: e, op: op}
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

func (w *editWrapper) StatementBegin(*sql.Context) {
	w.e.mu.Lock()
	w.e.mark = len(w.e.undo)
	w.e.mu.Unlock()
}

func (w *editWrapper) DiscardChanges(ctx *sql.Context, _ error) error {
	w.e.mu.Lock()
	defer w.e.mu.Unlock()
	w.e.rollback()
	// CREATE TABLE … AS SELECT failing while filling the table it created:
	// undo the creation at Close, so the statement leaves nothing behind.
	if w.e.ts.createdIn(ctx) {
		w.e.undoCreate = true
	}
	return nil
}

func (w *editWrapper) StatementComplete(*sql.Context) error {
	w.e.mu.Lock()
	defer w.e.mu.Unlock()
	w.e.undo, w.e.mark = w.e.undo[:0], 0
	return nil
}

// check runs CheckWrite once per statement and op, then for the row.
func (w *editWrapper) check(ctx *sql.Context, row sql.Row) error {
	e := w.e
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

// Close commits the statement when the last wrapper of the editor closes.
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
	if err := e.commit(); err != nil {
		return err
	}
	if e.undoCreate && !e.ts.gone.Load() {
		if n, err := e.s.rowCount(e.ts); err == nil && n == 0 {
			return e.s.dropTable(e.ts.db, e.meta.name)
		}
	}
	return nil
}

func (e *editor) setPending(key string, c *change) {
	e.undo = append(e.undo, undoEntry{key: key, prev: e.pending[key]})
	e.pending[key] = c
}

func (e *editor) rollback() {
	for i := len(e.undo) - 1; i >= e.mark; i-- {
		u := e.undo[i]
		if u.consumed {
			delete(e.consumed, u.key)
			continue
		}
		if u.prev == nil {
			delete(e.pending, u.key)
		} else {
			e.pending[u.key] = u.prev
		}
	}
	e.undo = e.undo[:e.mark]
}

func (e *editor) encode(ctx *sql.Context, row sql.Row) ([]byte, error) {
	return e.meta.codec.encode(ctx, nil, row)
}

func (e *editor) rowKey(ctx *sql.Context, row sql.Row) (string, error) {
	var err error
	e.keyBuf, err = e.meta.keys.key(ctx, e.keyBuf[:0], row)
	return string(e.keyBuf), err
}

// dupError builds the engine's duplicate-primary-key error, which carries
// the existing row (used by ON DUPLICATE KEY UPDATE and REPLACE). A row
// that was committed is data, so CheckRead is asked first.
func (e *editor) dupError(ctx *sql.Context, existing []byte, committed bool) error {
	if committed {
		if err := e.s.checkRead(ctx, e.ts); err != nil {
			return err
		}
	}
	full := newProjection(len(e.meta.schema()), seqOrds(len(e.meta.schema())))
	row := make(sql.Row, len(e.meta.schema()))
	if err := e.meta.codec.decode(existing, &full, row); err != nil {
		return err
	}
	vals := make([]any, len(e.meta.pk.PkOrdinals))
	for i, o := range e.meta.pk.PkOrdinals {
		vals[i] = row[o]
	}
	return sql.NewUniqueKeyErr(fmt.Sprint(vals), true, row)
}

func seqOrds(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// committed returns a copy of the committed value under key, or nil.
func (e *editor) committed(key string) ([]byte, error) {
	var out []byte
	err := e.s.db.View(func(tx *bolt.Tx) error {
		tb := tableBucket(tx, e.ts.db.key, e.ts.id)
		if tb == nil {
			return errTableChanged(e.meta.name)
		}
		if v := tb.Bucket(bucketRows).Get([]byte(key)); v != nil {
			out = append([]byte{}, v...)
		}
		return nil
	})
	return out, err
}

func (e *editor) insert(ctx *sql.Context, row sql.Row) error {
	val, err := e.encode(ctx, row)
	if err != nil {
		return err
	}
	if e.meta.autoCol >= 0 && row[e.meta.autoCol] != nil {
		e.ts.bumpAutoInc(row[e.meta.autoCol])
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lastCtx = ctx
	if e.meta.keys == nil {
		k := string(seqKey(e.ts.seq.Add(1) - 1))
		e.setPending(k, &change{exp: expAbsent, val: val})
		return nil
	}
	key, err := e.rowKey(ctx, row)
	if err != nil {
		return err
	}
	if c, ok := e.pending[key]; ok {
		if c.val != nil {
			return e.dupError(ctx, c.val, false)
		}
		e.setPending(key, &change{exp: c.exp, old: c.old, val: val})
		return nil
	}
	cur, err := e.committed(key)
	if err != nil {
		return err
	}
	if cur != nil {
		return e.dupError(ctx, cur, true)
	}
	e.setPending(key, &change{exp: expAbsent, val: val})
	return nil
}

func (e *editor) update(ctx *sql.Context, old, row sql.Row) error {
	oldVal, err := e.encode(ctx, old)
	if err != nil {
		return err
	}
	val, err := e.encode(ctx, row)
	if err != nil {
		return err
	}
	if e.meta.autoCol >= 0 && row[e.meta.autoCol] != nil {
		e.ts.bumpAutoInc(row[e.meta.autoCol])
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lastCtx = ctx
	if e.meta.keys == nil {
		key, err := e.findKeyless(ctx, oldVal)
		if err != nil {
			return err
		}
		e.setPending(key, &change{exp: expValue, old: oldVal, val: val})
		return nil
	}
	oldKey, err := e.rowKey(ctx, old)
	if err != nil {
		return err
	}
	newKey, err := e.rowKey(ctx, row)
	if err != nil {
		return err
	}
	if oldKey == newKey {
		if c, ok := e.pending[oldKey]; ok {
			e.setPending(oldKey, &change{exp: c.exp, old: c.old, val: val})
		} else {
			e.setPending(oldKey, &change{exp: expValue, old: oldVal, val: val})
		}
		return nil
	}
	// The key changes: the new key must be free, then delete + insert.
	if c, ok := e.pending[newKey]; ok {
		if c.val != nil {
			return e.dupError(ctx, c.val, false)
		}
	} else {
		cur, err := e.committed(newKey)
		if err != nil {
			return err
		}
		if cur != nil {
			return e.dupError(ctx, cur, true)
		}
	}
	e.deleteKey(oldKey, oldVal)
	if c, ok := e.pending[newKey]; ok {
		e.setPending(newKey, &change{exp: c.exp, old: c.old, val: val})
	} else {
		e.setPending(newKey, &change{exp: expAbsent, val: val})
	}
	return nil
}

func (e *editor) deleteKey(key string, oldVal []byte) {
	if c, ok := e.pending[key]; ok {
		e.setPending(key, &change{exp: c.exp, old: c.old})
	} else {
		e.setPending(key, &change{exp: expValue, old: oldVal})
	}
}

func (e *editor) delete(ctx *sql.Context, row sql.Row) error {
	oldVal, err := e.encode(ctx, row)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lastCtx = ctx
	if e.meta.keys == nil {
		key, err := e.findKeyless(ctx, oldVal)
		if err != nil {
			return err
		}
		e.setPending(key, &change{exp: expValue, old: oldVal})
		return nil
	}
	key, err := e.rowKey(ctx, row)
	if err != nil {
		return err
	}
	e.deleteKey(key, oldVal)
	return nil
}

// findKeyless finds the sequence key of a committed row of a table without
// primary key from its value, via a hash index built on first use in the
// statement. Identical rows are interchangeable; each key is used once.
func (e *editor) findKeyless(ctx *sql.Context, val []byte) (string, error) {
	if e.index == nil {
		e.seed = maphash.MakeSeed()
		e.index = map[uint64][]string{}
		e.consumed = map[string]bool{}
		err := e.s.db.View(func(tx *bolt.Tx) error {
			tb := tableBucket(tx, e.ts.db.key, e.ts.id)
			if _, err := readStat(tb, e.meta); err != nil {
				return err
			}
			return tb.Bucket(bucketRows).ForEach(func(k, v []byte) error {
				h := maphash.Bytes(e.seed, v)
				e.index[h] = append(e.index[h], string(k))
				return nil
			})
		})
		if err != nil {
			e.index = nil
			return "", err
		}
	}
	h := maphash.Bytes(e.seed, val)
	for _, k := range e.index[h] {
		if e.consumed[k] {
			continue
		}
		cur, err := e.committed(k)
		if err != nil {
			return "", err
		}
		if cur != nil && bytes.Equal(cur, val) {
			return e.consume(k), nil
		}
	}
	// Not found by encoding: compare values (slow, should not happen).
	var found string
	err := e.s.db.View(func(tx *bolt.Tx) error {
		tb := tableBucket(tx, e.ts.db.key, e.ts.id)
		if _, err := readStat(tb, e.meta); err != nil {
			return err
		}
		c := tb.Bucket(bucketRows).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !e.consumed[string(k)] && e.meta.codec.sameRow(ctx, v, val) {
				found = string(k)
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if found == "" {
		return "", sql.ErrDeleteRowNotFound.New()
	}
	return e.consume(found), nil
}

func (e *editor) consume(k string) string {
	e.consumed[k] = true
	e.undo = append(e.undo, undoEntry{key: k, consumed: true})
	return k
}

// commit applies the pending changes in one write transaction.
func (e *editor) commit() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.pending) == 0 {
		return nil
	}
	keys := make([]string, 0, len(e.pending))
	for k := range e.pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ctx := e.lastCtx
	if ctx == nil {
		ctx = sql.NewEmptyContext()
	}
	var dup []byte
	err := e.s.db.Update(func(tx *bolt.Tx) error {
		tb := tableBucket(tx, e.ts.db.key, e.ts.id)
		st, err := readStat(tb, e.meta)
		if err != nil {
			return err
		}
		rows := tb.Bucket(bucketRows)
		if e.meta.keys == nil {
			rows.FillPercent = 0.9 // sequence keys are appended at the end
		}
		for _, k := range keys {
			c := e.pending[k]
			kb := []byte(k)
			cur := rows.Get(kb)
			switch c.exp {
			case expAbsent:
				if cur != nil {
					dup = append([]byte{}, cur...)
					return errDupAtCommit
				}
			case expValue:
				if cur == nil || !e.meta.codec.sameRow(ctx, cur, c.old) {
					return fmt.Errorf("%s: %w", e.meta.name, ErrWriteConflict)
				}
			}
			if c.val == nil {
				if cur != nil {
					if err := rows.Delete(kb); err != nil {
						return err
					}
					st.count--
				}
				continue
			}
			if err := rows.Put(kb, c.val); err != nil {
				return err
			}
			if cur == nil {
				st.count++
			}
		}
		st.seq = max(st.seq, e.ts.seq.Load())
		e.ts.autoMu.Lock()
		st.autoInc = max(st.autoInc, e.ts.autoNext)
		e.ts.autoMu.Unlock()
		return tb.Put(keyStat, st.bytes())
	})
	e.pending = map[string]*change{}
	e.undo, e.mark = nil, 0
	if errors.Is(err, errDupAtCommit) {
		return e.dupError(ctx, dup, true)
	}
	if err != nil {
		return fmt.Errorf("committing to %s: %w", e.meta.name, err)
	}
	return nil
}

var errDupAtCommit = errors.New("duplicate key at commit")
