package catalog

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/dpsql/dpsql/wal"
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
	// The cache is bounded: answers are evicted oldest-stored first.
	// dp_answers_order maps an 8-byte insertion sequence to the answer id,
	// dp_answers_seq the id back to its sequence. Eviction is always safe:
	// an evicted answer just makes the next identical query a new, charged
	// release; it never returns a fresh release for free.
	orderBucket = []byte("dp_answers_order")
	seqBucket   = []byte("dp_answers_seq")
)

// Default bounds of the answer cache (per data directory).
const (
	DefaultAnswerCacheEntries = 10000
	DefaultAnswerCacheBytes   = 64 << 20
)

// writeEpochs tracks, per table, whether an answer is stored at the current
// epoch: only then must the next write bump the epoch durably (one fsync per
// table per cached answer, not one per written row).
type writeEpochs struct {
	mu    sync.Mutex
	clean map[string]bool // true: no answer cached at the current epoch
	// The answer cache's size, counted once from dp_answers_order, and its
	// bounds.
	counted    bool
	entries    int
	bytes      int64
	maxEntries int
	maxBytes   int64
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
		w = &writeEpochs{clean: map[string]bool{}, maxEntries: DefaultAnswerCacheEntries, maxBytes: DefaultAnswerCacheBytes}
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
	err := wal.Update(c.db, func(tx *bolt.Tx) error {
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

// SetAnswerCacheLimits bounds the answer cache (entries ≥ 1, bytes ≥ 1);
// the next store evicts down to them.
func (c *Catalog) SetAnswerCacheLimits(entries int, bytes int64) error {
	if entries < 1 || bytes < 1 {
		return fmt.Errorf("answer cache limits must be positive, got %d entries, %d bytes", entries, bytes)
	}
	w := c.epochs()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.maxEntries, w.maxBytes = entries, bytes
	return nil
}

// AnswerCacheSize returns the number and total size of the answers the
// bounded cache holds.
func (c *Catalog) AnswerCacheSize() (entries int, bytes int64) {
	w := c.epochs()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := c.countAnswersLocked(w); err != nil {
		return 0, 0
	}
	return w.entries, w.bytes
}

// countAnswersLocked counts the cache once per process; w.mu is held.
func (c *Catalog) countAnswersLocked(w *writeEpochs) error {
	if w.counted {
		return nil
	}
	n, size := 0, int64(0)
	err := c.db.View(func(tx *bolt.Tx) error {
		order, answers := tx.Bucket(orderBucket), tx.Bucket(answersBucket)
		if order == nil || answers == nil {
			return nil
		}
		return order.ForEach(func(_, id []byte) error {
			n++
			size += int64(len(answers.Get(id)))
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("count cached answers: %w", err)
	}
	w.counted, w.entries, w.bytes = true, n, size
	return nil
}

// StoreAnswer stores (durably) the answer released for id on table key,
// then evicts the oldest answers beyond the cache's bounds.
func (c *Catalog) StoreAnswer(key string, id, answer []byte) error {
	w := c.epochs()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := c.countAnswersLocked(w); err != nil {
		return err
	}
	entries, size := w.entries, w.bytes
	err := wal.Update(c.db, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(answersBucket)
		if err != nil {
			return err
		}
		order, err := tx.CreateBucketIfNotExists(orderBucket)
		if err != nil {
			return err
		}
		seqs, err := tx.CreateBucketIfNotExists(seqBucket)
		if err != nil {
			return err
		}
		// A replaced answer (dp_fresh) leaves the order at its old place.
		if old := seqs.Get(id); old != nil {
			if err := order.Delete(old); err != nil {
				return err
			}
			entries--
			size -= int64(len(b.Get(id)))
		}
		seq, err := order.NextSequence()
		if err != nil {
			return err
		}
		sk := binary.BigEndian.AppendUint64(nil, seq)
		if err := order.Put(sk, id); err != nil {
			return err
		}
		if err := seqs.Put(id, sk); err != nil {
			return err
		}
		if err := b.Put(id, answer); err != nil {
			return err
		}
		entries++
		size += int64(len(answer))
		// Evict oldest first; the answer just stored is kept.
		cur := order.Cursor()
		for k, old := cur.First(); k != nil && entries > 1 && (entries > w.maxEntries || size > w.maxBytes); k, old = cur.First() {
			oldID := append([]byte(nil), old...)
			size -= int64(len(b.Get(oldID)))
			entries--
			if err := b.Delete(oldID); err != nil {
				return err
			}
			if err := seqs.Delete(oldID); err != nil {
				return err
			}
			if err := cur.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store answer: %w", err)
	}
	w.entries, w.bytes = entries, size
	w.clean[key] = false
	return nil
}
