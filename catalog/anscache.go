package catalog

import (
	"encoding/binary"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Answer cache of DP aggregate queries (issue 12.2). A released noisy answer
// is stored durably under a key naming the measurement, the table's write
// epoch and its row count; the same measurement on the same snapshot returns
// the stored answer at no charge (post-processing of a release already
// paid for). Nothing here looks at row values: the epoch counts owners'
// writes through the server (bumped before each write, whether or not it
// commits), so whether an answer is reused never depends on the data.

var (
	answersBucket = []byte("dp_answers")
	epochsBucket  = []byte("dp_epochs")
)

// writeEpochs tracks, per table, whether an answer is stored at the current
// epoch: only then must the next write bump the epoch durably (one fsync per
// table per cached answer, not one per written row).
type writeEpochs struct {
	mu    sync.Mutex
	clean map[string]bool // true: no answer cached at the current epoch
}

var epochs = struct {
	sync.Mutex
	m map[*bolt.DB]*writeEpochs
}{m: map[*bolt.DB]*writeEpochs{}}

func (c *Catalog) epochs() *writeEpochs {
	epochs.Lock()
	defer epochs.Unlock()
	w, ok := epochs.m[c.db]
	if !ok {
		w = &writeEpochs{clean: map[string]bool{}}
		epochs.m[c.db] = w
	}
	return w
}

// WriteEpoch returns the table's current write epoch.
func (c *Catalog) WriteEpoch(key string) uint64 {
	var e uint64
	_ = c.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(epochsBucket); b != nil {
			if v := b.Get([]byte(key)); len(v) == 8 {
				e = binary.BigEndian.Uint64(v)
			}
		}
		return nil
	})
	return e
}

// NoteWrite is called before every write to a table. It bumps the table's
// epoch durably when an answer may be cached at the current one (always
// after a restart, then once per cached answer).
func (c *Catalog) NoteWrite(key string) error {
	w := c.epochs()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.clean[key] {
		return nil
	}
	err := c.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(epochsBucket)
		if err != nil {
			return err
		}
		var e uint64
		if v := b.Get([]byte(key)); len(v) == 8 {
			e = binary.BigEndian.Uint64(v)
		}
		return b.Put([]byte(key), binary.BigEndian.AppendUint64(nil, e+1))
	})
	if err != nil {
		return fmt.Errorf("bump write epoch of %s: %w", key, err)
	}
	w.clean[key] = true
	return nil
}

// CachedAnswer returns the stored answer for id, if any.
func (c *Catalog) CachedAnswer(id []byte) ([]byte, bool) {
	var out []byte
	_ = c.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(answersBucket); b != nil {
			if v := b.Get(id); v != nil {
				out = append([]byte(nil), v...)
			}
		}
		return nil
	})
	return out, out != nil
}

// StoreAnswer stores (durably) the answer released for id on table key.
func (c *Catalog) StoreAnswer(key string, id, answer []byte) error {
	w := c.epochs()
	w.mu.Lock()
	defer w.mu.Unlock()
	err := c.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(answersBucket)
		if err != nil {
			return err
		}
		return b.Put(id, answer)
	})
	if err != nil {
		return fmt.Errorf("store answer: %w", err)
	}
	w.clean[key] = false
	return nil
}
