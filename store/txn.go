package store

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dpsql/dpsql/wal"
	"github.com/google/btree"
	bolt "go.etcd.io/bbolt"
)

// Transactions.
//
// A Txn buffers its writes in memory, per table and bucket (rows and each
// index), in copy-on-write B-trees, and reads through a view: the bbolt state
// corrected to its snapshot (mvcc.go) with its own writes laid over it. A
// scan sees the transaction's writes as they were when the scan started (a
// cheap clone of the trees), so a statement does not see its own changes,
// which is what MySQL promises for UPDATE … SET pk = pk + 1 and INSERT … SELECT
// from the same table. COMMIT applies everything in one bbolt write
// transaction, fsynced before it returns. Row locks (lock.go) keep other
// transactions from writing the rows a transaction wrote; as a safety net
// (and for rows written without a lock, past the lock caps), a key written
// by the transaction that a commit after its snapshot also changed makes
// the commit fail with
// ER_LOCK_DEADLOCK (1213, SQLSTATE 40001), which clients and ORMs retry; the
// whole transaction is then rolled back, as InnoDB does after a deadlock.
// Savepoints (and each statement, for statement atomicity) are clones of the
// trees.

// errLockDeadlock is the retryable conflict error. It must reach the server
// unwrapped for the MySQL error code to be 1213.
func errLockDeadlock(table string) error {
	return sql.ErrLockDeadlock.New(fmt.Sprintf("a row of %s was changed by a concurrent transaction", table))
}

// errDefChanged is MySQL's ER_TABLE_DEF_CHANGED: the table was altered,
// truncated, re-imported or re-indexed after the transaction's snapshot.
func errDefChanged(table string) error {
	return mysql.NewSQLError(erTableDefChanged, "HY000", "Table definition has changed, please retry transaction (table %s was altered, truncated or re-indexed by a concurrent statement)", table)
}

// erTableDefChanged is ER_TABLE_DEF_CHANGED (not in vitess' list).
const erTableDefChanged = 1412

// errReadOnly is MySQL's ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION (1792).
func errReadOnly() error { return sql.ErrReadOnlyTransaction.New() }

// pent is one buffered write: val nil deletes the key. uniq marks an entry
// of a unique index without NULL (checked against other keys of its prefix
// at commit); fresh marks a row key absent from the snapshot, whose
// concurrent insertion is a duplicate key rather than a conflict.
type pent struct {
	key   string
	val   []byte
	uniq  bool
	fresh bool
	// readTS is the snapshot the row was read at when this transaction
	// first wrote it: a commit after it that changed the row is a
	// conflict (0: the transaction's snapshot).
	readTS uint64
}

func pentLess(a, b pent) bool { return a.key < b.key }

type tree = btree.BTreeG[pent]

func newTree() *tree { return btree.NewG(32, pentLess) }

// txTable is a transaction's buffered writes to one table.
type txTable struct {
	ts    *tableState
	meta  *tableMeta // the definition the writes were made with
	trees []*tree    // 0: rows; i: meta.indexes[i-1]
	count int64      // change of the row count
	// Statements writing the table now, and the buffers as they were
	// before the first of them began (see Txn.view).
	open         int
	visible      []*tree
	visibleCount int64
	// readTS: while an autocommitted statement writes the table, its scans
	// and checks read the latest committed rows as of readTS (MySQL's
	// "current read" for UPDATE and DELETE); only a change committed after
	// readTS is then a conflict (see currentRead).
	readTS uint64
	// tx is the transaction owning the buffer (for its undo log);
	// visibleUndo is the undo log length when the statement began, from
	// which visible is built on the first read (see visibleLocked).
	tx          *Txn
	visibleUndo int
	visibleSet  bool
	// batch collects the undo of a batched insert (batch.go).
	batch *undoBatch
}

