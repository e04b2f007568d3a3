package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// small sets test sizes: a 256 KiB log that checkpoints at 192 KiB.
func small(t *testing.T) {
	t.Helper()
	ls, ca, mr := logSize, ckptAt, mapRoom
	logSize, ckptAt, mapRoom = 256<<10, 192<<10, 256<<10
	t.Cleanup(func() { logSize, ckptAt, mapRoom = ls, ca, mr })
}

var bktT = []byte("t")

// testOpts: a 4 MiB mapping, so that small commits keep the pin.
var testOpts = &bolt.Options{InitialMmapSize: 2 << 20}

// mkBucket creates bucket t (bucket creation is not a logged write).
func mkBucket(t *testing.T, db *bolt.DB, name []byte) {
	t.Helper()
	if err := Update(db, func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(name)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// put commits key=val in bucket t through the log.
func put(t *testing.T, db *bolt.DB, kv ...string) {
	t.Helper()
	err := Logged(db, func(tx *bolt.Tx, rec *Rec) error {
		b := tx.Bucket(bktT)
		for i := 0; i < len(kv); i += 2 {
			if err := b.Put([]byte(kv[i]), []byte(kv[i+1])); err != nil {
				return err
			}
			rec.Put([][]byte{bktT}, []byte(kv[i]), []byte(kv[i+1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// crashCopy copies the data file and the log as they are (a process kill:
// everything written is in the page cache) into a new directory.
func crashCopy(t *testing.T, path string) string {
	t.Helper()
	dir := t.TempDir()
	np := filepath.Join(dir, "d.db")
	for _, pair := range [][2]string{{path, np}, {LogPath(path), LogPath(np)}} {
		b, err := os.ReadFile(pair[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pair[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return np
}

// contents reads every key of every bucket (nested: "a/b/key"), at most
// limit keys; nil if the file does not open, a read fails or panics.
func contents(path string, limit int) (m map[string]string, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	db, err := Open(path, testOpts)
	if err != nil {
		return nil, err
	}
	defer Close(db)
	m = map[string]string{}
	var walk func(prefix string, b *bolt.Bucket) error
	walk = func(prefix string, b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if len(m) > limit {
				return errors.New("more keys than expected (a corrupt tree may loop)")
			}
			if v == nil {
				return walk(prefix+string(k)+"/", b.Bucket(k))
			}
			m[prefix+string(k)] = string(v)
			return nil
		})
	}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walk(string(name)+"/", b) })
	})
	return m, err
}

func TestReplayAfterKill(t *testing.T) {
	small(t)
	path := filepath.Join(t.TempDir(), "d.db")
	db, err := Open(path, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(db)
	mkBucket(t, db, bktT)
	for i := range 50 {
		put(t, db, fmt.Sprintf("k%03d", i), fmt.Sprintf("v%d", i), "same", fmt.Sprint(i))
	}
	got, err := contents(crashCopy(t, path), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 51 || got["t/k049"] != "v49" || got["t/same"] != "49" {
		t.Fatalf("after a kill: %d keys, k049=%q same=%q", len(got), got["t/k049"], got["t/same"])
	}
}

// TestTornTailAndCRC: a record cut short or with a flipped byte ends the
// log there; the records before it are replayed.
func TestTornTailAndCRC(t *testing.T) {
	small(t)
	for _, mode := range []string{"cut", "crc", "lsn"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.db")
			db, err := Open(path, testOpts)
			if err != nil {
				t.Fatal(err)
			}
			defer Close(db)
			mkBucket(t, db, bktT)
			put(t, db, "a", "1")
			put(t, db, "b", "2")
			l := logOf(db)
			start := l.off
			put(t, db, "c", "3")
			end := l.off
			np := crashCopy(t, path)
			f, err := os.OpenFile(LogPath(np), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			switch mode {
			case "cut": // the last record's second half never reached the disk
				_, err = f.WriteAt(make([]byte, (end-start)/2), start+(end-start)/2)
			case "crc":
				_, err = f.WriteAt([]byte{'X'}, end-1)
			case "lsn": // a valid record whose LSN does not follow
				var b [8]byte
				_, err = f.ReadAt(b[:], start+hdrLen)
				binary.LittleEndian.PutUint64(b[:], binary.LittleEndian.Uint64(b[:])+1)
				if err == nil {
					_, err = f.WriteAt(b[:], start+hdrLen)
				}
				if err == nil { // keep the CRC right: only the LSN check may refuse it
					body := make([]byte, end-start-hdrLen)
					f.ReadAt(body, start+hdrLen)
					var c [4]byte
					binary.LittleEndian.PutUint32(c[:], crcOf(body))
					_, err = f.WriteAt(c[:], start+4)
				}
			}
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			got, err := contents(np, 100)
			if err != nil {
				t.Fatal(err)
			}
			if got["t/a"] != "1" || got["t/b"] != "2" {
				t.Fatalf("records before the damaged one lost: %v", got)
			}
			if _, ok := got["t/c"]; ok {
				t.Fatalf("the damaged record was replayed: %v", got)
			}
		})
	}
}

// TestCleanCloseEmptiesLog: after Close the log holds no record, so the
// file opens as it is (an older binary ignores the log); a directory
// without a log opens too.
func TestCleanCloseEmptiesLog(t *testing.T) {
	small(t)
	path := filepath.Join(t.TempDir(), "d.db")
	plain, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bktT)
		if err != nil {
			return err
		}
		return b.Put([]byte("old"), []byte("x"))
	}); err != nil {
		t.Fatal(err)
	}
	plain.Close()
	db, err := Open(path, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, "new", "y")
	if err := Close(db); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(LogPath(path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc, err := scan(f, logSize)
	if err != nil || sc.ckpt != nil || len(sc.commits) != 0 {
		t.Fatalf("log after a clean close: checkpoint %v, %d records, %v", sc.ckpt != nil, len(sc.commits), err)
	}
	plain, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	plain.View(func(tx *bolt.Tx) error {
		if string(tx.Bucket(bktT).Get([]byte("old"))) != "x" || string(tx.Bucket(bktT).Get([]byte("new"))) != "y" {
			t.Fatal("the file after a clean close lacks a write")
		}
		return nil
	})
}

// TestRecordGrowsLog: a commit larger than the preallocated log grows it.
func TestRecordGrowsLog(t *testing.T) {
	small(t)
	path := filepath.Join(t.TempDir(), "d.db")
	db, err := Open(path, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(db)
	mkBucket(t, db, bktT)
	big := string(bytes.Repeat([]byte("z"), 1000))
	var kv []string
	for i := range 600 {
		kv = append(kv, fmt.Sprintf("big%04d", i), big)
	}
	put(t, db, kv...)
	put(t, db, "after", "1")
	got, err := contents(crashCopy(t, path), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 601 || got["t/big0599"] != big || got["t/after"] != "1" {
		t.Fatalf("after a large commit: %d keys", len(got))
	}
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// TestPowerLoss is the power-loss simulation (docs/results/storage.md,
// h/wal). A workload of logged commits and Update calls runs; at random
// moments (between operations, while a log record is being written, after
// its fdatasync and before bbolt's commit, while a checkpoint record is
// written) a crash image is taken: bbolt's file with each 4 KiB page from
// its last fdatasynced copy or its current bytes at random (any subset of
// unsynced page writes may have reached the disk), the log as of its last
// fdatasync plus a random prefix of the record being written. Every image
// must first keep the pinned base intact (no page in use by the synced
// state rewritten since) and then recover to exactly the acknowledged
// commits (plus, for an Update still running, possibly its write).
// The must-fail variants (no pin; records never fdatasynced) must be caught.
func TestPowerLoss(t *testing.T) {
	cases := []plCase{
		{name: "pinned", initMmap: 2 << 20},
		{name: "remaps", initMmap: 0, room: 64 << 10}, // the mapping grows: unpinned commits
		{name: "nopin", initMmap: 2 << 20, h: hooks{noPin: true}, mustFail: true},
		{name: "nologsync", initMmap: 2 << 20, h: hooks{skipLogSync: true}, mustFail: true},
		// Large commits not logged (bigCommit): all or nothing until
		// their checkpoint, durable after it.
		{name: "direct", initMmap: 2 << 20, big: 16 << 10},
		{name: "direct-remaps", initMmap: 0, room: 64 << 10, big: 16 << 10},
		{name: "direct-nockpt", initMmap: 2 << 20, big: 16 << 10, h: hooks{skipDirectCkpt: true}, mustFail: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			small(t)
			if c.room > 0 {
				mapRoom = c.room
			}
			if c.big > 0 {
				bc := bigCommit
				bigCommit = c.big
				t.Cleanup(func() { bigCommit = bc })
			}
			bad := 0
			seeds := int64(2)
			if raceEnabled { // CI's -race pass on 2 cores: one seed
				seeds = 1
			}
			for seed := int64(1); seed <= seeds; seed++ {
				bad += powerLoss(t, seed, c)
			}
			if c.mustFail && bad == 0 {
				t.Fatal("the must-fail variant was not caught: the simulation has no teeth")
			}
			if !c.mustFail && bad > 0 {
				t.Fatalf("%d crash images did not recover", bad)
			}
		})
	}
}

// plCase is one variant of the power-loss simulation; big sets bigCommit
// (and makes every fifth operation a large commit).
type plCase struct {
	name     string
	initMmap int
	room     int64
	big      int
	h        hooks
	mustFail bool
}

type image struct {
	db, log []byte
	base    []byte // the synced copy the torn pages came from
	want    []map[string]string
	what    string
}

type sim struct {
	t        *testing.T
	r        *rand.Rand
	path     string
	base     []byte // bbolt's file at its last fdatasync
	durLog   []byte // the log at its last fdatasync
	model    map[string]string
	pending  map[string]*string // the commit in flight (nil value: delete)
	durable  bool               // its record was fdatasynced
	maybe    map[string]*string // an Update in flight: its write may or may not count
	inLogged bool
	images   []image
	p        float64 // probability of an image at a hook
}

func (s *sim) read(p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		s.t.Fatal(err)
	}
	return b
}

func apply(m map[string]string, ops map[string]*string) map[string]string {
	out := make(map[string]string, len(m)+len(ops))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range ops {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = *v
		}
	}
	return out
}

// snap takes a crash image; rec (if any) is being written at off.
func (s *sim) snap(what string, off int64, rec []byte) {
	const ps = 4096
	cur := s.read(s.path)
	img := make([]byte, len(cur))
	for o := 0; o < len(cur); o += ps {
		e := min(o+ps, len(cur))
		switch {
		case s.r.Intn(2) == 0:
			copy(img[o:e], cur[o:e])
		case o < len(s.base):
			copy(img[o:e], s.base[o:min(e, len(s.base))])
		} // else: a page past the synced size that never reached the disk
	}
	lg := append([]byte(nil), s.durLog...)
	if rec != nil {
		cut := s.r.Intn(len(rec))
		if need := int(off) + cut; need > len(lg) {
			lg = append(lg, make([]byte, need-len(lg))...)
		}
		copy(lg[off:], rec[:cut])
	}
	want := s.model
	// A torn record whose missing tail is already on disk (an old
	// record's bytes at that offset that happen to match) is whole:
	// recovery rightly replays it.
	whole := rec != nil && int(off)+len(rec) <= len(lg) && bytes.Equal(lg[off:int(off)+len(rec)], rec)
	if s.inLogged && (s.durable || whole && s.maybe == nil) {
		want = apply(want, s.pending)
	}
	wants := []map[string]string{want}
	if s.maybe != nil {
		wants = append(wants, apply(want, s.maybe))
	}
	s.images = append(s.images, image{db: img, log: lg, base: append([]byte(nil), s.base...), want: wants, what: what})
}

func powerLoss(t *testing.T, seed int64, c plCase) (bad int) {
	initMmap, h, mustFail := c.initMmap, c.h, c.mustFail
	dir := t.TempDir()
	s := &sim{t: t, r: rand.New(rand.NewSource(seed)), path: filepath.Join(dir, "d.db"), model: map[string]string{}, p: 0.05}
	h.afterDBSync = func() { s.base = s.read(s.path) }
	direct := 0 // large commits that went to bbolt directly
	if c.big > 0 {
		// The torn moment of a direct commit: its pages and meta
		// written, not yet synced.
		h.beforeDBSync = func() {
			if s.inLogged && s.maybe != nil && s.r.Float64() < 4*s.p {
				s.snap("a direct commit before its checkpoint", 0, nil)
			}
		}
	}
	h.afterLogSync = func() {
		s.durLog = s.read(LogPath(s.path))
		if s.inLogged {
			s.durable = true
			if s.r.Float64() < s.p {
				s.snap("after the log fdatasync", 0, nil)
			}
		}
	}
	h.beforeWrite = func(off int64, rec []byte) {
		if s.r.Float64() < s.p {
			what := "inside a commit record"
			if !s.inLogged {
				what = "inside a checkpoint record"
			}
			s.snap(what, off, rec)
		}
	}
	h.fatal = func(err error) { t.Errorf("fail-stop: %v", err) }
	db, err := open(s.path, &bolt.Options{InitialMmapSize: initMmap}, h)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(db)
	s.durLog = s.read(LogPath(s.path))
	buckets := [][]byte{[]byte("t")}
	mkBucket(t, db, buckets[0])
	nb := 0
	val := func() string {
		return string(bytes.Repeat([]byte{byte('a' + s.r.Intn(26))}, 20+s.r.Intn(200)))
	}
	for step := range 160 {
		switch x := s.r.Intn(25); {
		case x == 0: // an Update (DDL, budget): a new bucket and a key
			if c.big > 0 && s.r.Intn(2) == 0 {
				break // leave room for the large commits
			}
			name := []byte(fmt.Sprintf("b%d", nb))
			nb++
			v := val()
			s.maybe = map[string]*string{string(name) + "/meta": &v}
			err := Update(db, func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket(name)
				if err != nil {
					return err
				}
				return b.Put([]byte("meta"), []byte(v))
			})
			if err != nil {
				t.Fatal(err)
			}
			s.model = apply(s.model, s.maybe)
			s.maybe = nil
			buckets = append(buckets, name)
		default: // a group commit of 1–20 writes, sometimes a large one
			n := 1 + s.r.Intn(20)
			if x == 1 || c.big > 0 && x < 6 {
				n = 300
			}
			s.pending, s.durable, s.inLogged = map[string]*string{}, false, true
			expect := n == 300 && c.big > 0 && s.r.Intn(2) == 0
			err := Logged(db, func(tx *bolt.Tx, rec *Rec) error {
				if expect {
					rec.Expect(c.big) // known large: nothing recorded
				}
				for range n {
					bn := buckets[s.r.Intn(len(buckets))]
					b := tx.Bucket(bn)
					k := fmt.Sprintf("k%04d", s.r.Intn(200))
					mk := string(bn) + "/" + k
					if s.r.Intn(4) == 0 {
						if err := b.Delete([]byte(k)); err != nil {
							return err
						}
						rec.Delete([][]byte{bn}, []byte(k))
						s.pending[mk] = nil
						continue
					}
					v := val()
					if err := b.Put([]byte(k), []byte(v)); err != nil {
						return err
					}
					rec.Put([][]byte{bn}, []byte(k), []byte(v))
					s.pending[mk] = &v
				}
				if rec.big {
					// Not logged: it counts or not, whole, until
					// its checkpoint record is durable.
					direct++
					s.maybe = s.pending
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			s.model = apply(s.model, s.pending)
			s.inLogged, s.pending, s.maybe = false, nil, nil
		}
		if s.r.Float64() < s.p {
			s.snap(fmt.Sprintf("between operations (step %d)", step), 0, nil)
		}
	}
	for i, im := range s.images {
		if !baseIntact(t, im.base, im.db, filepath.Join(dir, fmt.Sprintf("base%d.db", i))) {
			if !mustFail {
				t.Errorf("image %d (%s): a page in use by the synced state was rewritten", i, im.what)
			}
			bad++
			continue // do not read a corrupt file (bbolt may loop)
		}
		p := filepath.Join(dir, fmt.Sprintf("img%d", i), "d.db")
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, im.db, 0o600)
		os.WriteFile(LogPath(p), im.log, 0o600)
		got, err := contents(p, 5000)
		ok := false
		for _, w := range im.want {
			if err == nil && equal(got, w) {
				ok = true
			}
		}
		if !ok {
			if !mustFail {
				t.Errorf("image %d (%s): recovered %d keys (%v), want %d: %s", i, im.what, len(got), err, len(im.want[0]), diff(got, im.want[0]))
			}
			bad++
		}
	}
	if len(s.images) < 10 {
		t.Fatalf("only %d crash images", len(s.images))
	}
	if c.big > 0 && direct < 5 {
		t.Fatalf("only %d direct commits", direct)
	}
	inDirect := 0
	for _, im := range s.images {
		if len(im.want) > 1 {
			inDirect++
		}
	}
	t.Logf("seed %d: %d crash images (%d during an Update or a direct commit), %d bad, %d direct commits", seed, len(s.images), inDirect, bad, direct)
	return bad
}

// baseIntact reports whether every page the synced state uses (below its
// high-water mark and not free) is unchanged in the torn image, the
// property recovery rests on.
func baseIntact(t *testing.T, base, img []byte, tmp string) bool {
	t.Helper()
	if err := os.WriteFile(tmp, base, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(tmp, 0o600, nil)
	if err != nil {
		t.Fatalf("the synced copy does not open: %v", err)
	}
	defer db.Close()
	ps := db.Info().PageSize
	intact := true
	db.View(func(tx *bolt.Tx) error {
		hwm := int(tx.Size()) / ps
		for id := 2; id < hwm; id++ {
			info, err := tx.Page(id)
			if err != nil {
				t.Fatal(err)
			}
			if info != nil && info.Type == "free" {
				continue
			}
			o := id * ps
			if o+ps > len(img) || !bytes.Equal(img[o:o+ps], base[o:o+ps]) {
				intact = false
				return nil
			}
		}
		return nil
	})
	return intact
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func diff(got, want map[string]string) string {
	var out []string
	for k, v := range want {
		if got[k] != v {
			out = append(out, "want "+k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, "extra "+k)
		}
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = out[:5]
	}
	return fmt.Sprint(out)
}

// TestUnclean: a log left open (a crash) is unclean, a closed one and a
// missing one are clean — what engine.Open checks before opening the file
// without the log.
func TestUnclean(t *testing.T) {
	small(t)
	path := filepath.Join(t.TempDir(), "d.db")
	if u, err := Unclean(path); err != nil || u {
		t.Fatalf("no log: unclean %v, %v", u, err)
	}
	db, err := Open(path, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	mkBucket(t, db, bktT)
	put(t, db, "k", "v")
	if u, err := Unclean(path); err != nil || !u {
		t.Fatalf("open log: unclean %v, %v; want true", u, err)
	}
	if err := Close(db); err != nil {
		t.Fatal(err)
	}
	if u, err := Unclean(path); err != nil || u {
		t.Fatalf("closed log: unclean %v, %v; want false", u, err)
	}
}

// TestDurableCallbackOrder: LoggedThen calls durable (where the store
// acknowledges its clients) only after the commit's record was written and
// fdatasynced, and before bbolt's commit makes the writes visible to
// readers; after it returns they are visible. The must-fail variant does not
// fdatasync commit records (skipLogSync): durable then comes without a sync
// of its record, which the check must catch.
func TestDurableCallbackOrder(t *testing.T) {
	for _, mustFail := range []bool{false, true} {
		t.Run(fmt.Sprintf("mustFail=%v", mustFail), func(t *testing.T) {
			small(t)
			var written, synced bool
			h := hooks{
				beforeWrite: func(_ int64, rec []byte) {
					written, synced = rec[hdrLen+16] == kindCommit, false
				},
				afterLogSync: func() { synced = written },
				skipLogSync:  mustFail,
			}
			db, err := open(filepath.Join(t.TempDir(), "d.db"), testOpts, h)
			if err != nil {
				t.Fatal(err)
			}
			defer Close(db)
			mkBucket(t, db, bktT)
			visible := func(k string) bool {
				var v []byte
				if err := db.View(func(tx *bolt.Tx) error {
					v = tx.Bucket(bktT).Get([]byte(k))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return v != nil
			}
			unsynced := 0
			for i := range 5 {
				k := fmt.Sprintf("k%d", i)
				calls := 0
				err := LoggedThen(db, func(tx *bolt.Tx, rec *Rec) error {
					rec.Put([][]byte{bktT}, []byte(k), []byte("v"))
					return tx.Bucket(bktT).Put([]byte(k), []byte("v"))
				}, func() {
					calls++
					if !written || !synced {
						unsynced++
					}
					if visible(k) {
						t.Errorf("%s visible to a reader before bbolt's commit", k)
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				if calls != 1 || !visible(k) {
					t.Fatalf("%s: durable called %d times, visible after: %v", k, calls, visible(k))
				}
			}
			// Nothing logged: durable is not called.
			if err := LoggedThen(db, func(*bolt.Tx, *Rec) error { return nil }, func() { t.Error("durable called for an empty commit") }); err != nil {
				t.Fatal(err)
			}
			if !mustFail && unsynced > 0 {
				t.Fatalf("durable called %d times before the record's fdatasync", unsynced)
			}
			if mustFail && unsynced == 0 {
				t.Fatal("records were not synced but the check saw nothing: it has no teeth")
			}
		})
	}
}
