package fastpath

import (
	"context"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/dpsql/dpsql/dpquery/syntax"
)

// SELECT WITH DIFFERENTIAL_PRIVACY in server-side prepared statements
// (COM_STMT_PREPARE / COM_STMT_EXECUTE; issue 27 item 4). The statement is
// rewritten as in a text query (dpClause) at every step and nothing is
// kept per statement: the protocol library counts the placeholders of the
// rewritten text (PrepareParseText), PREPARE binds the rewritten text
// (go-mysql-server caches its parse under that text), and every EXECUTE
// rewrites the client's text again, stashes the clause for that execution
// only and runs the rewritten text with the bound values: the same path
// as the equivalent text query, guard and DP planner included. Placeholders
// are taken in the query's body only; OPTIONS and contribution bounds need
// literals (syntax.Rewrite refuses a ? there). COM_STMT_CLOSE and
// COM_STMT_RESET have nothing to drop: the stash lives for one execution.

// PrepareParseText is the text the protocol library parses for a
// COM_STMT_PREPARE to count its placeholders (mysql.PrepareParser, the
// vitess patch): the clause's rewritten SELECT, whose placeholders are the
// client's. A clause Rewrite refuses is given as a text without
// placeholders, so that ComPrepare runs and sends Rewrite's error instead
// of the library's "syntax error at position …".
func (h *Handler) PrepareParseText(_ *mysql.Conn, query string) string {
	if !syntax.Maybe(query) || !syntax.Has(query) {
		return query
	}
	rw, err := syntax.Rewrite(query)
	if err != nil {
		return "SELECT NULL"
	}
	return rw.SQL
}

// ComPrepare binds the rewritten text of a statement with the clause (a
// public check: names, types, privileges; no row is read and nothing is
// charged); the result columns sent are the rewritten SELECT's.
func (h *Handler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	if !syntax.Maybe(query) || !syntax.Has(query) {
		return h.Handler.ComPrepare(ctx, c, query, prepare)
	}
	rw, err := syntax.Rewrite(query)
	if err != nil {
		return nil, mysql.NewSQLError(mysql.ERParseError, mysql.SSClientError, "%v", err)
	}
	return h.Handler.ComPrepare(ctx, c, rw.SQL, withStmt(prepare, rw.SQL))
}

// withStmt is a copy of p that runs text (the protocol library keeps p).
func withStmt(p *mysql.PrepareData, text string) *mysql.PrepareData {
	if p.PrepareStmt == text {
		return p
	}
	cp := *p
	cp.PrepareStmt = text
	return &cp
}

// ComStmtExecute runs one execution of a prepared statement; one with the
// clause runs its rewritten text with the clause stashed for this
// execution (dpClause).
func (h *Handler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	text, done, err := dpClause(c, prepare.PrepareStmt)
	if err != nil {
		return err
	}
	defer done()
	return h.comStmtExecute(ctx, c, withStmt(prepare, text), callback)
}
