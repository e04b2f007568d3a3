package store

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/btree"
	bolt "go.etcd.io/bbolt"
)

// Multi-version reads without long-lived bbolt transactions.
//
// bbolt holds the latest committed state only. A client transaction reads as
// of its snapshot S, the timestamp of the last commit published when it first
// read. Every commit gets a timestamp T (a counter also stored in the file,
// keyNextTS) and, before its bbolt transaction commits, registers here the
// value each key it changes had before (the before image). A reader at S
// takes, for every key, the before image of the earliest commit with T > S
// that changed it, if any, and the value in bbolt otherwise. Registration
// precedes the bbolt commit and publication follows it, so a bbolt read
// transaction opened at any time, corrected this way, gives exactly the state
// at S. Before images are dropped once no active snapshot is older than their
// commit. Nothing here is persistent: after a restart no transaction is open.
//
// This is what lets SQL scans read in short chunks, one bbolt read
// transaction each (a read transaction held across client round trips would
// pin bbolt's memory map and block writers that must grow it), and still see
// one consistent snapshot. It also gives first-committer-wins conflict
// detection: a transaction may not commit a change to a key that a commit
// after its snapshot changed.

// bucketID names one bbolt bucket of a table: the rows (idx 0) or one index.
type bucketID struct {
	table uint64
	idx   uint32
}

// commitRec is one registered commit.
type commitRec struct {
	ts      uint64
	aborted atomic.Bool // the bbolt commit failed: ignore its before images
	keys    []ovRef
	// ranges: buckets the commit appended to (see appendRange).
	ranges []appendRange
	deltas map[uint64]int64 // table id → change of the row count
}

// appendRange registers a commit's appended keys at once (issue 13: a
// bulk load's million keys were a million before images, ≈ 0.6 µs each to
// register and drop). When the commit applied its writes to bucket b, no
// key of b sorted at or after lo, so for a snapshot before the commit
// every key in [lo, hi] was absent, unless a commit between the snapshot
// and this one deleted it, whose own before image then comes first
// (decide: the earliest commit after the snapshot wins).
type appendRange struct {
	b      bucketID
	lo, hi string
}

// rangeMinKeys is the fewest appended keys registered as a range, and
// maxRanges the most ranges a bucket keeps (lookups scan them; past it,
// commits register their keys one by one). Variables for the tests.
var (
	rangeMinKeys = 256
	maxRanges    = 32
)

// ovRange is a registered appendRange.
type ovRange struct {
	rec    *commitRec
	lo, hi string
}

// ovBucket is the registry of one bucket: before images per key, and the
// ranges of appending commits (ascending commit timestamps).
type ovBucket struct {
	keys   *btree.BTreeG[*ovKey]
	ranges []ovRange
}

func (ob *ovBucket) empty() bool {
	return (ob.keys == nil || ob.keys.Len() == 0) && len(ob.ranges) == 0
}

type ovRef struct {
	b   bucketID
	key string
}

// version is a key's value before commit rec (nil: absent).
type version struct {
	rec    *commitRec
	before []byte
}

type ovKey struct {
	key  string
	vers []version // ascending commit timestamps
}

func ovLess(a, b *ovKey) bool { return a.key < b.key }

// mvcc is the store-wide version registry.
type mvcc struct {
	lastTS atomic.Uint64 // last published commit
	// pending, while set, is closed once the batch being committed is
	// published: its clients were answered when its log record became
	// durable, before bbolt's commit (commitBatch).
	pending atomic.Pointer[chan struct{}]
	nextTS  atomic.Uint64 // next timestamp to assign (inside a bbolt write transaction)
	// Test instruments: noSettle (must-fail variant) makes reads not wait
	// for pending; testOnSettle runs when a read is about to wait.
	noSettle     bool
	testOnSettle func()

	mu      sync.Mutex // guards active and commits
	active  map[*Txn]uint64
	commits []*commitRec // registered, ascending ts

	ovMu    sync.RWMutex
	buckets map[bucketID]*ovBucket
}

