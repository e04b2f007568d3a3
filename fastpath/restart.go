package fastpath

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/dpsql/dpsql/dpquery/syntax"
	"github.com/dpsql/dpsql/explain"
	"github.com/dpsql/dpsql/store"
)

// Statement restarts (issue 13, store/lock.go).
//
// A write that locks a row whose latest committed version is newer than the
// statement's read view cannot use the row it read: the store undoes the
// statement's writes, moves the transaction's read view to the latest commit
// and fails the statement; the handler below then executes it again from
// the start (parsing, analysis, privilege checks and the guard included),
// in the same transaction, keeping the row locks the first attempt took, so
// that the next attempt reads rows nobody else can change any more. Only a
// statement that sent nothing to the client yet is re-executed; one that
// did, or that restarted maxStatementRestarts times, gets the 1213 it failed
// with and its transaction is rolled back, as after a deadlock.

// maxStatementRestarts bounds the re-executions of one statement.
const maxStatementRestarts = 10

// Sessions maps connection ids to their store sessions.
type Sessions struct{ m sync.Map }

func (s *Sessions) get(id uint32) *store.Session {
	if s == nil {
		return nil
	}
	v, _ := s.m.Load(id)
	ss, _ := v.(*store.Session)
	return ss
}

// restarting runs one statement through run, re-executing it while the
// store asks for a restart; run sets *sent when it passed results on.
func (h *Handler) restarting(c *mysql.Conn, run func(sent *bool) error) error {
	s := h.sessions.get(c.ConnectionID)
	if s == nil {
		var sent bool
		return run(&sent)
	}
	for restarts := 0; ; restarts++ {
		s.BeginStatement()
		sent := false
		err := run(&sent)
		if err == nil {
			s.EndStatement()
			return nil
		}
		if !s.RestartRequested() {
			s.FailStatement()
			return err
		}
		if sent || restarts >= maxStatementRestarts {
			s.AbortStatement()
			return err
		}
	}
}

// dpClause rewrites SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(…) (issue 27),
// which go-mysql-server's parser does not know, into plain SQL and stashes
// the clause for the DP planner; done() drops it when the statement ends.
func dpClause(c *mysql.Conn, query string) (rewritten string, done func(), err error) {
	if !syntax.Maybe(query) || !syntax.Has(query) {
		return query, func() {}, nil
	}
	rw, err := syntax.Rewrite(query)
	if err != nil {
		return "", nil, mysql.NewSQLError(mysql.ERParseError, mysql.SSClientError, "%v", err)
	}
	syntax.Stash(c.ConnectionID, rw)
	return rw.SQL, func() { syntax.Drop(c.ConnectionID) }, nil
}

func (h *Handler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	query, done, ok, err := h.sqlPrepare(c, query)
	if !ok {
		query, done, err = dpClause(c, query)
	}
	if err != nil {
		return err
	}
	defer done()
	// The EXPLAIN of a DP query answers the DP plan (dpexplain.go).
	if node, err := h.dpExplain(ctx, c, query); err != nil || node != nil {
		if err != nil {
			return err
		}
		return h.restarting(c, func(sent *bool) error {
			return h.Handler.ComExecuteBound(ctx, c, query, node, func(r *sqltypes.Result, more bool) error { *sent = true; return callback(r, more) })
		})
	}
	// LOAD DATA LOCAL has read the client's file by the time a restart
	// could be asked for: it counts as having sent, so it is never
	// re-executed (the client would be asked for its file twice).
	load := isLoadData(query)
	defer h.pinIfLockingRead(c, query)
	return h.restarting(c, func(sent *bool) error {
		*sent = load
		if node := h.pc.textInsert(ctx, h.sm.Load(), c, query); node != nil {
			return h.Handler.ComExecuteBound(ctx, c, query, node, func(r *sqltypes.Result, more bool) error { *sent = true; return callback(r, more) })
		}
		return h.Handler.ComQuery(ctx, c, query, func(r *sqltypes.Result, more bool) error { *sent = true; return callback(r, more) })
	})
}

// lockingRead matches the clauses of a locking read. A match anywhere in
// the text (a string literal, a later statement of a multi-statement
// query) only pins a snapshot that did not need it: the safe direction.
var lockingRead = regexp.MustCompile(`(?i)\bfor\s+(update|share)\b|\block\s+in\s+share\s+mode\b`)

