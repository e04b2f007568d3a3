package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestBoltPinnedBaseSurvivesTornWrites checks the property of bbolt that a
// write-ahead log in front of it would rest on (docs/results/storage.md,
// h/ins9 section, step 3): after a synced state C, commits without fsync
// leave every page of C untouched as long as a read transaction stays open
// at C, so a file torn by a power loss (any mix of C's pages and later
// ones) with C's meta page written back into both meta slots is exactly C
// again. Without the pinned reader bbolt re-uses C's freed pages and the
// same restore gives a corrupt file: the must-fail half.
func TestBoltPinnedBaseSurvivesTornWrites(t *testing.T) {
	for _, pin := range []bool{true, false} {
		t.Run(fmt.Sprintf("pin=%v", pin), func(t *testing.T) {
			changed := 0
			for seed := int64(1); seed <= 2; seed++ {
				changed += tornRestores(t, pin, seed, 4)
			}
			if pin && changed > 0 {
				t.Fatalf("%d pages of the pinned base were rewritten", changed)
			}
			if !pin && changed == 0 {
				t.Fatal("without a pinned reader no page of the base was rewritten: the check has no teeth")
			}
		})
	}
}

// tornRestores returns how many pages in use by C were rewritten by the
// later commits; when none was, it also checks n torn images restore to C.
func tornRestores(t *testing.T, pin bool, seed int64, n int) int {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "b.db")
	// The mapping must not grow while a reader is open (bbolt's remap
	// waits for all readers: step 5 of the design).
	db, err := bolt.Open(path, 0o600, &bolt.Options{InitialMmapSize: 1 << 26})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := rand.New(rand.NewSource(seed))
	commit := func(ops int) {
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("t"))
			if err != nil {
				return err
			}
			for range ops {
				k := binary.BigEndian.AppendUint64(nil, uint64(r.Intn(5000)))
				if r.Intn(4) == 0 {
					err = b.Delete(k)
				} else {
					err = b.Put(k, bytes.Repeat([]byte{byte(r.Intn(256))}, 50+r.Intn(300)))
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 50 {
		commit(100)
	}
	// The checkpoint: C is the last (synced) commit; pin it, keep its bytes.
	var rtx *bolt.Tx
	if pin {
		if rtx, err = db.Begin(false); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := db.Info().PageSize
	want := boltContents(t, base, filepath.Join(dir, "base.db"), 1<<20)
	if want == nil {
		t.Fatal("the base itself does not open")
	}
	used := usedPages(t, filepath.Join(dir, "base.db"))
	db.NoSync = true
	for range 100 {
		commit(1 + r.Intn(30))
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rtx != nil {
		if err := rtx.Rollback(); err != nil {
			t.Fatal(err)
		}
	}
	changed := 0
	for _, id := range used {
		off := id * ps
		if off+ps > len(cur) || !bytes.Equal(cur[off:off+ps], base[off:off+ps]) {
			changed++
		}
	}
	if changed > 0 {
		return changed // restoring C's meta would give a corrupt file
	}
	// C's meta page: the slot with the larger txid (offset 64: page header
	// 16, magic, version, page size, flags 16, root bucket 16, freelist 8,
	// high-water mark 8).
	metaC := base[:ps]
	if binary.LittleEndian.Uint64(base[ps+64:]) > binary.LittleEndian.Uint64(base[64:]) {
		metaC = base[ps : 2*ps]
	}
	for trial := range n {
		img := append([]byte(nil), cur...)
		for off := 2 * ps; off+ps <= len(base) && off+ps <= len(img); off += ps {
			if r.Intn(2) == 0 {
				copy(img[off:off+ps], base[off:off+ps])
			}
		}
		for slot := range 2 {
			copy(img[slot*ps:(slot+1)*ps], metaC)
			binary.LittleEndian.PutUint64(img[slot*ps:], uint64(slot)) // the page's own id
		}
		got := boltContents(t, img, filepath.Join(dir, fmt.Sprintf("img%d.db", trial)), len(want))
		if got == nil || len(got) != len(want) {
			t.Fatalf("torn image %d: %d keys, the base has %d", trial, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("torn image %d: key %q differs from the base", trial, k)
			}
		}
	}
	return 0
}

// usedPages lists the pages (past the two meta pages) that the state in
// the file at path uses: below its high-water mark and not free.
func usedPages(t *testing.T, path string) []int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil) // read-only would not load the freelist
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []int
	err = db.View(func(tx *bolt.Tx) error {
		hwm := int(tx.Size()) / db.Info().PageSize
		for id := 2; id < hwm; id++ {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			if info == nil || info.Type != "free" {
				ids = append(ids, id)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// boltContents writes img to path and returns its keys and values (at most
// limit+1), or nil if it does not open or a read fails or panics. It is
// only given images expected to be consistent: on some corrupt files
// bbolt's reads never end.
func boltContents(t *testing.T, img []byte, path string, limit int) (m map[string]string) {
	t.Helper()
	if err := os.WriteFile(path, img, 0o600); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() != nil { // bbolt panics on some corrupt pages
			m = nil
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return nil
	}
	defer db.Close()
	m = map[string]string{}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				if len(m) > limit {
					return errors.New("more keys than the base holds") // a corrupt tree may loop
				}
				m[string(name)+"/"+string(k)] = string(v)
				return nil
			})
		})
	})
	if err != nil {
		return nil
	}
	return m
}
