package wal

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	bolt "go.etcd.io/bbolt"
)

const (
	kindCheckpoint = 1
	kindCommit     = 2

	opPut = 1
	opDel = 2

	hdrLen  = 8                // len u32 | crc u32
	bodyHdr = 8 + 8 + 1        // LSN | generation | kind
	maxBody = 1<<31 - 1 - 4096 // a record length that fits the u32 field with room
	oneGiB  = 1 << 30          // bbolt's mmap step above 1 GiB
	maxMap  = 0xFFFFFFFFFFFF   // bbolt's maximum mapping on 64-bit platforms
	walExt  = ".wal"           // dpsql.db → dpsql.wal
	zeroBuf = 1 << 20          // chunk of zeros written when preallocating
)

// Sizes (variables for the tests, which use small ones).
var (
	logSize int64 = 64 << 20         // preallocated log
	ckptAt  int64 = 48 << 20         // checkpoint once the log holds this much
	ckptAge       = 30 * time.Second // … or once the last checkpoint is this old
	// … or after this many logged commits: while C is pinned, the pages
	// each commit frees stay pending, and bbolt writes its whole freelist
	// (pending included) at every commit, so the cost per commit grows
	// with the commits since the checkpoint (≈ 13 pages each).
	ckptCommits       = 64
	mapRoom     int64 = 32 << 20 // free mapping a pinned commit must leave
	// A commit whose record would reach bigCommit bytes (a bulk load) is
	// not logged: bbolt commits it and a checkpoint makes it durable
	// before Logged returns. Writing the batch to the log, then again to
	// bbolt's file, which the next checkpoint syncs anyway, was ≈ 3× the
	// I/O of the direct commit.
	bigCommit = 32 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Log is the write-ahead log of one bbolt file.
type Log struct {
	db   *bolt.DB
	path string   // the bbolt file
	f    *os.File // the log (flock held while open)
	dbf  *os.File // read handle on the bbolt file, for copies of meta pages

	mu       sync.Mutex // every bbolt writer holds it (the group commit's pause)
	closed   bool
	size     int64  // log file size
	off      int64  // end of the last record
	lsn      uint64 // LSN of the next record
	gen      uint64 // generation of the current checkpoint
	pin      *bolt.Tx
	lastCkpt time.Time
	since    int // logged commits since the last checkpoint
	initMmap int
	buf      []byte

	h hooks
}

// hooks are test instruments (power-loss simulation and must-fail
// variants); all nil in production.
type hooks struct {
	beforeWrite    func(off int64, rec []byte) // a log record is about to be written
	afterLogSync   func()                      // a log fdatasync returned
	afterDBSync    func()                      // a bbolt fdatasync returned
	beforeDBSync   func()                      // a checkpoint is about to fdatasync bbolt's file
	skipLogSync    bool                        // must-fail: records are not fdatasynced
	noPin          bool                        // must-fail: checkpoints pin nothing
	skipDirectCkpt bool                        // must-fail: a commit too large to log returns without its checkpoint
	fatal          func(error)                 // instead of exiting
	beforeTail     func()                      // LoggedAsync's goroutine starts (SetTailHook)
}

var registry sync.Map // *bolt.DB → *Log

func logOf(db *bolt.DB) *Log {
	if v, ok := registry.Load(db); ok {
		return v.(*Log)
	}
	return nil
}

// Enabled reports whether db is behind a write-ahead log.
func Enabled(db *bolt.DB) bool { return logOf(db) != nil }

// LogPath is the log beside the bbolt file path (dpsql.db → dpsql.wal).
func LogPath(dbPath string) string {
	return strings.TrimSuffix(dbPath, filepath.Ext(dbPath)) + walExt
}

// Open opens the bbolt file at path behind its log, recovering from an
// unclean stop first: C's meta page back into both slots, the commit records
// after it replayed, then a checkpoint. A data directory without a log (or
// with an empty one, after a clean Close) opens as it is. opts.NoSync is
// forced on: durability comes from the log and the checkpoints.
func Open(path string, opts *bolt.Options) (*bolt.DB, error) {
	return open(path, opts, hooks{})
}

func open(path string, opts *bolt.Options, h hooks) (*bolt.DB, error) {
	o := bolt.Options{}
	if opts != nil {
		o = *opts
	}
	o.NoSync = true
	lp := LogPath(path)
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", lp, err)
	}
	fail := func(err error) (*bolt.DB, error) {
		f.Close()
		return nil, err
	}
	if err := flock(f, o.Timeout); err != nil {
		return fail(fmt.Errorf("wal: lock %s: %w (is another dpsql using this data dir?)", lp, err))
	}
	st, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("wal: %w", err))
	}
	size := st.Size()
	if size < logSize {
		if err := zeroFill(f, size, logSize); err != nil {
			return fail(fmt.Errorf("wal: preallocating %s: %w", lp, err))
		}
		size = logSize
		if err := syncDir(filepath.Dir(lp)); err != nil {
			return fail(err)
		}
	}
	sc, err := scan(f, size)
	if err != nil {
		return fail(err)
	}
	if sc.ckpt != nil {
		logrus.WithFields(logrus.Fields{"log": lp, "checkpoint_txid": sc.ckpt.txid, "records": len(sc.commits)}).
			Warn("wal: unclean stop; restoring the last checkpoint and replaying the log")
		if err := restoreMeta(path, sc.ckpt); err != nil {
			return fail(err)
		}
	}
	db, err := bolt.Open(path, 0o600, &o)
	if err != nil {
		return fail(err)
	}
	dbf, err := os.Open(path)
	if err != nil {
		db.Close()
		return fail(fmt.Errorf("wal: %w", err))
	}
	l := &Log{db: db, path: path, f: f, dbf: dbf, size: size, lsn: sc.next, initMmap: o.InitialMmapSize, h: h}
	if len(sc.commits) > 0 {
		err := db.Update(func(tx *bolt.Tx) error {
			for _, body := range sc.commits {
				if err := replay(tx, body); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			db.Close()
			dbf.Close()
			return fail(fmt.Errorf("wal: replaying %s: %w", lp, err))
		}
	}
	l.mu.Lock()
	err = l.checkpointLocked()
	l.mu.Unlock()
	if err != nil {
		db.Close()
		dbf.Close()
		return fail(err)
	}
	registry.Store(db, l)
	return db, nil
}

// Unclean reports whether the log beside the bbolt file at path holds a
// checkpoint, i.e. the last process using it did not close it: the data
// file may then lack acknowledged commits or hold unsynced pages, and only
// Open (which restores the checkpoint and replays) may open it. A missing
// log is clean.
func Unclean(path string) (bool, error) {
	lp := LogPath(path)
	f, err := os.Open(lp)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("wal: open %s: %w", lp, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("wal: %w", err)
	}
	sc, err := scan(f, st.Size())
	if err != nil {
		return false, err
	}
	return sc.ckpt != nil, nil
}

// Close checkpoints, empties the log (so that an older binary may open the
// directory), drops the pin and closes bbolt. A db without a log is closed.
func Close(db *bolt.DB) error {
	l := logOf(db)
	if l == nil {
		return db.Close()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	registry.Delete(db)
	err := db.Sync()
	if err == nil {
		// Zero the checkpoint record: the log is empty. A torn zeroing
		// leaves either the old record (replay of idempotent records onto
		// a pinned C) or an invalid one (bbolt's synced file as it is).
		hdr := make([]byte, hdrLen+bodyHdr)
		if _, err = l.f.WriteAt(hdr, 0); err == nil {
			err = fdatasync(l.f)
		}
	}
	if l.pin != nil {
		l.pin.Rollback()
		l.pin = nil
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	l.dbf.Close()
	l.f.Close()
	if err != nil {
		return fmt.Errorf("wal: close: %w", err)
	}
	return nil
}

// Update runs fn in a bbolt write transaction with the group commit paused
// and returns once the result is durable (a checkpoint). It is the only way
// to write a shared bbolt file outside the store's group commit; without a
// log it is db.Update.
func Update(db *bolt.DB, fn func(*bolt.Tx) error) error {
	l := logOf(db)
	if l == nil {
		return db.Update(fn)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return bolt.ErrDatabaseNotOpen
	}
	err := db.Update(func(tx *bolt.Tx) error {
		// The transaction's free pages are computed (with the pin): drop
		// it so that a commit that grows the mapping cannot wait for it.
		l.unpin()
		return fn(tx)
	})
	if cerr := l.checkpointLocked(); cerr != nil {
		l.fatal(cerr)
		return cerr
	}
	return err
}

// Logged runs fn in a bbolt write transaction with a recorder; the writes fn
// records are logged durably before bbolt commits. fn must record exactly
// the puts and deletes it makes (whole values), and nothing it writes may
// be visible before Logged returns. Without a log rec is nil (its methods do
// nothing) and this is db.Update. A commit whose record outgrows bigCommit
// is made durable as Update's is: bbolt commits it (on pages the pinned
// checkpoint does not use) and a checkpoint follows; a crash before the
// checkpoint record is durable recovers the state before it.
func Logged(db *bolt.DB, fn func(tx *bolt.Tx, rec *Rec) error) error {
	return LoggedThen(db, fn, nil)
}

// LoggedThen is Logged that also calls durable as soon as the record is
// fdatasynced, before bbolt's commit (without fsync) and any checkpoint: the
// commit is then durable (recovery replays it) and may be acknowledged,
// although bbolt's readers do not see it until LoggedThen returns. durable is
// not called when nothing was logged, when fn or the log write failed, or
// without a log.
func LoggedThen(db *bolt.DB, fn func(tx *bolt.Tx, rec *Rec) error, durable func()) error {
	var out error
	logged(db, fn, durable, false, func(err error) { out = err })
	return out
}

// LoggedAsync is LoggedThen whose tail runs on a new goroutine: once durable
// has returned, LoggedAsync returns, and bbolt's commit (without fsync), a
// checkpoint when one is due and then done(err) follow there, with the log
// (and so every other bbolt writer) held until they are over. When nothing
// was logged, or fn or the log write failed, or without a log, everything
// runs before LoggedAsync returns, done included.
func LoggedAsync(db *bolt.DB, fn func(tx *bolt.Tx, rec *Rec) error, durable func(), done func(error)) {
	logged(db, fn, durable, true, done)
}

func logged(db *bolt.DB, fn func(tx *bolt.Tx, rec *Rec) error, durable func(), async bool, done func(error)) {
	l := logOf(db)
	if l == nil {
		done(db.Update(func(tx *bolt.Tx) error { return fn(tx, nil) }))
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		done(bolt.ErrDatabaseNotOpen)
		return
	}
	tx, err := db.Begin(true)
	if err != nil {
		l.mu.Unlock()
		done(err)
		return
	}
	ok := false
	defer func() {
		if !ok { // fn panicked (as db.Update does)
			_ = tx.Rollback()
			l.mu.Unlock()
		}
	}()
	rec := l.newRec()
	if err := fn(tx, rec); err != nil {
		ok = true
		_ = tx.Rollback()
		l.mu.Unlock()
		done(err)
		return
	}
	ckpt, direct, logged := false, false, false
	switch {
	case rec.big:
		// Not logged: the checkpoint after the commit makes it durable
		// (synchronously, before done: no early answer), and the pin goes
		// so that the commit can grow the mapping.
		l.keepBuf(rec.b)
		l.unpin()
		direct = true
	case rec.ops > 0:
		if l.mapAtRisk(tx, len(rec.b)) {
			l.unpin() // a checkpoint follows the commit
			ckpt = true
		}
		if err := l.appendLocked(rec.b); err != nil {
			ok = true
			// The record may or may not be on disk: only recovery knows.
			l.fatal(err)
			_ = tx.Rollback()
			l.mu.Unlock()
			done(err)
			return
		}
		l.keepBuf(rec.b)
		l.since++
		logged = true
		if durable != nil {
			durable()
		}
	}
	ok = true
	tail := func() {
		if l.h.beforeTail != nil {
			l.h.beforeTail()
		}
		err := l.finishLocked(tx, logged, ckpt, direct)
		l.mu.Unlock()
		done(err)
	}
	if async && logged {
		go tail()
		return
	}
	tail()
}

// SetTailHook makes f run, in tests of other packages, at the start of
// LoggedAsync's goroutine: after the clients were answered, before bbolt's
// commit. Set it before any commit.
func SetTailHook(db *bolt.DB, f func()) {
	if l := logOf(db); l != nil {
		l.mu.Lock()
		l.h.beforeTail = f
		l.mu.Unlock()
	}
}

// finishLocked commits tx (without fsync) and checkpoints when one is due
// or the commit was direct (not logged: the checkpoint makes it durable).
// A failure once the record is durable stops the process.
func (l *Log) finishLocked(tx *bolt.Tx, logged, ckpt, direct bool) error {
	if err := tx.Commit(); err != nil {
		if logged {
			err = fmt.Errorf("wal: bbolt commit failed after its log record was durable: %w", err)
			l.fatal(err)
			return err
		}
		if direct {
			// The pin went before the commit: a checkpoint pins the
			// unchanged file again before more logged commits reuse pages.
			if cerr := l.checkpointLocked(); cerr != nil {
				l.fatal(cerr)
			}
		}
		return err
	}
	if direct && l.h.skipDirectCkpt {
		return nil // must-fail: acknowledged before it is durable
	}
	if direct || ckpt || l.since >= ckptCommits || l.off >= ckptAt || time.Since(l.lastCkpt) >= ckptAge {
		if err := l.checkpointLocked(); err != nil {
			l.fatal(err)
			return err
		}
	}
	return nil
}

// Checkpoint makes bbolt's file the new base and empties the log.
func Checkpoint(db *bolt.DB) error {
	l := logOf(db)
	if l == nil {
		return db.Sync()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return bolt.ErrDatabaseNotOpen
	}
	return l.checkpointLocked()
}

// fatal stops the process: after a failed fsync or a bbolt commit failing
// behind a durable record, memory and disk may disagree and only recovery
// can tell which commits count (as PostgreSQL after a failed fsync).
func (l *Log) fatal(err error) {
	if l.h.fatal != nil {
		l.h.fatal(err)
		return
	}
	logrus.WithError(err).Fatal("wal: stopping the server; the next start recovers from the log")
}

func (l *Log) unpin() {
	if l.pin != nil {
		l.pin.Rollback()
		l.pin = nil
	}
}

// mapAtRisk reports whether committing tx (with a record of n bytes) might
// grow bbolt's file past its mapping, which bbolt would then remap while the
// pin holds the mmap lock. The mapping is at least InitialMmapSize and at
// least bbolt's mmap size for the high-water mark.
func (l *Log) mapAtRisk(tx *bolt.Tx, n int) bool {
	hwm := tx.Size()
	mapped := max(int64(l.initMmap), mmapSize(hwm))
	return hwm+4*int64(n)+mapRoom >= mapped
}

// mmapSize is bbolt's: doubling from 32 KiB to 1 GiB, then 1 GiB steps.
func mmapSize(size int64) int64 {
	for i := uint(15); i <= 30; i++ {
		if size <= 1<<i {
			return 1 << i
		}
	}
	if r := size % oneGiB; r > 0 {
		size += oneGiB - r
	}
	return min(size, maxMap)
}

// checkpointLocked: bbolt's file durable (state C), pin C, log the
// checkpoint record at offset 0 with a new generation, then let go of the
// previous pin.
func (l *Log) checkpointLocked() error {
	if l.h.beforeDBSync != nil {
		l.h.beforeDBSync()
	}
	if err := l.db.Sync(); err != nil {
		return fmt.Errorf("wal: checkpoint: syncing %s: %w", l.path, err)
	}
	if l.h.afterDBSync != nil {
		l.h.afterDBSync()
	}
	pin, err := l.db.Begin(false)
	if err != nil {
		return fmt.Errorf("wal: checkpoint: %w", err)
	}
	txid := uint64(pin.ID())
	ps := l.db.Info().PageSize
	meta := make([]byte, ps)
	if _, err := l.dbf.ReadAt(meta, int64(txid%2)*int64(ps)); err != nil {
		pin.Rollback()
		return fmt.Errorf("wal: checkpoint: reading meta page: %w", err)
	}
	if got := binary.LittleEndian.Uint64(meta[metaTxidOff:]); got != txid {
		pin.Rollback()
		return fmt.Errorf("wal: checkpoint: meta slot %d holds txid %d, want %d", txid%2, got, txid)
	}
	var g [8]byte
	if _, err := rand.Read(g[:]); err != nil {
		pin.Rollback()
		return fmt.Errorf("wal: checkpoint: %w", err)
	}
	gen := binary.LittleEndian.Uint64(g[:])
	b := make([]byte, hdrLen, hdrLen+bodyHdr+12+ps)
	b = binary.LittleEndian.AppendUint64(b, l.lsn)
	b = binary.LittleEndian.AppendUint64(b, gen)
	b = append(b, kindCheckpoint)
	b = binary.LittleEndian.AppendUint64(b, txid)
	b = binary.LittleEndian.AppendUint32(b, uint32(ps))
	b = append(b, meta...)
	l.off, l.gen = 0, gen
	if err := l.appendLocked(b); err != nil {
		pin.Rollback()
		return fmt.Errorf("wal: checkpoint: %w", err)
	}
	l.unpin()
	if l.h.noPin {
		pin.Rollback()
	} else {
		l.pin = pin
	}
	l.lastCkpt, l.since = time.Now(), 0
	return nil
}

// metaTxidOff is the offset of the txid in a bbolt meta page: page header
// 16, magic 4, version 4, page size 4, flags 4, root bucket 16, freelist 8,
// high-water mark 8.
const metaTxidOff = 64

// appendLocked writes record b (its first hdrLen bytes are filled here) at
// the end of the log and fdatasyncs it.
func (l *Log) appendLocked(b []byte) error {
	body := b[hdrLen:]
	if len(body) > maxBody {
		return fmt.Errorf("wal: a commit record of %d bytes is too large", len(body))
	}
	binary.LittleEndian.PutUint32(b[0:], uint32(len(body)))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(body, crcTable))
	end := l.off + int64(len(b))
	if end+hdrLen > l.size {
		// A large commit: grow the zero-filled log (the growth is
		// metadata the next fdatasync covers).
		ns := max(2*l.size, (end+hdrLen+zeroBuf-1)/zeroBuf*zeroBuf)
		if err := zeroFill(l.f, l.size, ns); err != nil {
			return fmt.Errorf("wal: growing the log: %w", err)
		}
		l.size = ns
	}
	if l.h.beforeWrite != nil {
		l.h.beforeWrite(l.off, b)
	}
	if _, err := l.f.WriteAt(b, l.off); err != nil {
		return fmt.Errorf("wal: writing the log: %w", err)
	}
	if !l.h.skipLogSync || body[16] != kindCommit {
		if err := fdatasync(l.f); err != nil {
			return fmt.Errorf("wal: syncing the log: %w", err)
		}
		if l.h.afterLogSync != nil {
			l.h.afterLogSync()
		}
	}
	l.off = end
	l.lsn++
	return nil
}

// keepBuf keeps a record's buffer for the next one, unless it is large.
func (l *Log) keepBuf(b []byte) {
	if cap(b) <= keepBufMax {
		l.buf = b[:0]
	} else {
		l.buf = nil
	}
}

// keepBufMax is the largest record buffer kept between commits.
const keepBufMax = 4 << 20

// Rec records the writes of one commit for the log.
type Rec struct {
	b   []byte
	ops int
	// big: the record reached bigCommit bytes and records no more (the
	// commit goes to bbolt directly).
	big bool
}

func (l *Log) newRec() *Rec {
	b := append(l.buf[:0], make([]byte, hdrLen)...)
	b = binary.LittleEndian.AppendUint64(b, l.lsn)
	b = binary.LittleEndian.AppendUint64(b, l.gen)
	b = append(b, kindCommit)
	return &Rec{b: b}
}

// Expect tells the recorder that the commit will record at least n bytes
// of keys and values: when that reaches bigCommit, nothing is recorded
// (the commit goes to bbolt directly) instead of copying the first
// bigCommit bytes in vain.
func (r *Rec) Expect(n int) {
	if r != nil && n >= bigCommit {
		r.big = true
		r.b = r.b[:0]
	}
}

// full notes a record that reached bigCommit and drops its contents.
func (r *Rec) full() {
	if len(r.b) >= bigCommit {
		r.big = true
		r.b = r.b[:0]
	}
}

// Put records that key of the bucket at path (from the root) was set to val.
func (r *Rec) Put(path [][]byte, key, val []byte) {
	if r == nil || r.big {
		return
	}
	r.op(opPut, path, key)
	r.b = binary.LittleEndian.AppendUint32(r.b, uint32(len(val)))
	r.b = append(r.b, val...)
	r.full()
}

// Delete records that key of the bucket at path was deleted.
func (r *Rec) Delete(path [][]byte, key []byte) {
	if r == nil || r.big {
		return
	}
	r.op(opDel, path, key)
	r.full()
}

func (r *Rec) op(kind byte, path [][]byte, key []byte) {
	r.ops++
	r.b = append(r.b, kind, byte(len(path)))
	for _, p := range path {
		r.b = binary.LittleEndian.AppendUint16(r.b, uint16(len(p)))
		r.b = append(r.b, p...)
	}
	r.b = binary.LittleEndian.AppendUint32(r.b, uint32(len(key)))
	r.b = append(r.b, key...)
}

// checkpoint is a parsed checkpoint record.
type checkpoint struct {
	txid uint64
	meta []byte
}

type scanned struct {
	ckpt    *checkpoint // nil: the log is empty
	commits [][]byte    // payloads of the commit records after it
	next    uint64      // LSN of the next record
}

// scan reads the log: a checkpoint record at offset 0, then commit records
// with consecutive LSNs and its generation, up to the first that does not
// check.
func scan(f *os.File, size int64) (scanned, error) {
	sc := scanned{next: 1}
	var off int64
	var gen uint64
	for off+hdrLen <= size {
		var h [hdrLen]byte
		if _, err := f.ReadAt(h[:], off); err != nil {
			return sc, fmt.Errorf("wal: reading the log: %w", err)
		}
		n := int64(binary.LittleEndian.Uint32(h[:]))
		if n < bodyHdr || n > maxBody || off+hdrLen+n > size {
			break
		}
		body := make([]byte, n)
		if _, err := f.ReadAt(body, off+hdrLen); err != nil {
			return sc, fmt.Errorf("wal: reading the log: %w", err)
		}
		if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(h[4:]) {
			break
		}
		lsn, g, kind := binary.LittleEndian.Uint64(body), binary.LittleEndian.Uint64(body[8:]), body[16]
		p := body[bodyHdr:]
		if off == 0 {
			if kind != kindCheckpoint || len(p) < 12 {
				break
			}
			ps := int(binary.LittleEndian.Uint32(p[8:]))
			if len(p) != 12+ps {
				break
			}
			sc.ckpt = &checkpoint{txid: binary.LittleEndian.Uint64(p), meta: p[12:]}
			gen = g
		} else if kind != kindCommit || lsn != sc.next || g != gen {
			break
		} else {
			sc.commits = append(sc.commits, p)
		}
		sc.next = lsn + 1
		off += hdrLen + n
	}
	return sc, nil
}

// replay applies one commit record's writes.
func replay(tx *bolt.Tx, p []byte) error {
	bad := errors.New("wal: malformed commit record")
	for len(p) > 0 {
		if len(p) < 2 {
			return bad
		}
		kind, np := p[0], int(p[1])
		p = p[2:]
		var b *bolt.Bucket
		for i := range np {
			if len(p) < 2 {
				return bad
			}
			n := int(binary.LittleEndian.Uint16(p))
			if len(p) < 2+n {
				return bad
			}
			name := p[2 : 2+n]
			p = p[2+n:]
			if i == 0 {
				b = tx.Bucket(name)
			} else if b != nil {
				b = b.Bucket(name)
			}
			if b == nil {
				return fmt.Errorf("wal: replay: bucket %q missing", name)
			}
		}
		if b == nil {
			return bad
		}
		key, rest, ok := field(p)
		if !ok {
			return bad
		}
		p = rest
		switch kind {
		case opPut:
			val, rest, ok := field(p)
			if !ok {
				return bad
			}
			p = rest
			if err := b.Put(key, val); err != nil {
				return fmt.Errorf("wal: replay: %w", err)
			}
		case opDel:
			if err := b.Delete(key); err != nil {
				return fmt.Errorf("wal: replay: %w", err)
			}
		default:
			return bad
		}
	}
	return nil
}

func field(p []byte) (v, rest []byte, ok bool) {
	if len(p) < 4 {
		return nil, nil, false
	}
	n := int(binary.LittleEndian.Uint32(p))
	if len(p) < 4+n {
		return nil, nil, false
	}
	return p[4 : 4+n], p[4+n:], true
}

// restoreMeta writes the checkpoint's meta page into both meta slots of the
// bbolt file and syncs it: the file is then exactly C (its pages were
// synced at the checkpoint and never rewritten since; later pages are free
// space in C).
func restoreMeta(path string, c *checkpoint) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("wal: the log holds a checkpoint but the data file cannot be opened: %w", err)
	}
	defer f.Close()
	// bbolt locks the file the same way: keep a running process's file.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("wal: %s is in use: %w", path, err)
	}
	ps := len(c.meta)
	for slot := range 2 {
		page := append([]byte(nil), c.meta...)
		binary.LittleEndian.PutUint64(page, uint64(slot)) // the page's own id
		if _, err := f.WriteAt(page, int64(slot*ps)); err != nil {
			return fmt.Errorf("wal: restoring the checkpoint's meta page: %w", err)
		}
	}
	if err := fdatasync(f); err != nil {
		return fmt.Errorf("wal: restoring the checkpoint's meta page: %w", err)
	}
	return nil
}

func zeroFill(f *os.File, from, to int64) error {
	z := make([]byte, zeroBuf)
	for off := from; off < to; {
		n := min(int64(len(z)), to-off)
		if _, err := f.WriteAt(z[:n], off); err != nil {
			return err
		}
		off += n
	}
	return fdatasync(f)
}

func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("wal: syncing %s: %w", dir, err)
	}
	return nil
}

// flock takes the log's exclusive lock, waiting up to timeout.
func flock(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil || err != syscall.EWOULDBLOCK || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