// undoEnt is one logged buffer change: entry key of tree i replaced old
// (absent unless had), or (i == -1) a row count change dc, or (keys set)
// the entries keys of tree i, all absent before (a batched insert logs
// one entry per tree instead of one per row: see batch.go).
type undoEnt struct {
	keys []string
	tt   *txTable
	i    int
	key  string
	old  pent
	had  bool
	dc   int64
}

// revertLocked undoes the logged changes after position pos and truncates
// the log there.
func (tx *Txn) revertLocked(pos int) {
	if pos > len(tx.undo) {
		return // a savepoint restore already went further back
	}
	for j := len(tx.undo) - 1; j >= pos; j-- {
		if u := &tx.undo[j]; u.i < 0 {
			u.tt.count -= u.dc
		} else {
			undoOne(u, u.tt.trees)
		}
	}
	clear(tx.undo[pos:])
	tx.undo = tx.undo[:pos]
}

// undoOne reverts entry change u (u.i >= 0) on trees, the buffer's own or
// a clone of them.
func undoOne(u *undoEnt, trees []*tree) {
	if u.keys != nil {
		for _, k := range u.keys {
			trees[u.i].Delete(pent{key: k})
		}
		return
	}
	if u.had {
		trees[u.i].ReplaceOrInsert(u.old)
	} else {
		trees[u.i].Delete(pent{key: u.key})
	}
}

// closeMarkLocked ends a statement mark; with none open the log is dropped.
func (tx *Txn) closeMarkLocked() {
	if tx.marksOpen > 0 {
		tx.marksOpen--
	}
	if tx.marksOpen == 0 {
		clear(tx.undo)
		tx.undo = tx.undo[:0]
	}
}

type txTableSnap struct {
	trees []*tree
	count int64
}

type savepoint struct {
	name   string
	gen    uint64
	tables map[uint64]txTableSnap
	undo   int // undo log length
}

// Txn is a transaction of the store; it is the sql.Transaction of a Session.
type Txn struct {
	readOnly bool
	// pinned: the transaction ran a locking read (SELECT … FOR UPDATE /
	// LOCK IN SHARE MODE), which takes no row lock here; its writes then
	// keep its snapshot and a row changed since fails with 1213 (first
	// committer wins) instead of being re-read, so that a value it read
	// "for update" cannot be overwritten by a lost update (Session.PinSnapshot).
	pinned bool

	mu         sync.Mutex
	s          *Store
	snap       uint64
	hasSnap    bool
	gen        uint64 // bumped when the transaction ends; stale savepoints are ignored
	tables     map[uint64]*txTable
	savepoints []savepoint
	// Statement marks (editor.go) open, and the log of buffer changes
	// made while any is open.
	marksOpen int
	undo      []undoEnt

	// Row locks (lock.go): the owner of the transaction's locks, the
	// server session (nil: a statement's own transaction), and the
	// checkpoint of the statement stmtNo to undo if it must restart;
	// epoch moves when it does, voiding the statement's marks.
	sess   *Session
	owner  *lockOwner
	stmtNo uint64
	stmtSP *savepoint
	epoch  uint64
}

var _ sql.Transaction = (*Txn)(nil)

func (tx *Txn) String() string   { return "dpsql transaction" }
func (tx *Txn) IsReadOnly() bool { return tx.readOnly }

// bind attaches the transaction to a store on first use.
func (tx *Txn) bind(s *Store) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.s == nil {
		tx.s = s
		tx.tables = map[uint64]*txTable{}
	}
	if tx.s != s {
		return errors.New("a transaction cannot span two dpsql stores")
	}
	return nil
}

// snapshotLocked returns the transaction's snapshot, taking it on first use
// (as InnoDB takes its read view at the first consistent read).
func (tx *Txn) snapshotLocked() uint64 {
	if !tx.hasSnap {
		tx.snap = tx.s.mv.snapshot(tx)
		tx.hasSnap = true
	}
	return tx.snap
}

