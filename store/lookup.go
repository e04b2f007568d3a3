package store

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// Index lookups: go-mysql-server turns filters and join conditions on
// indexed columns into ranges; each range becomes a key interval of the
// index (or of the rows, for PRIMARY) scanned in order, and every row found
// is tested against the exact range, so the interval only has to contain
// the matching keys (index.go widens it when a bound cannot be encoded
// exactly). Lookups go through CheckRead like every other read.

var (
	_ sql.IndexAddressableTable = (*Table)(nil)
	_ sql.IndexedTable          = (*indexedTable)(nil)
)

// GetIndexes lists PRIMARY (for tables with a primary key), then the
// secondary indexes by name (the order SHOW CREATE TABLE prints them in,
// as go-mysql-server's reference implementation does).
func (t *Table) GetIndexes(*sql.Context) ([]sql.Index, error) {
	var out []sql.Index
	if t.meta.keys != nil {
		out = append(out, &Index{db: t.meta.dbName, table: t.meta.name, meta: t.meta})
	}
	sec := make([]sql.Index, 0, len(t.meta.indexes))
	for _, im := range t.meta.indexes {
		sec = append(sec, &Index{db: t.meta.dbName, table: t.meta.name, meta: t.meta, im: im})
	}
	sort.Slice(sec, func(i, j int) bool { return sec[i].ID() < sec[j].ID() })
	return append(out, sec...), nil
}

// PreciseMatch: lookups return exactly the rows of their ranges.
func (t *Table) PreciseMatch() bool { return true }

func (t *Table) IndexedAccess(_ *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	return &indexedTable{Table: t, lookup: lookup}
}

// indexedTable is a table with a lookup chosen by the planner. live
// lookups (foreign-key checks) see the statement's own writes.
type indexedTable struct {
	*Table
	lookup sql.IndexLookup
	live   bool
}

func (t *indexedTable) LookupPartitions(_ *sql.Context, lookup sql.IndexLookup) (sql.PartitionIter, error) {
	return &lookupPartitions{p: &lookupPartition{lookup: lookup}}, nil
}

func (t *indexedTable) WithProjections(cols []string) sql.Table {
	return &indexedTable{Table: t.Table.WithProjections(cols).(*Table), lookup: t.lookup, live: t.live}
}

func (t *indexedTable) PartitionRows(ctx *sql.Context, part sql.Partition) (sql.RowIter, error) {
	if lp, ok := part.(*lookupPartition); ok {
		return t.Table.lookupRows(ctx, lp.lookup, t.live)
	}
	return t.Table.PartitionRows(ctx, part)
}

type lookupPartition struct{ lookup sql.IndexLookup }

func (*lookupPartition) Key() []byte { return []byte("lookup") }

type lookupPartitions struct {
	p    *lookupPartition
	done bool
}

func (l *lookupPartitions) Next(*sql.Context) (sql.Partition, error) {
	if l.done {
		return nil, io.EOF
	}
	l.done = true
	return l.p, nil
}

func (l *lookupPartitions) Close(*sql.Context) error { return nil }

// lookupRows scans the ranges of a lookup.
func (t *Table) lookupRows(ctx *sql.Context, lookup sql.IndexLookup, live bool) (sql.RowIter, error) {
	t.refresh(ctx)
	if err := t.s.checkRead(ctx, t.ts); err != nil {
		return nil, err
	}
	x, ok := lookup.Index.(*Index)
	if !ok || !strings.EqualFold(x.table, t.meta.name) {
		return nil, fmt.Errorf("table %s: lookup on a foreign index %v", t.meta.name, lookup.Index)
	}
	ranges, ok := lookup.Ranges.(sql.MySQLRangeCollection)
	if !ok {
		return nil, fmt.Errorf("table %s: unsupported lookup ranges %T", t.meta.name, lookup.Ranges)
	}
	// The index may come from an older definition of the table.
	bucket := 0
	full := false // scan the rows, filtered: vector indexes hold no entries
	if x.im != nil && x.im.vector {
		full = true
	} else if x.im != nil {
		i, found := t.meta.index(x.im.name)
		if !found || t.meta.indexes[i].id != x.im.id {
			return nil, errDefChanged(t.meta.name)
		}
		bucket = i + 1
		x = &Index{db: x.db, table: x.table, meta: t.meta, im: t.meta.indexes[i]}
	} else if x.im == nil {
		x = &Index{db: x.db, table: x.table, meta: t.meta}
	}
	p, width, err := t.projection()
	if err != nil {
		return nil, err
	}
	v, release, err := t.view(ctx, live)
	if err != nil {
		return nil, err
	}
	return &lookupIter{t: t, x: x, v: v, bucket: bucket, fullScan: full, ranges: ranges,
		desc: lookup.IsReverse, proj: p, width: width, release: release,
		full: newProjection(len(t.meta.schema()), seqOrds(len(t.meta.schema())))}, nil
}

