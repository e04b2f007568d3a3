package store

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	_ "github.com/dolthub/go-mysql-server/sql/variables" // its init first
	"github.com/dolthub/vitess/go/mysql"
)

// Row locks (issue 13), InnoDB's model as far as it fits the store.
//
// A statement that inserts, updates or deletes a row first takes an
// exclusive lock on the row's key (primary key, or sequence key of a table
// without one) for its transaction; the lock is held to COMMIT or ROLLBACK
// (for an autocommitted statement: to the statement's commit). A second
// writer of the same row waits. A wait longer than the session's
// innodb_lock_wait_timeout (default 50 s) fails the statement with
// ER_LOCK_WAIT_TIMEOUT (1205, the statement is rolled back, the transaction
// stays); a wait that would close a cycle of waiting transactions fails at
// once with ER_LOCK_DEADLOCK (1213) and rolls the requester's transaction
// back. Plain reads take no locks and never wait (they read a snapshot), so
// a DP release never waits for a client's transaction either.
//
// Holding the lock, the writer checks the row's latest committed version: if
// a commit after the statement's read view changed it, the statement's
// writes are undone, the transaction's read view moves to the latest commit
// and the statement is re-executed by the server (Session.BeginStatement,
// the engine's handler), keeping the locks it holds, which is what lets it
// finish on the next attempt. Without a server session to restart it, that
// case keeps the old answer: 1213 and the transaction rolled back.

// lockKey names one row: its table and stored key.
type lockKey struct {
	table uint64
	key   string
}

// lockOwner is the holder of a transaction's locks. It outlives one Txn
// when an autocommitted statement restarts (Session.carry).
type lockOwner struct {
	lt   *lockTable
	held []lockKey
	// waiting is the lock the owner waits for (guarded by lockTable.mu).
	waiting *rowLock
}

type rowLock struct {
	owner *lockOwner
	// released is closed when the lock is released (nil: no waiter yet).
	released chan struct{}
}

// lockTable holds the granted row locks of a store.
type lockTable struct {
	mu      sync.Mutex
	locks   map[lockKey]*rowLock
	waiters int
	// Counters since the store opened (diagnostics).
	waits, deadlocks, timeouts, restarts atomic.Uint64
}

// LockCounters counts, since the store opened, the lock waits, the waits
// refused as deadlocks, the waits timed out, and the statements restarted.
type LockCounters struct{ Waits, Deadlocks, Timeouts, Restarts uint64 }

// LockCounters returns the row lock counters (diagnostics, benchmarks).
func (s *Store) LockCounters() LockCounters {
	lt := &s.locks
	return LockCounters{lt.waits.Load(), lt.deadlocks.Load(), lt.timeouts.Load(), lt.restarts.Load()}
}

// tryLock grants k to o if it is free or o's already; it reports false
// when another owner holds it.
func (lt *lockTable) tryLock(o *lockOwner, k lockKey) bool {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.grantLocked(o, k)
}

func (lt *lockTable) grantLocked(o *lockOwner, k lockKey) bool {
	l := lt.locks[k]
	if l == nil {
		if lt.locks == nil {
			lt.locks = map[lockKey]*rowLock{}
		}
		lt.locks[k] = &rowLock{owner: o}
		o.held = append(o.held, k)
		return true
	}
	return l.owner == o
}

// errLockWait is ER_LOCK_WAIT_TIMEOUT.
func errLockWait() error {
	return mysql.NewSQLError(mysql.ERLockWaitTimeout, "HY000", "Lock wait timeout exceeded; try restarting transaction")
}

// errLockCycle is the deadlock error of a wait that would close a cycle.
func errLockCycle(table string) error {
	return sql.ErrLockDeadlock.New(fmt.Sprintf("Deadlock found when trying to get lock on a row of %s", table))
}

// errDeadlockFound marks a wait-for cycle (the transaction must be rolled
// back before the error is returned).
type errDeadlockFound struct{}