// endLocked forgets everything and releases the snapshot; the Txn value can
// then serve as a new transaction (GMS keeps it on the session).
func (tx *Txn) endLocked() {
	if tx.s != nil && tx.hasSnap {
		tx.s.mv.release(tx)
	}
	tx.hasSnap = false
	tx.gen++
	if len(tx.tables) > 0 {
		tx.tables = map[uint64]*txTable{}
	}
	tx.savepoints = nil
	tx.marksOpen = 0
	tx.undo = nil
	tx.stmtSP, tx.stmtNo = nil, 0
	tx.releaseLocksLocked()
}

// rollback discards the transaction's writes.
func (tx *Txn) rollback() {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	tx.endLocked()
}

// table returns the buffer for ts, creating it; meta must be the definition
// the caller encodes with.
func (tx *Txn) tableLocked(ts *tableState, meta *tableMeta) (*txTable, error) {
	tt := tx.tables[ts.id]
	if tt == nil {
		tt = &txTable{ts: ts, meta: meta, trees: make([]*tree, 1+len(meta.indexes)), tx: tx}
		tx.tables[ts.id] = tt
		return tt, nil
	}
	if tt.meta.version != meta.version {
		return nil, errDefChanged(meta.name)
	}
	return tt, nil
}

// view returns a read view of ts as of the snapshot, with the
// transaction's writes. While a statement writes ts (between its editor's
// StatementBegin and StatementComplete) scans see the writes as they were
// before it began: a statement does not see its own changes, as MySQL
// promises for UPDATE … SET pk = pk + 1, INSERT … SELECT from the same
// table and multi-table UPDATE, while a trigger's statements see what the
// previous ones did. live views (foreign-key checks) see everything.
func (tx *Txn) view(ts *tableState, meta *tableMeta, live, single bool) (*tview, error) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	tt := tx.tables[ts.id]
	if live || tt == nil || tt.open == 0 {
		return tx.viewLocked(ts, meta, true)
	}
	v, err := tx.viewLocked(ts, meta, false)
	if err != nil {
		return nil, err
	}
	v.trees, v.count = tt.visibleLocked(), tt.visibleCount
	v.snap = tt.currentRead(tx, single)
	return v, nil
}

// visibleLocked returns the buffers as they were when the statement began:
// a clone of the current ones with the statement's logged changes undone,
// built on the first read (most writing statements never read their own
// table, and cloning at every row's StatementBegin was the cost).
func (tt *txTable) visibleLocked() []*tree {
	if tt.visibleSet {
		return tt.visible
	}
	vis := make([]*tree, len(tt.trees))
	for i, t := range tt.trees {
		if t != nil {
			vis[i] = t.Clone()
		}
	}
	if tx := tt.tx; tx != nil && tt.visibleUndo <= len(tx.undo) {
		for j := len(tx.undo) - 1; j >= tt.visibleUndo; j-- {
			if u := &tx.undo[j]; u.tt == tt && u.i >= 0 {
				if vis[u.i] == nil {
					vis[u.i] = newTree()
				}
				undoOne(u, vis)
			}
		}
	}
	tt.visible, tt.visibleSet = vis, true
	return vis
}

// currentRead is the read timestamp of the statement writing tt, taken at
// its first read (at least the transaction's snapshot, which keeps the
// versions it needs registered). A transaction of a single statement
// (autocommit) reads current rows, and so does any statement the server
// runs with row locks and restarts (lock.go: it computes from the latest
// version anyway, and reading it at once spares a restart whenever the row
// is not locked by another transaction). An in-process transaction of
// several statements keeps reading its snapshot: an earlier plain read of
// the row could otherwise be lost, and a change committed since is a
// conflict (first committer wins).
func (tt *txTable) currentRead(tx *Txn, single bool) uint64 {
	if tt.open == 0 || tx.pinned || !single && !tx.restartable() {
		return tx.snapshotLocked()
	}
	if tt.readTS == 0 {
		tt.readTS = max(tx.snapshotLocked(), tx.s.mv.latest())
	}
	return tt.readTS
}