var keyNextTS = []byte("\x00next_ts")

func newMVCC(tx *bolt.Tx) *mvcc {
	m := &mvcc{active: map[*Txn]uint64{}, buckets: map[bucketID]*ovBucket{}}
	ts := uint64(1)
	if b := tx.Bucket(bucketData).Get(keyNextTS); len(b) == 8 {
		ts = binary.BigEndian.Uint64(b)
	}
	m.nextTS.Store(ts)
	m.lastTS.Store(ts - 1)
	return m
}

// assign hands out a commit timestamp and records it in the file. It must be
// called inside the bbolt write transaction that makes the commit.
func (m *mvcc) assign(tx *bolt.Tx) (uint64, error) {
	ts := m.nextTS.Add(1) - 1
	return ts, tx.Bucket(bucketData).Put(keyNextTS, binary.BigEndian.AppendUint64(nil, ts+1))
}

// publish makes commits up to ts visible to new snapshots.
func (m *mvcc) publish(ts uint64) {
	for {
		cur := m.lastTS.Load()
		if ts <= cur || m.lastTS.CompareAndSwap(cur, ts) {
			return
		}
	}
}

// settled waits until every acknowledged commit is published.
func (m *mvcc) settled() {
	if p := m.pending.Load(); p != nil && !m.noSettle {
		if m.testOnSettle != nil {
			m.testOnSettle()
		}
		<-*p
	}
}

// latest is the last published commit, once every acknowledged one is.
func (m *mvcc) latest() uint64 {
	m.settled()
	return m.lastTS.Load()
}

// snapshot registers tx as reading at the current snapshot and returns it.
func (m *mvcc) snapshot(tx *Txn) uint64 {
	m.settled()
	m.mu.Lock()
	s := m.lastTS.Load()
	m.active[tx] = s
	m.mu.Unlock()
	return s
}

// release ends tx's snapshot and drops before images nobody needs.
func (m *mvcc) release(tx *Txn) {
	m.mu.Lock()
	delete(m.active, tx)
	m.gcLocked()
	m.mu.Unlock()
}

func (m *mvcc) gc() {
	m.mu.Lock()
	m.gcLocked()
	m.mu.Unlock()
}

func (m *mvcc) gcLocked() {
	horizon := m.lastTS.Load()
	for _, s := range m.active {
		horizon = min(horizon, s)
	}
	n := 0
	for n < len(m.commits) && m.commits[n].ts <= horizon {
		n++
	}
	if n == 0 {
		return
	}
	drop := m.commits[:n]
	m.commits = append(m.commits[:0:0], m.commits[n:]...)
	m.ovMu.Lock()
	for _, rec := range drop {
		for _, r := range rec.keys {
			ob := m.buckets[r.b]
			if ob == nil || ob.keys == nil {
				continue
			}
			t := ob.keys
			probe := &ovKey{key: r.key}
			ok, found := t.Get(probe)
			if !found {
				continue
			}
			kept := ok.vers[:0]
			for _, v := range ok.vers {
				if v.rec != rec {
					kept = append(kept, v)
				}
			}
			ok.vers = kept
			if len(kept) == 0 {
				t.Delete(probe)
				if ob.empty() {
					delete(m.buckets, r.b)
				}
			}
		}
		for _, r := range rec.ranges {
			ob := m.buckets[r.b]
			if ob == nil {
				continue
			}
			ob.ranges = slices.DeleteFunc(ob.ranges, func(x ovRange) bool { return x.rec == rec })
			if ob.empty() {
				delete(m.buckets, r.b)
			}
		}
	}
	m.ovMu.Unlock()
}