func (errDeadlockFound) Error() string { return "deadlock" }

// lock waits until o holds k, at most timeout; done interrupts the wait
// (KILL QUERY, closed connection). It returns errDeadlockFound if waiting
// would close a cycle, errLockWait on timeout.
func (lt *lockTable) lock(done <-chan struct{}, o *lockOwner, k lockKey, timeout time.Duration) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	lt.mu.Lock()
	for {
		if lt.grantLocked(o, k) {
			lt.mu.Unlock()
			return nil
		}
		l := lt.locks[k]
		// Follow the chain of waits from the holder: reaching o means
		// waiting would deadlock. Each owner waits for one lock at most,
		// so the chain is a path; its length bounds the walk.
		for p, n := l.owner, 0; p != nil && n <= len(lt.locks); n++ {
			if p == o {
				lt.mu.Unlock()
				lt.deadlocks.Add(1)
				return errDeadlockFound{}
			}
			if p.waiting == nil {
				break
			}
			p = p.waiting.owner
		}
		if l.released == nil {
			l.released = make(chan struct{})
		}
		ch := l.released
		o.waiting = l
		lt.waiters++
		lt.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(timeout)
			lt.waits.Add(1)
		}
		var err error
		select {
		case <-ch:
		case <-timer.C:
			err = errLockWait()
			lt.timeouts.Add(1)
		case <-done:
			err = mysql.NewSQLError(mysql.ERQueryInterrupted, "70100", "Query execution was interrupted")
		}
		lt.mu.Lock()
		o.waiting = nil
		lt.waiters--
		if err != nil {
			// Granted meanwhile? Then keep it: the caller's transaction
			// releases it when it ends.
			if lt.grantLocked(o, k) {
				lt.mu.Unlock()
				return nil
			}
			lt.mu.Unlock()
			return err
		}
	}
}

// release frees every lock o holds and wakes their waiters.
func (o *lockOwner) release() {
	if o == nil || len(o.held) == 0 {
		return
	}
	lt := o.lt
	lt.mu.Lock()
	for _, k := range o.held {
		if l := lt.locks[k]; l != nil && l.owner == o {
			delete(lt.locks, k)
			if l.released != nil {
				close(l.released)
			}
		}
	}
	lt.mu.Unlock()
	clear(o.held)
	o.held = o.held[:0]
}

// LockStats returns the number of row locks held and of lock waits in
// progress (tests and diagnostics).
func (s *Store) LockStats() (held, waiting int) {
	s.locks.mu.Lock()
	defer s.locks.mu.Unlock()
	return len(s.locks.locks), s.locks.waiters
}

// defaultLockWait is InnoDB's default innodb_lock_wait_timeout.
const defaultLockWait = 50 * time.Second

// lockWaitTimeout is the session's innodb_lock_wait_timeout.
func lockWaitTimeout(ctx *sql.Context) time.Duration {
	if ctx == nil || ctx.Session == nil {
		return defaultLockWait
	}
	v, err := ctx.GetSessionVariable(ctx, "innodb_lock_wait_timeout")
	if err != nil {
		return defaultLockWait
	}
	switch n := v.(type) {
	case int64:
		return time.Duration(n) * time.Second
	case int:
		return time.Duration(n) * time.Second
	case uint64:
		return time.Duration(n) * time.Second
	}
	return defaultLockWait
}

// LockWaitTimeoutVariable is innodb_lock_wait_timeout with session scope and
// InnoDB's range and default; go-mysql-server's own is fixed at 1 (it has no
// row locks). The engine registers it.
func LockWaitTimeoutVariable() sql.SystemVariable {
	return &sql.MysqlSystemVariable{
		Name:    "innodb_lock_wait_timeout",
		Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic: true,
		Type:    lockWaitType,
		Default: int64(defaultLockWait / time.Second),
	}
}