// beginStatementLocked and endStatementLocked bracket a statement writing
// tt (see view).
func (tt *txTable) beginStatement() {
	if tt.open == 0 {
		tt.visible, tt.visibleSet = nil, false
		tt.visibleUndo = len(tt.tx.undo)
		tt.visibleCount = tt.count
	}
	tt.open++
}

func (tt *txTable) endStatement() {
	if tt.open > 0 {
		tt.open--
	}
	if tt.open == 0 {
		tt.visible, tt.visibleSet = nil, false
		tt.readTS = 0
	}
}

func (tx *Txn) viewLocked(ts *tableState, meta *tableMeta, clone bool) (*tview, error) {
	snap := tx.snapshotLocked()
	if ts.ddlTS.Load() > snap {
		return nil, errDefChanged(meta.name)
	}
	v := &tview{s: tx.s, ts: ts, meta: meta, snap: snap}
	if tt := tx.tables[ts.id]; tt != nil {
		if tt.meta.version != meta.version {
			return nil, errDefChanged(meta.name)
		}
		v.trees = make([]*tree, len(tt.trees))
		for i, t := range tt.trees {
			if t != nil {
				if clone {
					v.trees[i] = t.Clone()
				} else {
					v.trees[i] = t
				}
			}
		}
		v.count = tt.count
	}
	return v, nil
}

// savepointLocked captures the buffered writes.
func (tx *Txn) savepointLocked(name string) savepoint {
	sp := savepoint{name: name, gen: tx.gen, tables: make(map[uint64]txTableSnap, len(tx.tables)), undo: len(tx.undo)}
	for id, tt := range tx.tables {
		snap := txTableSnap{trees: make([]*tree, len(tt.trees)), count: tt.count}
		for i, t := range tt.trees {
			if t != nil {
				snap.trees[i] = t.Clone()
			}
		}
		sp.tables[id] = snap
	}
	return sp
}

func (tx *Txn) restoreLocked(sp savepoint) {
	if sp.gen != tx.gen {
		return // the transaction ended since: nothing of it to restore
	}
	for id, tt := range tx.tables {
		snap, ok := sp.tables[id]
		if !ok {
			delete(tx.tables, id)
			continue
		}
		for i, t := range snap.trees {
			if t != nil {
				t = t.Clone() // keep the savepoint reusable
			}
			tt.trees[i] = t
		}
		tt.count = snap.count
	}
	// Logged changes after the savepoint are undone by the restore.
	if sp.undo < len(tx.undo) {
		clear(tx.undo[sp.undo:])
		tx.undo = tx.undo[:sp.undo]
	}
}

// CreateSavepoint implements SAVEPOINT name (a new one of the same name
// replaces the old one).
func (tx *Txn) createSavepoint(name string) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if i := tx.findLocked(name); i >= 0 {
		// The old one goes; later savepoints stay (as in MySQL).
		tx.savepoints = append(tx.savepoints[:i:i], tx.savepoints[i+1:]...)
	}
	tx.savepoints = append(tx.savepoints, tx.savepointLocked(name))
}

func (tx *Txn) findLocked(name string) int {
	for i := len(tx.savepoints) - 1; i >= 0; i-- {
		if strings.EqualFold(tx.savepoints[i].name, name) {
			return i
		}
	}
	return -1
}

// rollbackToSavepoint implements ROLLBACK TO SAVEPOINT: later savepoints are
// released, the named one stays.
func (tx *Txn) rollbackToSavepoint(name string) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	i := tx.findLocked(name)
	if i < 0 {
		return sql.ErrSavepointDoesNotExist.New(name)
	}
	tx.restoreLocked(tx.savepoints[i])
	tx.savepoints = tx.savepoints[:i+1]
	return nil
}

func (tx *Txn) releaseSavepoint(name string) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if !tx.releaseLocked(name) {
		return sql.ErrSavepointDoesNotExist.New(name)
	}
	return nil
}

// releaseLocked drops the named savepoint and every later one.
func (tx *Txn) releaseLocked(name string) bool {
	i := tx.findLocked(name)
	if i < 0 {
		return false
	}
	tx.savepoints = tx.savepoints[:i]
	return true
}

