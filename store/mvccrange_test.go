package store

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

// TestMVCCRangesMatchHistory checks the version registry against a model
// history: commits that put, update and delete keys of two buckets, some
// appending hundreds of keys past the bucket's last (registered as one
// range, as applyTable does), some aborted; snapshots taken and released
// (so the registry drops what no snapshot needs). At every step, for every
// live snapshot, valueAt and correctChunk must give exactly the state the
// history had at that snapshot, and changedSince must report every key
// that changed since. The must-fail variant registers a range for large
// commits that do not append (keys that existed are then hidden at old
// snapshots) and must be caught.
func TestMVCCRangesMatchHistory(t *testing.T) {
	mk, mr := rangeMinKeys, maxRanges
	rangeMinKeys, maxRanges = 6, 4 // many ranges, and full buckets
	t.Cleanup(func() { rangeMinKeys, maxRanges = mk, mr })
	for _, mustFail := range []bool{false, true} {
		t.Run(fmt.Sprint("mustFail=", mustFail), func(t *testing.T) {
			bad := 0
			for seed := int64(1); seed <= 3; seed++ {
				bad += mvccRanges(t, seed, mustFail)
			}
			if mustFail && bad == 0 {
				t.Fatal("the must-fail variant was not caught")
			}
			if !mustFail && bad > 0 {
				t.Fatalf("%d wrong reads", bad)
			}
		})
	}
}

type modelState map[bucketID]map[string]string

func (st modelState) clone() modelState {
	out := modelState{}
	for b, m := range st {
		c := make(map[string]string, len(m))
		for k, v := range m {
			c[k] = v
		}
		out[b] = c
	}
	return out
}