// Registered here (after go-mysql-server's own variables), so that every
// user of the store, the engine or not, has it.
func init() {
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{LockWaitTimeoutVariable()})
}

var lockWaitType = types.NewSystemIntType("innodb_lock_wait_timeout", 1, 1073741824, false)

// maxInsertLocks and maxRowLocks bound the locks of one transaction (a
// lock costs ≈ 120 bytes): a bulk load or an UPDATE of a whole large table
// would otherwise hold one per row. Past them, rows are written without
// locks and checked as before row locks: a concurrent insert of a new key
// is a duplicate at COMMIT (1062), a row changed by a commit after the
// statement's read view rolls the transaction back (1213).
const (
	maxInsertLocks = 1 << 16
	maxRowLocks    = 1 << 18
)

// needLock asks the editor to wait for k without the transaction's lock.
type needLock struct{ k lockKey }

func (*needLock) Error() string { return "row lock wait" }

// ownerLocked is the transaction's lock owner, created on first use.
func (tx *Txn) ownerLocked() *lockOwner {
	if tx.owner == nil {
		tx.owner = &lockOwner{lt: &tx.s.locks}
	}
	return tx.owner
}

// lockRowLocked takes the lock on a row key of ts for tx if it is free,
// or returns a *needLock to wait for it (see editor.op).
// It returns false, nil without locking once the transaction holds limit
// locks.
func lockRowLocked(tx *Txn, ts *tableState, key []byte, limit int) (bool, error) {
	o := tx.ownerLocked()
	if len(o.held) >= limit {
		return false, nil
	}
	k := lockKey{table: ts.id, key: string(key)}
	if o.lt.tryLock(o, k) {
		return true, nil
	}
	return false, &needLock{k: k}
}

// releaseLocksLocked ends the transaction's hold on its locks: they are
// released, or kept for the restart of the statement that ends it
// (Session.carry).
func (tx *Txn) releaseLocksLocked() {
	o := tx.owner
	if o == nil {
		return
	}
	tx.owner = nil
	if tx.sess != nil && tx.sess.keep(o) {
		return
	}
	o.release()
}

// checkpointLocked records the state a restarted statement returns to, at
// the first write of each statement the server runs (Session.BeginStatement).
func (tx *Txn) checkpointLocked() {
	if tx.sess == nil {
		return
	}
	n := tx.sess.stmt.Load()
	if n == 0 || n == tx.stmtNo {
		return
	}
	tx.stmtNo = n
	sp := tx.savepointLocked("")
	tx.stmtSP = &sp
}

// restartLocked handles a row the statement locked but read in an older
// version than the latest commit: the statement's writes are undone, the
// read view moves to the latest commit and the server re-executes the
// statement (the error tells it so through the Session). Without a server
// statement to restart, the transaction is rolled back with 1213 instead.
func (tx *Txn) restartLocked(table string) error {
	err := errLockDeadlock(table)
	if tx.pinned || tx.sess == nil || tx.stmtSP == nil || tx.stmtSP.gen != tx.gen || !tx.sess.markRestart(tx.stmtNo) {
		return tx.abortLocked(err)
	}
	tx.s.locks.restarts.Add(1)
	tx.restoreLocked(*tx.stmtSP)
	tx.stmtSP = nil
	tx.epoch++ // the statement's open marks are void
	tx.marksOpen = 0
	clear(tx.undo)
	tx.undo = tx.undo[:0]
	for _, tt := range tx.tables {
		tt.open = 0
		tt.visible, tt.visibleSet = nil, false
		tt.readTS = 0
	}
	if tx.hasSnap {
		tx.snap = tx.s.mv.snapshot(tx)
	}
	return err
}

// restartable reports whether the server runs the transaction's statements
// and can restart them (Session.BeginStatement).
func (tx *Txn) restartable() bool {
	return tx.sess != nil && tx.sess.stmt.Load() != 0
}