// register records rec's before images (called inside the commit's bbolt
// write transaction, after every check passed).
func (m *mvcc) register(rec *commitRec, befores [][]byte) {
	m.mu.Lock()
	m.commits = append(m.commits, rec)
	m.mu.Unlock()
	m.ovMu.Lock()
	bucket := func(b bucketID) *ovBucket {
		ob := m.buckets[b]
		if ob == nil {
			ob = &ovBucket{}
			m.buckets[b] = ob
		}
		return ob
	}
	for i, r := range rec.keys {
		ob := bucket(r.b)
		if ob.keys == nil {
			ob.keys = btree.NewG(16, ovLess)
		}
		probe := &ovKey{key: r.key}
		if ok, found := ob.keys.Get(probe); found {
			ok.vers = append(ok.vers, version{rec: rec, before: befores[i]})
		} else {
			probe.vers = []version{{rec: rec, before: befores[i]}}
			ob.keys.ReplaceOrInsert(probe)
		}
	}
	for _, r := range rec.ranges {
		ob := bucket(r.b)
		ob.ranges = append(ob.ranges, ovRange{rec: rec, lo: r.lo, hi: r.hi})
	}
	m.ovMu.Unlock()
}

// rangeRoom reports whether bucket b may take one more range (called
// inside the commit's bbolt write transaction, which excludes register).
func (m *mvcc) rangeRoom(b bucketID) bool {
	m.ovMu.RLock()
	defer m.ovMu.RUnlock()
	ob := m.buckets[b]
	return ob == nil || len(ob.ranges) < maxRanges
}

// decide returns the value of key at snapshot s if a commit after s changed
// it (decided): the before image of the earliest such commit, from the
// key's versions (ascending) or a range covering it.
func (ob *ovBucket) decide(key string, vers []version, s uint64) (val []byte, decided bool) {
	var first *commitRec
	for _, v := range vers {
		if v.rec.ts > s && !v.rec.aborted.Load() {
			first, val = v.rec, v.before
			break
		}
	}
	for _, r := range ob.ranges {
		if first != nil && r.rec.ts >= first.ts {
			break // ascending: none earlier follows
		}
		if r.rec.ts > s && !r.rec.aborted.Load() && r.lo <= key && key <= r.hi {
			return nil, true
		}
	}
	return val, first != nil
}

// versionsOf returns key's versions (nil if none).
func (ob *ovBucket) versionsOf(key string) []version {
	if ob.keys == nil {
		return nil
	}
	if ok, found := ob.keys.Get(&ovKey{key: key}); found {
		return ok.vers
	}
	return nil
}

// valueAt corrects one value read from bbolt to snapshot s.
func (m *mvcc) valueAt(b bucketID, key []byte, s uint64, cur []byte) []byte {
	m.ovMu.RLock()
	defer m.ovMu.RUnlock()
	ob := m.buckets[b]
	if ob == nil {
		return cur
	}
	k := string(key)
	if v, decided := ob.decide(k, ob.versionsOf(k), s); decided {
		return v
	}
	return cur
}

// changedSince reports whether a commit after s changed key.
func (m *mvcc) changedSince(b bucketID, key string, s uint64) bool {
	m.ovMu.RLock()
	defer m.ovMu.RUnlock()
	ob := m.buckets[b]
	if ob == nil {
		return false
	}
	for _, v := range ob.versionsOf(key) {
		if v.rec.ts > s && !v.rec.aborted.Load() {
			return true
		}
	}
	for _, r := range ob.ranges {
		if r.rec.ts > s && !r.rec.aborted.Load() && r.lo <= key && key <= r.hi {
			return true
		}
	}
	return false
}