type lookupIter struct {
	t        *Table
	x        *Index
	v        *tview
	bucket   int
	fullScan bool
	ranges   sql.MySQLRangeCollection
	desc     bool
	proj     projection
	full     projection
	width    int
	release  func()

	ri     int
	cur    *kvIter
	filter sql.Expression
}

func (it *lookupIter) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if it.cur == nil {
			if it.ri >= len(it.ranges) {
				it.done()
				return nil, io.EOF
			}
			r := it.ranges[it.ri]
			it.ri++
			f, err := rangeFilter(it.x, r)
			iv := interval{}
			if it.fullScan {
				// One pass over the table for all ranges.
				f, err = rangesFilter(it.x, it.ranges)
				it.ri = len(it.ranges)
			} else {
				iv = rangeInterval(ctx, it.x.parts(), r)
			}
			if err != nil {
				return nil, err
			}
			it.filter = f
			if key, ok := pkPointKey(ctx, it.x, r); ok && it.bucket == 0 && !it.fullScan {
				// Point lookup on the primary key (issue 13, sysbench): one
				// Get in the snapshot, no cursor or scan buffers.
				val, _, err := it.v.get(0, key)
				if err != nil {
					return nil, err
				}
				if val == nil {
					continue
				}
				it.cur = &kvIter{buf: []kv{{k: key, v: val}}, done: true}
			} else {
				it.cur = it.v.iter(it.bucket, iv, it.desc)
			}
		}
		e, ok, err := it.cur.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			it.cur = nil
			continue
		}
		val := e.v
		if it.bucket > 0 {
			if val, _, err = it.v.get(0, e.v); err != nil {
				return nil, err
			}
			if val == nil {
				return nil, fmt.Errorf("table %s: index %s refers to a missing row", it.t.meta.name, it.x.ID())
			}
		}
		m := it.t.meta
		row := make(sql.Row, len(m.schema()))
		if err := m.codec.decode(val, &it.full, row); err != nil {
			return nil, fmt.Errorf("table %s: %w", m.name, err)
		}
		if it.filter != nil {
			keep, err := sql.EvaluateCondition(ctx, it.filter, row)
			if err != nil {
				return nil, err
			}
			if !sql.IsTrue(keep) {
				continue
			}
		}
		if it.t.projNames == nil {
			return row, nil
		}
		out := make(sql.Row, it.width)
		for i, o := range it.t.projOrds {
			out[i] = row[o]
		}
		return out, nil
	}
}

func (it *lookupIter) done() {
	if it.release != nil {
		it.release()
		it.release = nil
	}
}

func (it *lookupIter) Close(*sql.Context) error {
	it.done()
	return nil
}

// pkPointKey returns the row key a range selects when it fixes every
// primary-key column to one integer value (the row keys are exactly the
// concatenated key parts, keys.go); false otherwise.
func pkPointKey(ctx *sql.Context, x *Index, r sql.MySQLRange) ([]byte, bool) {
	if x.im != nil || x.meta.keys == nil {
		return nil, false
	}
	parts := x.parts()
	if len(r) < len(parts) {
		return nil, false
	}
	var key []byte
	for j, p := range parts {
		switch p.kind {
		case kInt8, kInt16, kInt32, kInt64, kUint8, kUint16, kUint32, kUint64:
		default:
			return nil, false
		}
		lo, ok1 := r[j].LowerBound.(sql.Below)
		hi, ok2 := r[j].UpperBound.(sql.Above)
		if !ok1 || !ok2 {
			return nil, false
		}
		lk, lexact, lok := p.boundKey(ctx, lo.Key)
		hk, hexact, hok := p.boundKey(ctx, hi.Key)
		if !lok || !hok || !lexact || !hexact || string(lk) != string(hk) {
			return nil, false
		}
		key = append(key, lk...)
	}
	return key, true
}