// abortLocked rolls the whole transaction back after a write conflict and
// returns err.
func (tx *Txn) abortLocked(err error) error {
	tx.endLocked()
	return err
}

// commit applies the buffered writes in one durable bbolt transaction.
func (tx *Txn) commit() error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.s == nil || len(tx.tables) == 0 {
		tx.endLocked()
		return nil
	}
	defer tx.endLocked()
	if tx.sess != nil {
		// A statement that committed writes cannot be re-executed (lock.go).
		tx.sess.noteCommit()
	}
	return tx.s.commitTables(tx.snap, tx.tables)
}

// commitTables writes the buffers of one transaction (snapshot snap),
// durably, through the group commit.
func (s *Store) commitTables(snap uint64, tables map[uint64]*txTable) error {
	ids := make([]uint64, 0, len(tables))
	for id, tt := range tables {
		if tt.count == 0 && tt.empty() {
			continue
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	req := &commitReq{snap: snap, tables: make([]*txTable, len(ids)), done: make(chan error, 1)}
	for i, id := range ids {
		req.tables[i] = tables[id]
	}
	return s.group.commit(s, req)
}

// Group commit. A transaction's commit is one bbolt write transaction (two
// fsyncs: pages, then meta); while one is in progress, the commits that
// arrive queue up and the next one applies them all in a single bbolt
// transaction, each validated first and then applied, in arrival order, with
// its own commit timestamp. A commit that fails validation writes nothing and
// fails alone; the others are unaffected.
//
// Two details decide whether commits actually group. (1) When a batch is
// durable its leader answers its own client at once and hands the leadership
// to the first queued commit (if any), instead of running the next batch
// itself while its client waits. (2) After a batch is answered, its clients
// need a network round trip and a statement before they commit again, so the
// first to come back would run alone while the others queue behind it (a 1,
// 7, 1, 7 … pattern at 8 connections, half the throughput). A new leader
// therefore waits, before it starts, until as many commits are queued as the
// largest of the recent batches held, or at most the duration of the
// previous batch's bbolt transaction (gatherCap at most): like MySQL's
// binlog_group_commit_sync_delay, but bounded by the fsync time it saves.
// A single connection never waits (its batches hold one commit), and a gather
// that times out turns the waiting off for the next 1, 2, 4, … 64 batches.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*commitReq
	busy    bool          // a leader is gathering or committing a batch
	arrived chan struct{} // a commit was queued while busy (capacity 1)
	// sizes are the sizes of the last batches (a ring), lastDur the
	// duration of the previous one.
	sizes   [gatherWindow]int
	nBatch  int
	lastDur time.Duration
	// A gather that timed out makes the next leaders start at once, for
	// backoff batches (doubling while gathers keep timing out): with
	// commits out of phase (multi-statement transactions) waiting would only
	// add latency.
	skip, backoff int
}

// gatherCap bounds the wait of a leader for the commits of its batch;
// gatherWindow is the number of recent batches whose largest size is the
// target (one batch that timed out does not lower it).
const (
	gatherCap    = 4 * time.Millisecond
	gatherWindow = 16
)

// target is the number of queued commits a new leader waits for: the
// largest of the recent batches.
func (g *groupCommit) target() int {
	t := 0
	for _, n := range g.sizes {
		t = max(t, n)
	}
	return t
}

type commitReq struct {
	snap   uint64
	tables []*txTable
	done   chan error // the commit's result, or errLead
}

// errLead tells a queued commit that it is now the leader.
var errLead = errors.New("group commit: lead the next batch")

func (g *groupCommit) commit(s *Store, req *commitReq) error {
	g.mu.Lock()
	g.queue = append(g.queue, req)
	if g.busy {
		if g.arrived == nil {
			g.arrived = make(chan struct{}, 1)
		}
		select {
		case g.arrived <- struct{}{}:
		default:
		}
		g.mu.Unlock()
		if err := <-req.done; err != errLead {
			return err
		}
	} else {
		g.busy = true
		g.mu.Unlock()
	}
	g.lead(s)
	return <-req.done
}

// lead gathers and commits one batch (the caller's commit is in it), then
// hands the leadership on or ends it.
func (g *groupCommit) lead(s *Store) {
	g.mu.Lock()
	if g.arrived == nil {
		g.arrived = make(chan struct{}, 1)
	}
	if target, wait := g.target(), min(g.lastDur, gatherCap); g.skip > 0 {
		g.skip--
	} else if len(g.queue) < target && wait > 0 {
		timer := time.NewTimer(wait)
		timedOut := false
		for len(g.queue) < target && !timedOut {
			g.mu.Unlock()
			select {
			case <-g.arrived:
			case <-timer.C:
				timedOut = true
			}
			g.mu.Lock()
		}
		timer.Stop()
		if timedOut && len(g.queue) < target {
			g.backoff = min(max(1, 2*g.backoff), 64)
			g.skip = g.backoff
		} else {
			g.backoff = 0
		}
	}
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()

	start := time.Now()
	// With the write-ahead log the batch's clients are answered once its
	// record is durable, and bbolt's commit, the publication and a
	// checkpoint run on another goroutine while they send their next
	// statements; the next batch waits for them (the group stays busy).
	s.commitBatch(batch, func() {
		dur := time.Since(start)
		g.mu.Lock()
		g.sizes[g.nBatch%gatherWindow], g.lastDur = len(batch), dur
		g.nBatch++
		if len(g.queue) > 0 {
			g.queue[0].done <- errLead // its done is empty: it is in no batch yet
		} else {
			g.busy = false
		}
		g.mu.Unlock()
	})
}

// commitBatch applies a batch of commits in one durable bbolt transaction,
// answers each, and calls after once the batch is published (on another
// goroutine when the clients were answered before bbolt's commit).
//
// Through the write-ahead log the batch's writes are recorded and the record
// made durable before bbolt commits, and nothing is published before bbolt
// has committed. The clients are answered as soon as the record is durable
// (wal.LoggedAsync), before bbolt's commit: until the batch is published,
// every new snapshot, current read and direct read waits for it
// (mvcc.settled), so that a commit, once acknowledged, is seen by every
// statement that starts after it, on any connection, while nothing is
// visible before its record is durable.
func (s *Store) commitBatch(batch []*commitReq, after func()) {
	results := make([]error, len(batch))
	var recs []*commitRec
	var last uint64
	var acked chan struct{}
	answered := false
	answer := func() {
		for i, req := range batch {
			req.done <- results[i]
		}
		answered = true
	}
	durable := func() {
		acked = make(chan struct{})
		s.mv.pending.Store(&acked)
		answer()
	}
	wal.LoggedAsync(s.db, func(btx *bolt.Tx, wrec *wal.Rec) error {
		recs, last = recs[:0], 0
		wrec.Expect(batchBytes(batch))
		for i, req := range batch {
			results[i] = nil
			if err := s.validate(btx, req); err != nil {
				results[i] = err
				continue
			}
			ts, err := s.mv.assign(btx)
			if err != nil {
				return err
			}
			wrec.Put(pathData, keyNextTS, btx.Bucket(bucketData).Get(keyNextTS))
			rec := &commitRec{ts: ts, deltas: map[uint64]int64{}}
			var befores [][]byte
			for _, tt := range req.tables {
				if err := s.applyTable(btx, tt, rec, &befores, wrec); err != nil {
					return err
				}
			}
			s.mv.register(rec, befores)
			recs = append(recs, rec)
			last = ts
		}
		return nil
	}, durable, func(err error) {
		if err != nil {
			for _, rec := range recs {
				rec.aborted.Store(true)
			}
			for i := range results {
				if results[i] == nil {
					results[i] = fmt.Errorf("commit: %w", err)
				}
			}
		} else if last != 0 {
			s.mv.publish(last)
		}
		if acked != nil {
			s.mv.pending.Store(nil)
			close(acked)
		}
		if !answered {
			answer()
		}
		after()
	})
}

// batchBytes is the bytes of keys and values of a batch's buffers (0 for a
// small batch, which is not counted), for wal.Rec.Expect: a batch it
// overstates (entries that turn out to change nothing) goes to bbolt
// directly, which is as durable and atomic, only slower for a small one.
func batchBytes(batch []*commitReq) int {
	n := 0
	for _, req := range batch {
		for _, tt := range req.tables {
			for _, t := range tt.trees {
				if t != nil {
					n += t.Len()
				}
			}
		}
	}
	if n < bigBatchEntries {
		return 0
	}
	b := 0
	for _, req := range batch {
		for _, tt := range req.tables {
			for _, t := range tt.trees {
				if t != nil {
					t.Ascend(func(p pent) bool {
						b += len(p.key) + len(p.val)
						return true
					})
				}
			}
		}
	}
	return b
}

// bigBatchEntries: a batch of fewer entries is not measured by batchBytes
// (the recorder's own limit still applies).
const bigBatchEntries = 50000

func (tt *txTable) empty() bool {
	for _, t := range tt.trees {
		if t != nil && t.Len() > 0 {
			return false
		}
	}
	return true
}

// validate checks, inside the commit transaction and without writing, that
// every buffered write of a transaction may be applied: the tables still
// have the definitions the writes were made with, no row the transaction
// wrote was changed by a commit after it read it (else ER_LOCK_DEADLOCK;
// a new key someone else inserted is a duplicate), and every new unique
// index entry is the only one with its values once the transaction's own
// deletions are applied.
func (s *Store) validate(btx *bolt.Tx, req *commitReq) error {
	for _, tt := range req.tables {
		m := tt.meta
		if tt.ts.gone.Load() {
			return errDefChanged(m.name)
		}
		tb := tableBucket(btx, tt.ts.db.key, tt.ts.id)
		if _, err := readStat(tb, m); err != nil || tt.ts.ddlTS.Load() > req.snap || tt.ts.altering.Load() {
			return errDefChanged(m.name)
		}
		var ferr error
		if t := tt.trees[0]; t != nil {
			rows := tb.Bucket(bucketRows)
			bid := bucketID{table: tt.ts.id}
			t.Ascend(func(p pent) bool {
				rts := req.snap
				if p.readTS != 0 {
					rts = p.readTS
				}
				if !s.mv.changedSince(bid, p.key, rts) {
					return true
				}
				switch {
				case !p.fresh:
					ferr = errLockDeadlock(m.name)
				case p.val != nil && rows.Get([]byte(p.key)) != nil:
					ferr = s.dupAtCommit(m, nil, p.val)
				}
				return ferr == nil
			})
		}
		if ferr != nil {
			return ferr
		}
		for i, t := range tt.trees[1:] {
			if t == nil || t.Len() == 0 {
				continue
			}
			im := m.indexes[i]
			if !im.unique {
				continue
			}
			bkt := indexBucket(tb, im.id)
			if bkt == nil {
				return errDefChanged(m.name)
			}
			t.Ascend(func(p pent) bool {
				if !p.uniq || p.val == nil {
					return true
				}
				prefix := []byte(p.key[:len(p.key)-len(p.val)])
				c := bkt.Cursor()
				for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
					if string(k) == p.key {
						continue
					}
					if q, ok := t.Get(pent{key: string(k)}); ok && q.val == nil {
						continue // deleted by this transaction
					}
					row, _ := tt.trees[0].Get(pent{key: string(p.val)})
					ferr = s.dupAtCommit(m, im, row.val)
					return false
				}
				return true
			})
			if ferr != nil {
				return ferr
			}
		}
	}
	return nil
}