func mvccRanges(t *testing.T, seed int64, mustFail bool) (bad int) {
	r := rand.New(rand.NewSource(seed))
	m := &mvcc{active: map[*Txn]uint64{}, buckets: map[bucketID]*ovBucket{}}
	m.nextTS.Store(1)
	bids := []bucketID{{table: 1}, {table: 1, idx: 1}}
	cur := modelState{bids[0]: {}, bids[1]: {}}
	hist := map[uint64]modelState{0: cur.clone()}
	snaps := map[*Txn]uint64{}
	key := func(i int) string { return fmt.Sprintf("k%06d", i) }
	next := map[bucketID]int{} // next appended key number
	ranges := 0
	for step := 0; step < 300; step++ {
		ts := m.nextTS.Add(1) - 1
		rec := &commitRec{ts: ts, deltas: map[uint64]int64{}}
		var befores [][]byte
		after := cur.clone()
		for _, b := range bids {
			if r.Intn(2) == 0 {
				continue
			}
			ops := map[string]*string{}
			appendRun := r.Intn(3) == 0
			if appendRun {
				n := 1 + r.Intn(2*rangeMinKeys)
				for range n {
					v := fmt.Sprintf("v%d.%d", ts, r.Intn(100))
					ops[key(next[b])] = &v
					next[b] += 1 + r.Intn(3)
				}
			} else {
				n := 1 + r.Intn(8)
				if mustFail && r.Intn(4) == 0 {
					n = rangeMinKeys + 10 // large, not appending
				}
				for range n {
					k := key(r.Intn(next[b] + 5))
					if r.Intn(3) == 0 {
						ops[k] = nil
					} else {
						v := fmt.Sprintf("v%d.%d", ts, r.Intn(100))
						ops[k] = &v
					}
				}
			}
			keys := make([]string, 0, len(ops))
			for k := range ops {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			last := ""
			for k := range cur[b] {
				last = max(last, k)
			}
			appending := keys[0] > last
			asRange := (appending || mustFail) && len(keys) >= rangeMinKeys && m.rangeRoom(b)
			if asRange {
				rec.ranges = append(rec.ranges, appendRange{b: b, lo: keys[0], hi: keys[len(keys)-1]})
				ranges++
			}
			for _, k := range keys {
				old, had := cur[b][k]
				v := ops[k]
				if v == nil && !had || v != nil && had && old == *v {
					continue
				}
				if v == nil {
					delete(after[b], k)
				} else {
					after[b][k] = *v
				}
				if asRange && v != nil {
					continue
				}
				var before []byte
				if had {
					before = []byte(old)
				}
				rec.keys = append(rec.keys, ovRef{b: b, key: k})
				befores = append(befores, before)
			}
		}
		m.register(rec, befores)
		if r.Intn(15) == 0 {
			rec.aborted.Store(true) // bbolt's commit failed: nothing changed
		} else {
			cur = after
		}
		hist[ts] = cur.clone()
		m.publish(ts)
		// Snapshots come and go.
		if r.Intn(3) == 0 {
			tx := &Txn{}
			snaps[tx] = m.snapshot(tx)
		}
		for tx := range snaps {
			if r.Intn(8) == 0 {
				delete(snaps, tx)
				m.release(tx)
			}
		}
		m.gc()
		for _, s := range snaps {
			bad += checkSnapshot(t, r, m, bids, cur, hist[s], s, mustFail)
		}
	}
	if ranges < 20 {
		t.Fatalf("only %d ranges registered", ranges)
	}
	return bad
}

// checkSnapshot compares the registry's reads at snapshot s with the
// history's state want.
func checkSnapshot(t *testing.T, r *rand.Rand, m *mvcc, bids []bucketID, cur, want modelState, s uint64, quiet bool) (bad int) {
	t.Helper()
	for _, b := range bids {
		var all []string
		seen := map[string]bool{}
		for k := range cur[b] {
			all, seen[k] = append(all, k), true
		}
		for k := range want[b] {
			if !seen[k] {
				all = append(all, k)
			}
		}
		sort.Strings(all)
		for _, k := range all {
			var c []byte
			if v, ok := cur[b][k]; ok {
				c = []byte(v)
			}
			got := m.valueAt(b, []byte(k), s, c)
			w, ok := want[b][k]
			if ok != (got != nil) || ok && string(got) != w {
				if !quiet {
					t.Errorf("snapshot %d, %v %s: valueAt %q, want %q (present %v)", s, b, k, got, w, ok)
				}
				bad++
			}
			if cw, cok := cur[b][k]; (cok != ok || cw != w) && !m.changedSince(b, k, s) {
				if !quiet {
					t.Errorf("snapshot %d, %v %s: changed, changedSince false", s, b, k)
				}
				bad++
			}
		}
		// A scan of a random interval.
		var cov interval
		if len(all) > 0 && r.Intn(2) == 0 {
			cov.lo = []byte(all[r.Intn(len(all))])
			cov.loOpen = r.Intn(2) == 0
		}
		if len(all) > 0 && r.Intn(2) == 0 {
			cov.hi = []byte(all[r.Intn(len(all))])
			cov.hiOpen = r.Intn(2) == 0
		}
		var chunk []kv
		for _, k := range all {
			if v, ok := cur[b][k]; ok && cov.aboveLo([]byte(k)) && cov.belowHi([]byte(k)) {
				chunk = append(chunk, kv{k: []byte(k), v: []byte(v)})
			}
		}
		got := m.correctChunk(b, s, chunk, cov)
		var exp []kv
		for _, k := range all {
			if v, ok := want[b][k]; ok && cov.aboveLo([]byte(k)) && cov.belowHi([]byte(k)) {
				exp = append(exp, kv{k: []byte(k), v: []byte(v)})
			}
		}
		same := len(got) == len(exp)
		for i := 0; same && i < len(got); i++ {
			same = bytes.Equal(got[i].k, exp[i].k) && bytes.Equal(got[i].v, exp[i].v)
		}
		if !same {
			if !quiet {
				t.Errorf("snapshot %d, %v: a scan gives %d keys, want %d", s, b, len(got), len(exp))
			}
			bad++
		}
	}
	return bad
}

// TestMVCCRangeAfterDelete: a key deleted by one commit and appended again
// by a later commit's range reads as its first value at a snapshot before
// both (the earlier before image wins over the range).
func TestMVCCRangeAfterDelete(t *testing.T) {
	m := &mvcc{active: map[*Txn]uint64{}, buckets: map[bucketID]*ovBucket{}}
	m.nextTS.Store(1)
	b := bucketID{table: 7}
	old := &Txn{}
	s := m.snapshot(old) // 0: key "k5" = "a"
	del := &commitRec{ts: 1, deltas: map[uint64]int64{}, keys: []ovRef{{b: b, key: "k5"}}}
	m.register(del, [][]byte{[]byte("a")})
	m.publish(1)
	mid := &Txn{}
	s1 := m.snapshot(mid)
	app := &commitRec{ts: 2, deltas: map[uint64]int64{}, ranges: []appendRange{{b: b, lo: "k4", hi: "k9"}}}
	m.register(app, nil)
	m.publish(2)
	if got := m.valueAt(b, []byte("k5"), s, []byte("new")); string(got) != "a" {
		t.Fatalf("before both: %q, want a", got)
	}
	if got := m.valueAt(b, []byte("k5"), s1, []byte("new")); got != nil {
		t.Fatalf("between: %q, want absent", got)
	}
	if got := m.valueAt(b, []byte("k5"), 2, []byte("new")); string(got) != "new" {
		t.Fatalf("after: %q", got)
	}
	chunk := m.correctChunk(b, s, []kv{{k: []byte("k5"), v: []byte("new")}, {k: []byte("k6"), v: []byte("x")}}, interval{})
	if len(chunk) != 1 || string(chunk[0].k) != "k5" || string(chunk[0].v) != "a" {
		t.Fatalf("scan before both: %v", chunk)
	}
	m.release(old)
	m.release(mid)
	if len(m.buckets) != 0 {
		t.Fatalf("released: %d buckets left", len(m.buckets))
	}
}
