package store

import (
	"github.com/dolthub/go-mysql-server/sql"
)

// Session is the SQL session to build go-mysql-server contexts with: it
// gives the engine real transactions on the store (BEGIN, COMMIT, ROLLBACK,
// autocommit, savepoints, START TRANSACTION READ ONLY). Contexts with any
// other session still work, each statement being its own transaction.
type Session struct {
	*sql.BaseSession
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
	return &Txn{readOnly: c == sql.ReadOnly}, nil
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
