package store

import (
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
)

// Session is the SQL session to build go-mysql-server contexts with: it
// gives the engine real transactions on the store (BEGIN, COMMIT, ROLLBACK,
// autocommit, savepoints, START TRANSACTION READ ONLY). Contexts with any
// other session still work, each statement being its own transaction.
type Session struct {
	*sql.BaseSession

	// stmt counts the statements the server began (BeginStatement); 0:
	// none, the session's statements cannot be restarted.
	stmt atomic.Uint64
	mu   sync.Mutex
	// restartable: the server runs statement stmt and can re-execute it;
	// restart: a row lock found a newer version, re-execute it; carry: the
	// locks of the statement's transaction, ended meanwhile (autocommit),
	// for the transaction of the next attempt.
	restartable bool
	restart     bool
	carry       *lockOwner
	// committed: a transaction committed during the statement (an implicit
	// commit, or any future way for one statement to commit mid-way):
	// re-executing it could apply that commit's writes twice. (User stored
	// procedures, which could COMMIT, are refused by dpsql.)
	committed bool
}

var (
	_ sql.TransactionSession    = (*Session)(nil)
	_ sql.LifecycleAwareSession = (*Session)(nil)
)

// NewSession wraps a base session.
func NewSession(base *sql.BaseSession) *Session { return &Session{BaseSession: base} }

func asTxn(tx sql.Transaction) *Txn {
	t, _ := tx.(*Txn)
	return t
}

// StartTransaction is called by the engine before a statement runs outside
// a transaction, and by BEGIN / START TRANSACTION.
func (s *Session) StartTransaction(_ *sql.Context, c sql.TransactionCharacteristic) (sql.Transaction, error) {
	s.mu.Lock()
	o := s.carry
	s.carry = nil
	s.mu.Unlock()
	return &Txn{readOnly: c == sql.ReadOnly, sess: s, owner: o}, nil
}

// BeginStatement tells the store that the server starts executing a
// statement it can re-execute from scratch (nothing of it was sent to the
// client) if a row lock requires it; RestartRequested then says whether to.
func (s *Session) BeginStatement() {
	s.stmt.Add(1)
	s.mu.Lock()
	s.restartable, s.restart, s.committed = true, false, false
	s.mu.Unlock()
}

// RestartRequested reports (once) whether the statement that just failed
// must be re-executed: it locked a row whose latest version is newer than
// its read view. Its writes were undone; the locks it took are kept.
func (s *Session) RestartRequested() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.restart
	s.restart = false
	return r
}

// AbortStatement rolls back the transaction of a statement that is not
// re-executed after all (too many restarts, or results already sent): the
// client gets 1213 and, as after any deadlock, the transaction is gone.
func (s *Session) AbortStatement() {
	s.mu.Lock()
	s.restart = false
	s.mu.Unlock()
	if t := asTxn(s.GetTransaction()); t != nil {
		t.rollback()
	}
	s.EndStatement()
}

// EndStatement ends a statement begun with BeginStatement; locks carried
// for a restart that did not happen are released.
func (s *Session) EndStatement() {
	s.mu.Lock()
	s.restartable, s.restart = false, false
	o := s.carry
	s.carry = nil
	s.mu.Unlock()
	o.release()
}

// FailStatement ends a statement that failed and is not re-executed. An
// autocommitted statement's transaction is rolled back at once, as InnoDB
// does, so that the row locks it took are released now rather than when
// the connection's next statement ends it (go-mysql-server leaves it open).
func (s *Session) FailStatement() {
	s.EndStatement()
	if s.GetIgnoreAutoCommit() {
		return // an explicit transaction: the statement alone failed
	}
	ac, err := s.GetSessionVariable(nil, "autocommit")
	if err != nil {
		return
	}
	if on, err := sql.ConvertToBool(sql.NewEmptyContext(), ac); err != nil || !on {
		return
	}
	if t := asTxn(s.GetTransaction()); t != nil {
		t.rollback()
		s.BaseSession.SetTransaction(nil)
	}
}

