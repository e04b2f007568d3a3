package store

import (
	"bytes"

	"github.com/dolthub/go-mysql-server/sql"
	bolt "go.etcd.io/bbolt"
)

// tview reads one table as of a snapshot, with a transaction's buffered
// writes (trees, possibly clones) laid over it. Reads use short bbolt read
// transactions (see mvcc.go).
type tview struct {
	s     *Store
	ts    *tableState
	meta  *tableMeta
	snap  uint64
	trees []*tree // nil, or one per bucket as in txTable
	count int64   // the transaction's change of the row count
}

func (v *tview) tree(i int) *tree {
	if i < len(v.trees) {
		return v.trees[i]
	}
	return nil
}

func (v *tview) bucketID(i int) bucketID {
	if i == 0 {
		return bucketID{table: v.ts.id}
	}
	return bucketID{table: v.ts.id, idx: v.meta.indexes[i-1].id}
}

// open finds bucket i of the table in a read transaction and checks that the
// table still has the definition and data generation the view expects.
func (v *tview) open(btx *bolt.Tx, i int) (*bolt.Bucket, error) {
	tb := tableBucket(btx, v.ts.db.key, v.ts.id)
	if tb == nil {
		return nil, sql.ErrTableNotFound.New(v.meta.name)
	}
	if _, err := readStat(tb, v.meta); err != nil || v.ts.ddlTS.Load() > v.snap {
		return nil, errDefChanged(v.meta.name)
	}
	if i == 0 {
		return tb.Bucket(bucketRows), nil
	}
	b := indexBucket(tb, v.meta.indexes[i-1].id)
	if b == nil {
		return nil, errDefChanged(v.meta.name)
	}
	return b, nil
}