// applyTable writes one table's (validated) buffers inside the commit
// transaction, recording the before images.
func (s *Store) applyTable(btx *bolt.Tx, tt *txTable, rec *commitRec, befores *[][]byte, wrec *wal.Rec) error {
	m := tt.meta
	tb := tableBucket(btx, tt.ts.db.key, tt.ts.id)
	st, err := readStat(tb, m)
	if err != nil {
		return err
	}
	var ferr error
	n := 0 // room for the before images (a large tree may append: a range)
	for _, t := range tt.trees {
		if t != nil && t.Len() < rangeMinKeys {
			n += t.Len()
		}
	}
	rec.keys = slices.Grow(rec.keys, n)
	*befores = slices.Grow(*befores, n)
	for i, t := range tt.trees {
		if t == nil || t.Len() == 0 {
			continue
		}
		bid := bucketID{table: tt.ts.id}
		var bkt *bolt.Bucket
		var path [][]byte // for the log
		if i == 0 {
			path = tablePath(tt.ts, bucketRows)
			bkt = tb.Bucket(bucketRows)
			if m.keys == nil {
				bkt.FillPercent = 0.9 // sequence keys are appended at the end
			}
		} else {
			im := m.indexes[i-1]
			bid.idx = im.id
			path = tablePath(tt.ts, bucketIndexes, idxKey(im.id))
			if bkt = indexBucket(tb, im.id); bkt == nil {
				return errDefChanged(m.name)
			}
		}
		// A buffer whose smallest key sorts after the bucket's last one
		// (a bulk load in key order) is appended: no key of it is stored,
		// and full pages suit ascending puts (bbolt splits a node at
		// FillPercent of a page: the pages it leaves behind are filled
		// to the brim, as import.go's are; a later insert in the middle
		// splits the one page it lands on).
		appending := false
		if lo, ok := t.Min(); ok {
			if last, _ := bkt.Cursor().Last(); last == nil || bytes.Compare([]byte(lo.key), last) > 0 {
				appending = true
				bkt.FillPercent = 1.0
			}
		}
		// A large append registers its keys as one range (mvcc.go).
		asRange := appending && t.Len() >= rangeMinKeys && s.mv.rangeRoom(bid)
		if asRange {
			lo, _ := t.Min()
			hi, _ := t.Max()
			rec.ranges = append(rec.ranges, appendRange{b: bid, lo: lo.key, hi: hi.key})
		}
		t.Ascend(func(p pent) bool {
			kb := []byte(p.key)
			var cur []byte
			if !appending {
				cur = bkt.Get(kb)
			}
			var before []byte
			if cur != nil {
				before = append(make([]byte, 0, len(cur)), cur...)
			}
			if p.val == nil {
				if cur == nil {
					return true
				}
				if ferr = bkt.Delete(kb); ferr != nil {
					return false
				}
				wrec.Delete(path, kb)
			} else {
				if cur != nil && bytes.Equal(cur, p.val) {
					return true
				}
				if ferr = bkt.Put(kb, p.val); ferr != nil {
					return false
				}
				wrec.Put(path, kb, p.val)
				if asRange {
					return true
				}
			}
			rec.keys = append(rec.keys, ovRef{b: bid, key: p.key})
			*befores = append(*befores, before)
			return true
		})
		if ferr != nil {
			return ferr
		}
	}
	st.count = uint64(int64(st.count) + tt.count)
	rec.deltas[tt.ts.id] = tt.count
	st.seq = max(st.seq, tt.ts.seq.Load())
	tt.ts.autoMu.Lock()
	st.autoInc = max(st.autoInc, tt.ts.autoNext)
	tt.ts.autoMu.Unlock()
	sb := st.bytes()
	wrec.Put(tablePath(tt.ts), keyStat, sb)
	return tb.Put(keyStat, sb)
}

// pathData is the log path of the top-level bucket.
var pathData = [][]byte{bucketData}

// tablePath is the log path of a table's bucket, or of a bucket under it.
func tablePath(ts *tableState, sub ...[]byte) [][]byte {
	return append([][]byte{bucketData, []byte(ts.db.key), bucketTables, idKey(ts.id)}, sub...)
}