// PinSnapshot is called after a locking read (SELECT … FOR UPDATE or
// … LOCK IN SHARE MODE) ran in the session's transaction: that read took
// no row lock, so the transaction's later writes must not re-read rows at
// the latest commit (which would let it overwrite a change made after its
// read). They keep its snapshot and fail with 1213 on a row changed since,
// as every write did before row locks (Txn.pinned).
func (s *Session) PinSnapshot() {
	if t := asTxn(s.GetTransaction()); t != nil {
		t.mu.Lock()
		t.pinned = true
		t.mu.Unlock()
	}
}

// NoStatementRestart makes the current statement one that is never
// re-executed: it made a DP release (functions.Env.release), which a second
// execution would charge again. A row lock that would restart it fails it
// with 1213 instead, as for a statement that already sent results.
func (s *Session) NoStatementRestart() {
	s.mu.Lock()
	s.restartable = false
	s.mu.Unlock()
}

// markRestart asks for statement n to be re-executed, if it can be.
func (s *Session) markRestart(n uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.restartable || s.committed || s.stmt.Load() != n {
		return false
	}
	s.restart = true
	return true
}

// noteCommit records that a transaction committed writes during the
// current statement.
func (s *Session) noteCommit() {
	s.mu.Lock()
	s.committed = true
	s.mu.Unlock()
}

// keep takes the locks of a transaction that ends while its statement
// waits to be re-executed.
func (s *Session) keep(o *lockOwner) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.restart {
		return false
	}
	if s.carry != nil && s.carry != o {
		s.carry.release()
	}
	s.carry = o
	return true
}

// CommitTransaction makes the transaction's writes durable (fsynced) before
// returning. A write conflict returns ER_LOCK_DEADLOCK and rolls back.
func (s *Session) CommitTransaction(_ *sql.Context, tx sql.Transaction) error {
	if t := asTxn(tx); t != nil {
		return t.commit()
	}
	return nil
}

func (s *Session) Rollback(_ *sql.Context, tx sql.Transaction) error {
	if t := asTxn(tx); t != nil {
		t.rollback()
	}
	return nil
}

func (s *Session) CreateSavepoint(_ *sql.Context, tx sql.Transaction, name string) error {
	if t := asTxn(tx); t != nil {
		t.createSavepoint(name)
	}
	return nil
}

func (s *Session) RollbackToSavepoint(_ *sql.Context, tx sql.Transaction, name string) error {
	if t := asTxn(tx); t != nil {
		return t.rollbackToSavepoint(name)
	}
	return sql.ErrSavepointDoesNotExist.New(name)
}

func (s *Session) ReleaseSavepoint(_ *sql.Context, tx sql.Transaction, name string) error {
	if t := asTxn(tx); t != nil {
		return t.releaseSavepoint(name)
	}
	return sql.ErrSavepointDoesNotExist.New(name)
}

// SetTransaction: the engine drops a transaction without committing or
// rolling it back when a statement fails to build in autocommit mode; roll
// it back then, so that its snapshot does not stay registered.
func (s *Session) SetTransaction(tx sql.Transaction) {
	if old := asTxn(s.GetTransaction()); old != nil && old != asTxn(tx) {
		old.rollback()
	}
	s.BaseSession.SetTransaction(tx)
}

func (s *Session) CommandBegin() error { return nil }
func (s *Session) CommandEnd()         {}

// SessionEnd rolls back what a closed connection left open.
func (s *Session) SessionEnd() {
	if t := asTxn(s.GetTransaction()); t != nil {
		t.rollback()
	}
	s.EndStatement()
}

// txnFor returns the transaction a statement runs in. Without one (a context
// whose session is not a Session, or outside the engine) it returns a new
// transaction the caller owns (ephemeral): it must commit or roll it back.
func (s *Store) txnFor(ctx *sql.Context) (tx *Txn, ephemeral bool, err error) {
	if ctx != nil && ctx.Session != nil {
		if t := asTxn(ctx.GetTransaction()); t != nil {
			if err := t.bind(s); err != nil {
				return nil, false, err
			}
			return t, false, nil
		}
	}
	t := &Txn{}
	_ = t.bind(s)
	return t, true, nil
}