// get returns the value of key in bucket i (nil: absent), and whether the
// transaction's own writes decided it.
func (v *tview) get(i int, key []byte) ([]byte, bool, error) {
	if t := v.tree(i); t != nil {
		if p, ok := t.Get(pent{key: string(key)}); ok {
			return p.val, true, nil
		}
	}
	var out []byte
	err := v.s.db.View(func(btx *bolt.Tx) error {
		b, err := v.open(btx, i)
		if err != nil {
			return err
		}
		if cur := b.Get(key); cur != nil {
			out = append(make([]byte, 0, len(cur)), cur...)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return v.s.mv.valueAt(v.bucketID(i), key, v.snap, out), false, nil
}

// latest returns the committed value of key in bucket i, ignoring the
// snapshot.
func (v *tview) latest(i int, key []byte) ([]byte, error) {
	var out []byte
	err := v.s.db.View(func(btx *bolt.Tx) error {
		b, err := v.open(btx, i)
		if err != nil {
			return err
		}
		if cur := b.Get(key); cur != nil {
			out = append(make([]byte, 0, len(cur)), cur...)
		}
		return nil
	})
	return out, err
}

// getRows resolves row keys in one read transaction; missing rows are nil.
func (v *tview) getRows(keys [][]byte) ([][]byte, error) {
	out := make([][]byte, len(keys))
	var need []int
	t := v.tree(0)
	for j, k := range keys {
		if t != nil {
			if p, ok := t.Get(pent{key: string(k)}); ok {
				out[j] = p.val
				continue
			}
		}
		need = append(need, j)
	}
	if len(need) == 0 {
		return out, nil
	}
	err := v.s.db.View(func(btx *bolt.Tx) error {
		b, err := v.open(btx, 0)
		if err != nil {
			return err
		}
		for _, j := range need {
			if cur := b.Get(keys[j]); cur != nil {
				out[j] = append(make([]byte, 0, len(cur)), cur...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	bid := v.bucketID(0)
	for _, j := range need {
		out[j] = v.s.mv.valueAt(bid, keys[j], v.snap, out[j])
	}
	return out, nil
}

// interval is a key range; nil bounds are unbounded.
type interval struct {
	lo, hi         []byte
	loOpen, hiOpen bool
}

func (iv interval) aboveLo(k []byte) bool {
	if iv.lo == nil {
		return true
	}
	c := bytes.Compare(k, iv.lo)
	return c > 0 || (c == 0 && !iv.loOpen)
}

func (iv interval) belowHi(k []byte) bool {
	if iv.hi == nil {
		return true
	}
	c := bytes.Compare(k, iv.hi)
	return c < 0 || (c == 0 && !iv.hiOpen)
}

func (iv interval) empty() bool {
	if iv.lo == nil || iv.hi == nil {
		return false
	}
	c := bytes.Compare(iv.lo, iv.hi)
	return c > 0 || (c == 0 && (iv.loOpen || iv.hiOpen))
}

// prefixInterval is every key starting with p.
func prefixInterval(p []byte) interval {
	return interval{lo: p, hi: prefixEnd(p), hiOpen: true}
}

// prefixEnd is the smallest key greater than every key starting with p, or
// nil if there is none.
func prefixEnd(p []byte) []byte {
	e := append([]byte{}, p...)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] != 0xFF {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}

const (
	firstChunk = 64
	maxChunk   = 4096
)

// kvIter scans one bucket of a view over an interval, ascending or
// descending, in chunks: each chunk is read in its own bbolt read
// transaction and corrected to the snapshot.
type kvIter struct {
	v     *tview
	i     int
	rest  interval // what is left to scan
	desc  bool
	chunk int
	buf   []kv
	pos   int
	done  bool
}

func (v *tview) iter(i int, iv interval, desc bool) *kvIter {
	return &kvIter{v: v, i: i, rest: iv, desc: desc, chunk: firstChunk, done: iv.empty()}
}

// next returns the next key/value; ok is false at the end.
func (it *kvIter) next() (kv, bool, error) {
	for it.pos >= len(it.buf) {
		if it.done {
			return kv{}, false, nil
		}
		if err := it.fill(); err != nil {
			return kv{}, false, err
		}
	}
	e := it.buf[it.pos]
	it.buf[it.pos] = kv{}
	it.pos++
	return e, true, nil
}

func (it *kvIter) fill() error {
	v := it.v
	it.buf, it.pos = it.buf[:0], 0
	var chunk []kv
	full := false
	var arena []byte
	err := v.s.db.View(func(btx *bolt.Tx) error {
		b, err := v.open(btx, it.i)
		if err != nil {
			return err
		}
		c := b.Cursor()
		var k, val []byte
		if !it.desc {
			if it.rest.lo == nil {
				k, val = c.First()
			} else {
				k, val = c.Seek(it.rest.lo)
				if k != nil && it.rest.loOpen && bytes.Equal(k, it.rest.lo) {
					k, val = c.Next()
				}
			}
		} else {
			if it.rest.hi == nil {
				k, val = c.Last()
			} else {
				k, val = c.Seek(it.rest.hi)
				if k == nil {
					k, val = c.Last()
				} else if it.rest.hiOpen || !bytes.Equal(k, it.rest.hi) {
					k, val = c.Prev()
				}
			}
		}
		for n := 0; k != nil; n++ {
			if !it.desc && !it.rest.belowHi(k) || it.desc && !it.rest.aboveLo(k) {
				return nil
			}
			if n == it.chunk {
				full = true
				return nil
			}
			start := len(arena)
			arena = append(arena, k...)
			arena = append(arena, val...)
			chunk = append(chunk, kv{k: arena[start : start+len(k) : start+len(k)], v: arena[start+len(k) : len(arena) : len(arena)]})
			if !it.desc {
				k, val = c.Next()
			} else {
				k, val = c.Prev()
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The part of the interval this chunk covers.
	cov := it.rest
	if full {
		last := chunk[len(chunk)-1].k
		if !it.desc {
			cov.hi, cov.hiOpen = last, false
			it.rest.lo, it.rest.loOpen = last, true
		} else {
			cov.lo, cov.loOpen = last, false
			it.rest.hi, it.rest.hiOpen = last, true
		}
		it.chunk = min(2*it.chunk, maxChunk)
	} else {
		it.done = true
	}
	if it.desc {
		reverseKV(chunk)
	}
	chunk = v.s.mv.correctChunk(v.bucketID(it.i), v.snap, chunk, cov)
	if t := v.tree(it.i); t != nil && t.Len() > 0 {
		var over []kv
		visit := func(p pent) bool {
			k := []byte(p.key)
			if !cov.belowHi(k) {
				return false
			}
			if cov.aboveLo(k) {
				over = append(over, kv{k: k, v: p.val, set: true})
			}
			return true
		}
		if cov.lo == nil {
			t.Ascend(visit)
		} else {
			t.AscendGreaterOrEqual(pent{key: string(cov.lo)}, visit)
		}
		if len(over) > 0 {
			chunk = mergeKV(chunk, over)
		}
	}
	if it.desc {
		reverseKV(chunk)
	}
	it.buf = chunk
	return nil
}

func reverseKV(s []kv) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// countCache is a table's committed row count n as of commit timestamp
// fts, read in one bbolt transaction. It stays exact while no commit
// timestamp was handed out since (every change of a row count commits with
// one, except the undo of a failed ALTER, which restores another meta) and
// the table's definition and ddlTS are the same.
type countCache struct {
	n, fts, ddl uint64
	meta        *tableMeta
}

// rowCount is the table's row count as of the view.
func (v *tview) rowCount() (uint64, error) {
	if c := v.ts.cnt.Load(); c != nil && c.meta == v.ts.meta.Load() && c.ddl == v.ts.ddlTS.Load() && c.fts == v.s.mv.nextTS.Load()-1 {
		if c.ddl > v.snap {
			return 0, errDefChanged(v.meta.name)
		}
		d := int64(c.n) - v.s.mv.countDelta(v.ts.id, v.snap, c.fts) + v.count
		return uint64(max(d, 0)), nil
	}
	var n, fts uint64
	meta, ddl := v.ts.meta.Load(), v.ts.ddlTS.Load()
	err := v.s.db.View(func(btx *bolt.Tx) error {
		tb := tableBucket(btx, v.ts.db.key, v.ts.id)
		if tb == nil {
			return sql.ErrTableNotFound.New(v.meta.name)
		}
		st, err := parseStat(tb.Get(keyStat))
		if err != nil {
			return err
		}
		if v.ts.ddlTS.Load() > v.snap {
			return errDefChanged(v.meta.name)
		}
		n, fts = st.count, fileTS(btx)
		return nil
	})
	if err != nil {
		return 0, err
	}
	v.ts.cnt.Store(&countCache{n: n, fts: fts, ddl: ddl, meta: meta})
	c := int64(n) - v.s.mv.countDelta(v.ts.id, v.snap, fts) + v.count
	return uint64(max(c, 0)), nil
}