// correctChunk applies the before images to a chunk of key/values read from
// bbolt covering the key interval cov: keys deleted after s come back, keys
// inserted after s go. The chunk must be sorted ascending; the result is too.
func (m *mvcc) correctChunk(b bucketID, s uint64, chunk []kv, cov interval) []kv {
	m.ovMu.RLock()
	defer m.ovMu.RUnlock()
	ob := m.buckets[b]
	if ob == nil || ob.empty() {
		return chunk
	}
	var fixes []kv // keys the overlay decides, with their value at s (nil: absent)
	visit := func(ok *ovKey) bool {
		k := []byte(ok.key)
		if !cov.belowHi(k) {
			return false
		}
		if !cov.aboveLo(k) {
			return true
		}
		if v, decided := ob.decide(ok.key, ok.vers, s); decided {
			fixes = append(fixes, kv{k: k, v: v, set: true})
		}
		return true
	}
	if t := ob.keys; t != nil && t.Len() > 0 {
		if cov.lo == nil {
			t.Ascend(visit)
		} else {
			t.AscendGreaterOrEqual(&ovKey{key: string(cov.lo)}, visit)
		}
	}
	// Keys of the chunk inside a range of a commit after s that have no
	// versions of their own were absent at s.
	if live := ob.rangesAfter(s); len(live) > 0 {
		var gone []kv
		j := 0
		for _, e := range chunk {
			for j < len(fixes) && bytes.Compare(fixes[j].k, e.k) < 0 {
				j++
			}
			if j < len(fixes) && bytes.Equal(fixes[j].k, e.k) {
				continue // decided by its versions and the ranges
			}
			k := string(e.k)
			for _, r := range live {
				if r.lo <= k && k <= r.hi {
					if ob.versionsOf(k) == nil {
						gone = append(gone, kv{k: e.k, set: true})
					}
					break
				}
			}
		}
		if len(gone) > 0 {
			fixes = mergeFixes(fixes, gone)
		}
	}
	if len(fixes) == 0 {
		return chunk
	}
	return mergeKV(chunk, fixes)
}

// rangesAfter returns the ranges of commits after s.
func (ob *ovBucket) rangesAfter(s uint64) []ovRange {
	var out []ovRange
	for _, r := range ob.ranges {
		if r.rec.ts > s && !r.rec.aborted.Load() {
			out = append(out, r)
		}
	}
	return out
}

// mergeFixes merges two sorted override lists with distinct keys.
func mergeFixes(a, b []kv) []kv {
	out := make([]kv, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if bytes.Compare(a[i].k, b[j].k) < 0 {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// kv is one key/value of a merged scan; set marks an override whose nil v
// deletes the key.
type kv struct {
	k, v []byte
	set  bool
}

// mergeKV overlays sorted overrides on a sorted chunk.
func mergeKV(base, over []kv) []kv {
	out := make([]kv, 0, len(base)+len(over))
	i, j := 0, 0
	for i < len(base) || j < len(over) {
		switch {
		case j >= len(over):
			out = append(out, base[i])
			i++
		case i >= len(base):
			if over[j].v != nil {
				out = append(out, kv{k: over[j].k, v: over[j].v})
			}
			j++
		default:
			c := bytes.Compare(base[i].k, over[j].k)
			switch {
			case c < 0:
				out = append(out, base[i])
				i++
			case c > 0:
				if over[j].v != nil {
					out = append(out, kv{k: over[j].k, v: over[j].v})
				}
				j++
			default:
				if over[j].v != nil {
					out = append(out, kv{k: base[i].k, v: over[j].v})
				}
				i++
				j++
			}
		}
	}
	return out
}

// countDelta is the change of table's row count by commits in (s, v].
func (m *mvcc) countDelta(table, s, v uint64) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var d int64
	for _, rec := range m.commits {
		if rec.ts > s && rec.ts <= v && !rec.aborted.Load() {
			d += rec.deltas[table]
		}
	}
	return d
}

// fileTS reads the last commit timestamp visible in a read transaction.
func fileTS(tx *bolt.Tx) uint64 {
	if b := tx.Bucket(bucketData).Get(keyNextTS); len(b) == 8 {
		return binary.BigEndian.Uint64(b) - 1
	}
	return 0
}

// touchedSince reports whether a commit after s wrote table.
func (m *mvcc) touchedSince(table, s uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rec := range m.commits {
		if _, ok := rec.deltas[table]; ok && rec.ts > s && !rec.aborted.Load() {
			return true
		}
	}
	return false
}
