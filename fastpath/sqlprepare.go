package fastpath

import (
	"strings"
	"sync"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/dpsql/dpsql/dpquery/syntax"
)

// SELECT WITH DIFFERENTIAL_PRIVACY in SQL-level prepared statements
// (PREPARE name FROM '…' / EXECUTE name [USING @v] / DEALLOCATE PREPARE
// name). go-mysql-server parses the literal itself, so PREPARE rewrites it
// (the clause removed, as in a text query) and remembers the clause under
// the connection and the statement's name; each EXECUTE of that name
// stashes it for that execution only, exactly as a text query does. Any
// other PREPARE of the name, its DEALLOCATE and the connection's end
// forget it, so a later statement of the same name never inherits it.

// sqlPrepared maps a connection id to its statements' clauses by name.
type sqlPrepared struct {
	mu sync.Mutex
	m  map[uint32]map[string]*syntax.Rewritten
}

func (s *sqlPrepared) set(conn uint32, name string, rw *syntax.Rewritten) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rw == nil {
		delete(s.m[conn], name)
		return
	}
	if s.m == nil {
		s.m = map[uint32]map[string]*syntax.Rewritten{}
	}
	if s.m[conn] == nil {
		s.m[conn] = map[string]*syntax.Rewritten{}
	}
	s.m[conn][name] = rw
}

func (s *sqlPrepared) get(conn uint32, name string) (*syntax.Rewritten, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rw, ok := s.m[conn][name]
	return rw, ok
}

func (s *sqlPrepared) drop(conn uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, conn)
}

// sqlPrepare handles the SQL-level prepared statement forms; ok is false
// for every other statement (left to dpClause).
func (h *Handler) sqlPrepare(c *mysql.Conn, query string) (rewritten string, done func(), ok bool, err error) {
	switch firstWord(query) {
	case "prepare", "execute", "deallocate", "drop":
	default:
		return query, nil, false, nil
	}
	if name, is := syntax.SQLPrepareName(query); is {
		// Any PREPARE of the name replaces the statement: its clause goes.
		h.prepared.set(c.ConnectionID, name, nil)
	}
	if name, text, is := syntax.SQLPrepare(query); is {
		if !syntax.Maybe(text) || !syntax.Has(text) {
			return query, func() {}, true, nil
		}
		rw, err := syntax.Rewrite(text)
		if err != nil {
			return "", nil, true, mysql.NewSQLError(mysql.ERParseError, mysql.SSClientError, "%v", err)
		}
		h.prepared.set(c.ConnectionID, name, rw)
		// Planned at PREPARE with the clause too (public checks only;
		// nothing runs or is charged).
		syntax.Stash(c.ConnectionID, rw)
		return syntax.SQLPrepareText(name, rw.SQL), func() { syntax.Drop(c.ConnectionID) }, true, nil
	}
	if name, single, is := syntax.SQLExecute(query); is {
		rw, has := h.prepared.get(c.ConnectionID, name)
		if !has {
			return query, func() {}, true, nil
		}
		if !single {
			return "", nil, true, mysql.NewSQLError(mysql.ERParseError, mysql.SSClientError,
				"EXECUTE %s: a statement prepared with SELECT WITH DIFFERENTIAL_PRIVACY is executed as EXECUTE %s [USING @v, …] alone in its text (not in a multi-statement text)", name, name)
		}
		syntax.Stash(c.ConnectionID, rw)
		return query, func() { syntax.Drop(c.ConnectionID) }, true, nil
	}
	if name, is := syntax.SQLDeallocate(query); is {
		h.prepared.set(c.ConnectionID, name, nil)
		return query, func() {}, true, nil
	}
	if _, is := syntax.SQLPrepareName(query); is {
		return query, func() {}, true, nil
	}
	return query, nil, false, nil
}

// firstWord is the statement's first keyword in lower case (after blanks,
// comments and opening parentheses; at most 16 bytes): a cheap filter run
// on every statement before the SQL-level prepared forms are parsed.
func firstWord(q string) string {
	q = strings.TrimLeft(stripLeadingComments(q), "( \t\r\n")
	j := 0
	for j < len(q) && j < 16 && (q[j] == '_' || q[j] >= '0' && q[j] <= '9' || q[j]|0x20 >= 'a' && q[j]|0x20 <= 'z') {
		j++
	}
	return strings.ToLower(q[:j])
}