// pinIfLockingRead pins the transaction's snapshot after a locking read
// (store.Session.PinSnapshot): such a read takes no row lock here, and the
// current reads of later writes would otherwise let the transaction
// overwrite a change made after it read the row "for update".
func (h *Handler) pinIfLockingRead(c *mysql.Conn, query string) {
	if !isSelect(query) || !lockingRead.MatchString(query) {
		return
	}
	if s := h.sessions.get(c.ConnectionID); s != nil {
		s.PinSnapshot()
	}
}

// isLoadData reports whether query starts with LOAD (after blanks and
// comments): LOAD DATA or LOAD XML.
func isLoadData(query string) bool {
	q := strings.TrimSpace(stripLeadingComments(query))
	return len(q) >= 4 && strings.EqualFold(q[:4], "load")
}

func (h *Handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	// The clause is taken in a text of one statement only: in a
	// multi-statement text it would have to be split first (docs/sql.md).
	if syntax.Maybe(query) && syntax.Has(query) && !strings.Contains(query, ";") {
		return "", h.ComQuery(ctx, c, query, callback)
	}
	var rest string
	defer h.pinIfLockingRead(c, query)
	// A later statement of a multi-statement text keeps the ordinary path.
	_, later := h.inMulti.LoadAndDelete(c.ConnectionID)
	// SQL-level PREPARE / EXECUTE / DEALLOCATE (sqlprepare.go): a text of
	// one such statement takes ComQuery's path, which handles the clause;
	// in a text of several, an EXECUTE of a clause statement is refused
	// and a PREPARE or DEALLOCATE forgets the name's clause.
	switch fw := firstWord(query); fw {
	case "prepare", "execute", "deallocate", "drop":
		if _, ok := syntax.SQLDeallocate(query); fw == "drop" && !ok {
			break // DROP TABLE …: not a prepared statement's
		}
		if syntax.SingleStatement(query) {
			return "", h.ComQuery(ctx, c, query, callback)
		}
		if _, done, ok, err := h.sqlPrepare(c, query); ok {
			if err != nil {
				return "", err
			}
			done()
		}
	}
	// A text of one EXPLAIN (as the mariadb/mysql clients send every
	// statement, with multi-statements on): the EXPLAIN of a DP query
	// answers its plan (dpexplain.go); ComQuery takes the rest.
	if !later && explain.Candidate(query) && !strings.Contains(strings.TrimRight(query, " \t\r\n;"), ";") {
		return "", h.ComQuery(ctx, c, query, callback)
	}
	err := h.restarting(c, func(sent *bool) error {
		// A text of one plain INSERT (textinsert.go): nothing follows it.
		if !later {
			if node := h.pc.textInsert(ctx, h.sm.Load(), c, query); node != nil {
				rest = ""
				return h.Handler.ComExecuteBound(ctx, c, query, node, func(r *sqltypes.Result, more bool) error { *sent = true; return callback(r, more) })
			}
		}
		var err error
		rest, err = h.Handler.ComMultiQuery(ctx, c, query, func(r *sqltypes.Result, more bool) error { *sent = true; return callback(r, more) })
		return err
	})
	if err == nil && rest != "" {
		h.inMulti.Store(c.ConnectionID, true)
	}
	return rest, err
}

// stripLeadingComments drops leading blanks and /* … */ or -- / # comment
// lines.
func stripLeadingComments(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\r\n;")
		switch {
		case strings.HasPrefix(q, "/*"):
			i := strings.Index(q, "*/")
			if i < 0 {
				return ""
			}
			q = q[i+2:]
		case strings.HasPrefix(q, "--"), strings.HasPrefix(q, "#"):
			i := strings.IndexByte(q, '\n')
			if i < 0 {
				return ""
			}
			q = q[i+1:]
		default:
			return q
		}
	}
}

// isSelect reports whether query starts with SELECT, WITH or a parenthesis
// (after blanks and comments): only those can be locking reads, and the
// check keeps the regular expression off INSERTs and other statements.
func isSelect(query string) bool {
	q := stripLeadingComments(query)
	if strings.HasPrefix(q, "(") {
		return true
	}
	for _, kw := range []string{"select", "with"} {
		if len(q) > len(kw) && strings.EqualFold(q[:len(kw)], kw) {
			return true
		}
	}
	return false
}

// functions.Env.release finds this method on the session to keep a
// statement that made a DP release from being re-executed (and charged
// twice).
var _ interface{ NoStatementRestart() } = (*store.Session)(nil)
