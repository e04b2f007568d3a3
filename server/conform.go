package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/dpsql/dpsql/fastpath"
)

// MySQL conformance (issue 29): what clients, drivers and ops tools expect
// of a MySQL/MariaDB server and go-mysql-server does differently. Each fix
// is a wrapper in dpsql (the module is a dependency, not a fork).

// MySQL's codes for the errors go-mysql-server sends as 1105 (HY000).
const (
	erParseError       = 1064 // ER_PARSE_ERROR, 42000
	erDBAccessDenied   = 1044 // ER_DBACCESS_DENIED_ERROR, 42000
	erTableAccessDenid = 1142 // ER_TABLEACCESS_DENIED_ERROR, 42000
	erQueryInterrupted = 1317 // ER_QUERY_INTERRUPTED, 70100
	erReadOnlyTrx      = 1792 // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, 25006
	erOptionPrevents   = 1290 // ER_OPTION_PREVENTS_STATEMENT, HY000
	ssReadOnlyTrx      = "25006"
	ssAccessRule       = "42000"
	ssInterrupted      = "70100"
)

var (
	reTableDenied = regexp.MustCompile(`^Access denied for user .* to table '|\bcommand denied to user\b`)
	reDBDenied    = regexp.MustCompile(`^Access denied for user .* to database '`)
)

// mysqlError gives an error the MySQL error code and SQLSTATE a MySQL
// server would send for it; go-mysql-server sends 1105/HY000 ("unknown
// error") for all of these, which Connector/J reports as a transient
// connection error and pools answer by evicting the connection. dp, when
// set, classifies dpsql's own refusals first (engine: the DP range). The
// message is kept. Errors that already carry a specific code are kept.
func mysqlError(err error, dp func(msg string) (int, string)) error {
	if err == nil {
		return nil
	}
	var se *mysql.SQLError
	if !errors.As(err, &se) {
		se = sql.CastSQLError(err)
	}
	if se.Num == erReadOnlyTrx && se.State == mysql.SSUnknownSQLState {
		return &mysql.SQLError{Num: se.Num, State: ssReadOnlyTrx, Message: se.Message, Query: se.Query}
	}
	if se.Num != mysql.ERUnknownError {
		return se
	}
	msg := se.Message
	code, state := 0, ""
	if dp != nil {
		code, state = dp(msg)
	}
	if code == 0 {
		code, state, msg = classifyError(msg)
	}
	if code == 0 {
		return se
	}
	return &mysql.SQLError{Num: code, State: state, Message: msg, Query: se.Query}
}

// classifyError maps the message of a 1105 error to MySQL's code and
// SQLSTATE (0 when it has none): go-mysql-server flattens its errors to
// their message before they get here.
func classifyError(msg string) (int, string, string) {
	switch {
	case strings.HasPrefix(msg, "syntax error at position") || strings.Contains(msg, "You have an error in your SQL syntax"):
		return erParseError, ssAccessRule, msg
	case reDBDenied.MatchString(msg):
		return erDBAccessDenied, ssAccessRule, msg
	case reTableDenied.MatchString(msg):
		return erTableAccessDenid, ssAccessRule, msg
	case strings.Contains(msg, "--secure-file-priv option so it cannot execute this statement"):
		// LOAD DATA INFILE / SELECT … INTO OUTFILE outside secure_file_priv.
		return erOptionPrevents, mysql.SSUnknownSQLState, "The MySQL server is running with the --secure-file-priv option so it cannot execute this statement"
	case strings.HasPrefix(msg, "query killed"):
		return erQueryInterrupted, ssInterrupted, msg
	case msg == context.Canceled.Error() || strings.HasPrefix(msg, "Query execution was interrupted"):
		return erQueryInterrupted, ssInterrupted, "Query execution was interrupted"
	}
	return 0, "", ""
}

// Statements MySQL and MariaDB accept that go-mysql-server's parser does
// not, answered or rewritten before it sees them.
var (
	// DO expr [, expr]: evaluate and discard (DO 1 is the drivers' ping).
	reDo = regexp.MustCompile(`(?is)^\s*DO\s+(.+?)[\s;]*$`)
	// DESCRIBE t 'pattern' / DESCRIBE t col (DBI's column_info sends the first).
	reDescribe = regexp.MustCompile("(?is)^\\s*(?:DESCRIBE|DESC)\\s+((?:`[^`]+`|\\w+)(?:\\s*\\.\\s*(?:`[^`]+`|\\w+))?)\\s+('(?:[^'\\\\]|\\\\.|'')*'|`[^`]+`|\\w+)[\\s;]*$")
	// ALTER USER name [, name …] ACCOUNT UNLOCK (the login lock-out, auth.go).
	reUnlock = regexp.MustCompile(`(?is)^\s*ALTER\s+USER\s+(?:IF\s+EXISTS\s+)?(.+?)\s+ACCOUNT\s+UNLOCK[\s;]*$`)
	// CHECK / OPTIMIZE / REPAIR / ANALYZE TABLE t [, t …] [options] (mariadb-check).
	reAdmin = regexp.MustCompile(`(?is)^\s*(CHECK|OPTIMIZE|REPAIR|ANALYZE)\s+(?:(?:NO_WRITE_TO_BINLOG|LOCAL)\s+)?TABLES?\s+(.+?)((?:\s+(?:QUICK|FAST|MEDIUM|EXTENDED|CHANGED|USE_FRM|FOR\s+UPGRADE))*)[\s;]*$`)
	// CHECKSUM TABLE t [, t …] [QUICK | EXTENDED].
	reChecksum = regexp.MustCompile(`(?is)^\s*CHECKSUM\s+TABLES?\s+(.+?)(?:\s+(?:QUICK|EXTENDED))?[\s;]*$`)
	reIdent    = regexp.MustCompile("^\\s*(`[^`]+`|\\w+)(?:\\s*\\.\\s*(`[^`]+`|\\w+))?\\s*$")
)

var explainWords = map[string]bool{"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true,
	"TABLE": true, "WITH": true, "FORMAT": true, "ANALYZE": true, "EXTENDED": true, "PARTITIONS": true, "FOR": true, "VALUES": true}

// rewriteCompat returns the statement go-mysql-server should run instead
// of query, and whether its rows are to be discarded (DO). ok is false when
// query is left alone.
func rewriteCompat(query string) (rewritten string, discard, ok bool) {
	q := fastpath.StripLeadingComments(query)
	if m := reDo.FindStringSubmatch(q); m != nil {
		return "SELECT " + m[1], true, true
	}
	// DESCRIBE SELECT … / DESC FORMAT=… are EXPLAIN: not a table.
	if m := reDescribe.FindStringSubmatch(q); m != nil && !explainWords[strings.ToUpper(m[1])] {
		pat := m[2]
		switch pat[0] {
		case '\'':
		case '`':
			pat = "'" + strings.ReplaceAll(pat[1:len(pat)-1], "'", "''") + "'"
		default:
			pat = "'" + pat + "'"
		}
		return "SHOW COLUMNS FROM " + m[1] + " LIKE " + pat, false, true
	}
	return "", false, false
}

// unlockTargets parses ALTER USER … ACCOUNT UNLOCK: the account names
// ('name'@'host' → name; the lock-out is keyed by name and address).
func unlockTargets(query string) ([]string, bool) {
	m := reUnlock.FindStringSubmatch(fastpath.StripLeadingComments(query))
	if m == nil {
		return nil, false
	}
	var names []string
	for _, part := range splitAccounts(m[1]) {
		name, _, _ := strings.Cut(part, "@")
		name = strings.TrimSpace(name)
		if len(name) >= 2 && (name[0] == '\'' || name[0] == '"' || name[0] == '`') && name[len(name)-1] == name[0] {
			name = name[1 : len(name)-1]
		}
		if name == "" {
			return nil, false
		}
		names = append(names, name)
	}
	return names, len(names) > 0
}

// splitAccounts splits "a@'%', 'b'@'h'" on the commas outside quotes.
func splitAccounts(s string) []string {
	var out []string
	var q byte
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case q != 0 && c == q:
			q = 0
		case q == 0 && (c == '\'' || c == '"' || c == '`'):
			q = c
		case q == 0 && c == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// conformHandler wraps the connection handler (package fastpath's, over
// go-mysql-server's): status flags at connect, MySQL's error codes, and
// the statements go-mysql-server cannot parse.
type conformHandler struct {
	mysql.Handler
	throttle  *throttle
	owner     func(user string) bool
	protected func(db, table string) bool
	dpError   func(msg string) (int, string)
	sessions  sync.Map // connection id → sql.Session
	remotes   sync.Map // connection id → the client's ip:port
	started   time.Time
	questions atomic.Uint64 // statements from clients (COM_STATISTICS)
}

// NewConnection: the handshake carries SERVER_STATUS_AUTOCOMMIT, as the
// session starts with autocommit on. pymysql and mysqlclient read it to
// decide whether to send SET autocommit=0; without it they never do, and
// rollback() keeps what was written (issue 29). go-mysql-server sets the
// flags of every later OK/EOF packet from the session.
func (h *conformHandler) NewConnection(c *mysql.Conn) {
	c.StatusFlags |= uint16(mysql.ServerStatusAutocommit)
	if a := c.RemoteAddr(); a != nil {
		h.remotes.Store(c.ConnectionID, a.String())
	}
	h.Handler.NewConnection(c)
}

func (h *conformHandler) ConnectionClosed(c *mysql.Conn) {
	h.sessions.Delete(c.ConnectionID)
	h.remotes.Delete(c.ConnectionID)
	h.Handler.ConnectionClosed(c)
}

// err is mysqlError with the engine's classification of DP refusals.
func (h *conformHandler) err(err error) error { return mysqlError(err, h.dpError) }

// reWrite matches the data-changing statements that can skip the
// analyser's rules (the plan cache's text INSERT, the bulk writer).
var reWrite = regexp.MustCompile(`(?i)^\s*(INSERT|UPDATE|DELETE|REPLACE|LOAD)\b`)

// readOnlyRefusal refuses a write in a read-only session (SET SESSION
// TRANSACTION READ ONLY) with MySQL's 1792; other statements are refused
// by the guard's rule.
func (h *conformHandler) readOnlyRefusal(ctx context.Context, c *mysql.Conn, stmt string) error {
	if !reWrite.MatchString(fastpath.StripLeadingComments(stmt)) {
		return nil
	}
	v, ok := h.sessions.Load(c.ConnectionID)
	if !ok {
		return nil
	}
	s := v.(sql.Session)
	ro, err := s.GetSessionVariable(sql.NewContext(ctx, sql.WithSession(s)), "transaction_read_only")
	if err == nil && (fmt.Sprint(ro) == "1" || ro == true) {
		return mysql.NewSQLError(erReadOnlyTrx, ssReadOnlyTrx, "cannot execute statement in a READ ONLY transaction")
	}
	return nil
}

func (h *conformHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	h.questions.Add(1)
	if err := h.readOnlyRefusal(ctx, c, query); err != nil {
		return err
	}
	callback = showCreateResults(h.processlistResults(textResults(callback, query), query), fastpath.StripLeadingComments(query))
	if handled, err := h.compatQuery(ctx, c, query, false, callback); handled {
		return h.err(err)
	}
	return h.err(h.Handler.ComQuery(ctx, c, query, callback))
}

func (h *conformHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	h.questions.Add(1)
	first, rest := firstStatement(query)
	if err := h.readOnlyRefusal(ctx, c, first); err != nil {
		return rest, err
	}
	callback = showCreateResults(h.processlistResults(textResults(callback, query), first), fastpath.StripLeadingComments(first))
	if handled, err := h.compatQuery(ctx, c, first, rest != "", callback); handled {
		return rest, h.err(err)
	}
	rest, err := h.Handler.ComMultiQuery(ctx, c, query, callback)
	return rest, h.err(err)
}

// PrepareParseText gives the protocol library (which parses a
// COM_STMT_PREPARE itself to count its placeholders, before ComPrepare)
// the rewritten text of a statement its parser does not know: a prepared
// DO or DESCRIBE t 'pattern' (the vitess patch, third_party/vitess), or
// the inner handler's text for it (fastpath: SELECT WITH
// DIFFERENTIAL_PRIVACY).
func (h *conformHandler) PrepareParseText(c *mysql.Conn, query string) string {
	if rewritten, _, ok := rewriteCompat(query); ok {
		return rewritten
	}
	if p, ok := h.Handler.(mysql.PrepareParser); ok {
		return p.PrepareParseText(c, query)
	}
	return query
}

func (h *conformHandler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	h.questions.Add(1)
	rewritten, discard, ok := rewriteCompat(query)
	if !ok {
		fields, err := h.Handler.ComPrepare(ctx, c, query, prepare)
		return restoreAliasCase(fixFields(fields), query), h.err(err)
	}
	fields, err := h.Handler.ComPrepare(ctx, c, rewritten, compatPrepare(prepare, rewritten))
	if discard {
		fields = nil // DO has no result columns
	}
	return fixFields(fields), h.err(err)
}

// compatPrepare is a copy of p that runs rewritten (rewriteCompat).
func compatPrepare(p *mysql.PrepareData, rewritten string) *mysql.PrepareData {
	c := *p
	c.PrepareStmt = rewritten
	return &c
}

func (h *conformHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	h.questions.Add(1)
	if err := h.readOnlyRefusal(ctx, c, prepare.PrepareStmt); err != nil {
		return err
	}
	fixDateParams(prepare)
	if rewritten, discard, ok := rewriteCompat(prepare.PrepareStmt); ok {
		send := callback
		if discard {
			send = func(*sqltypes.Result) error { return nil }
		}
		if err := h.Handler.ComStmtExecute(ctx, c, compatPrepare(prepare, rewritten), func(r *sqltypes.Result) error {
			return send(fixResult(r, true, rewritten))
		}); err != nil || !discard {
			return h.err(err)
		}
		return callback(&sqltypes.Result{})
	}
	return h.err(h.Handler.ComStmtExecute(ctx, c, prepare, func(r *sqltypes.Result) error {
		return callback(fixResult(r, true, prepare.PrepareStmt))
	}))
}

// textResults corrects the metadata of text-protocol results (wire.go).
func textResults(callback mysql.ResultSpoolFn, query string) mysql.ResultSpoolFn {
	return func(r *sqltypes.Result, more bool) error { return callback(fixResult(r, false, query), more) }
}

var reProcesslist = regexp.MustCompile(`(?is)^\s*SHOW\s+(?:FULL\s+)?PROCESSLIST[\s;]*$`)

// processlistResults makes SHOW PROCESSLIST's rows read as MySQL's: Host is
// the client's ip:port (go-mysql-server shows the account's host pattern,
// often '%'), State one line (go-mysql-server puts the running plan there).
func (h *conformHandler) processlistResults(callback mysql.ResultSpoolFn, stmt string) mysql.ResultSpoolFn {
	if !reProcesslist.MatchString(fastpath.StripLeadingComments(stmt)) {
		return callback
	}
	return func(r *sqltypes.Result, more bool) error {
		id, host, state := -1, -1, -1
		for i, f := range r.Fields {
			switch f.Name {
			case "Id":
				id = i
			case "Host":
				host = i
			case "State":
				state = i
			}
		}
		if id < 0 || host < 0 || state < 0 {
			return callback(r, more)
		}
		return callback(mapRows(r, func(row []sqltypes.Value) {
			if n, err := strconv.ParseUint(row[id].ToString(), 10, 32); err == nil {
				if a, ok := h.remotes.Load(uint32(n)); ok {
					row[host] = sqltypes.MakeTrusted(row[host].Type(), []byte(a.(string)))
				}
			}
			if st := row[state].Raw(); len(st) > 0 {
				line, _, _ := strings.Cut(string(st), "\n")
				row[state] = sqltypes.MakeTrusted(row[state].Type(), []byte(strings.TrimSpace(line)))
			}
		}), more)
	}
}

// firstStatement splits a multi-statement text into its first statement
// and the rest (what COM_QUERY with CLIENT_MULTI_STATEMENTS sends).
func firstStatement(query string) (string, string) {
	first, rest, err := ast.SplitStatement(query)
	if err != nil {
		return query, ""
	}
	return first, rest
}

// compatQuery answers or rewrites one statement go-mysql-server cannot
// parse (rewriteCompat, ALTER USER … ACCOUNT UNLOCK). handled is false when
// the statement is to take the ordinary path. more tells the callback that
// further results of a multi-statement text follow.
func (h *conformHandler) compatQuery(ctx context.Context, c *mysql.Conn, stmt string, more bool, callback mysql.ResultSpoolFn) (handled bool, err error) {
	if names, ok := unlockTargets(stmt); ok {
		return true, h.accountUnlock(c, names, more, callback)
	}
	if m := reAdmin.FindStringSubmatch(fastpath.StripLeadingComments(stmt)); m != nil {
		return true, h.adminTables(ctx, c, strings.ToLower(m[1]), splitAccounts(m[2]), more, callback)
	}
	if m := reChecksum.FindStringSubmatch(fastpath.StripLeadingComments(stmt)); m != nil {
		return true, h.checksumTables(ctx, c, splitAccounts(m[1]), more, callback)
	}
	if q, ok := rewriteSetNames(fastpath.StripLeadingComments(stmt)); ok {
		return true, h.Handler.ComQuery(ctx, c, q, callback)
	}
	rewritten, discard, ok := rewriteCompat(stmt)
	if !ok {
		return false, nil
	}
	if !discard {
		return true, h.Handler.ComQuery(ctx, c, rewritten, callback)
	}
	if err := h.Handler.ComQuery(ctx, c, rewritten, func(*sqltypes.Result, bool) error { return nil }); err != nil {
		return true, err
	}
	return true, callback(&sqltypes.Result{}, more)
}

// accountUnlock clears the login lock-out of the named accounts, from
// every address. Data owners only (they administer the accounts).
// sessionUser returns the connection's account name and current database.
func (h *conformHandler) sessionUser(c *mysql.Conn) (user, db string) {
	if v, ok := h.sessions.Load(c.ConnectionID); ok {
		s := v.(sql.Session)
		return s.Client().User, s.GetCurrentDatabase()
	}
	return "", ""
}

// adminTables answers CHECK, OPTIMIZE, REPAIR and ANALYZE TABLE for data
// owners with MySQL's result (Table, Op, Msg_type, Msg_text), so that
// mariadb-check and ops scripts work. The store keeps no state these
// statements could fix: CHECK reads the table (it must exist and be
// readable), OPTIMIZE and REPAIR have nothing to do. ANALYZE collects
// statistics through go-mysql-server for unprotected tables; a protected
// table's statistics would describe its rows, so they are not collected
// (a note says so) and the answer is OK.
func (h *conformHandler) adminTables(ctx context.Context, c *mysql.Conn, op string, tables []string, more bool, callback mysql.ResultSpoolFn) error {
	user, cur := h.sessionUser(c)
	if h.owner == nil || !h.owner(user) {
		return mysql.NewSQLError(erTableAccessDenid, ssAccessRule, "%s TABLE command denied to user '%s': it is for data owners", strings.ToUpper(op), user)
	}
	str := func(s string) sqltypes.Value { return sqltypes.MakeTrusted(sqltypes.VarChar, []byte(s)) }
	res := &sqltypes.Result{Fields: []*querypb.Field{
		{Name: "Table", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "Op", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "Msg_type", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "Msg_text", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
	}}
	discard := func(*sqltypes.Result, bool) error { return nil }
	for _, t := range tables {
		db, name, err := tableName(t, cur)
		if err != nil {
			return err
		}
		shown := db + "." + name
		qualified := "`" + strings.ReplaceAll(db, "`", "``") + "`.`" + strings.ReplaceAll(name, "`", "``") + "`"
		fail := func(err error) {
			msg := err.Error()
			var se *mysql.SQLError
			if errors.As(err, &se) {
				msg = se.Message
			}
			res.Rows = append(res.Rows, []sqltypes.Value{str(shown), str(op), str("Error"), str(msg)},
				[]sqltypes.Value{str(shown), str(op), str("status"), str("Operation failed")})
		}
		if db == "" {
			fail(errors.New("No database selected"))
			continue
		}
		// Existence and the owner's read privilege, without reading rows.
		if err := h.Handler.ComQuery(ctx, c, "SELECT 1 FROM "+qualified+" LIMIT 0", discard); err != nil {
			fail(h.err(err))
			continue
		}
		if op == "analyze" {
			if h.protected != nil && h.protected(db, name) {
				res.Rows = append(res.Rows, []sqltypes.Value{str(shown), str(op), str("note"), str("protected table: statistics are not collected (they would describe its rows)")})
			} else if err := h.Handler.ComQuery(ctx, c, "ANALYZE TABLE "+qualified, discard); err != nil && !strings.Contains(err.Error(), "panic") {
				// go-mysql-server panics (and recovers) on an empty table:
				// there is nothing to analyse then.
				fail(h.err(err))
				continue
			}
		}
		res.Rows = append(res.Rows, []sqltypes.Value{str(shown), str(op), str("status"), str("OK")})
	}
	return callback(res, more)
}

// checksumTables answers CHECKSUM TABLE for data owners (others get
// 1142, as for CHECK TABLE): MySQL's columns (Table, Checksum), NULL for a
// table that does not exist or cannot be read. The checksum is dpsql's own
// (the sum of the CRC-32s of the rows' text forms, mod 2^32, independent
// of row order): it compares copies of a table on dpsql servers, not with
// MariaDB's, which sums checksums of its storage format. Owners read the
// rows of protected tables anyway (dumps); nobody else gets here.
func (h *conformHandler) checksumTables(ctx context.Context, c *mysql.Conn, tables []string, more bool, callback mysql.ResultSpoolFn) error {
	user, cur := h.sessionUser(c)
	if h.owner == nil || !h.owner(user) {
		return mysql.NewSQLError(erTableAccessDenid, ssAccessRule, "CHECKSUM TABLE command denied to user '%s': it is for data owners", user)
	}
	res := &sqltypes.Result{Fields: []*querypb.Field{
		{Name: "Table", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "Checksum", Type: sqltypes.Int64, Charset: 63, Flags: uint32(querypb.MySqlFlag_NUM_FLAG)},
	}}
	for _, t := range tables {
		db, name, err := tableName(t, cur)
		if err != nil {
			return err
		}
		shown := sqltypes.MakeTrusted(sqltypes.VarChar, []byte(db+"."+name))
		var sum uint32
		err = h.Handler.ComQuery(ctx, c, "SELECT * FROM `"+strings.ReplaceAll(db, "`", "``")+"`.`"+strings.ReplaceAll(name, "`", "``")+"`",
			func(r *sqltypes.Result, _ bool) error {
				for _, row := range r.Rows {
					sum += rowChecksum(row)
				}
				return nil
			})
		if db == "" || err != nil {
			res.Rows = append(res.Rows, []sqltypes.Value{shown, sqltypes.NULL})
			continue
		}
		res.Rows = append(res.Rows, []sqltypes.Value{shown, sqltypes.NewInt64(int64(sum))})
	}
	return callback(res, more)
}

// rowChecksum is the CRC-32 of a row's values, each length-prefixed (-1
// for NULL) so that no two rows share an encoding.
func rowChecksum(row []sqltypes.Value) uint32 {
	h := crc32.NewIEEE()
	var n [4]byte
	for _, v := range row {
		l := uint32(0xffffffff)
		if !v.IsNull() {
			l = uint32(len(v.Raw()))
		}
		binary.LittleEndian.PutUint32(n[:], l)
		h.Write(n[:])
		h.Write(v.Raw())
	}
	return h.Sum32()
}

// tableName parses "t" or "db.t" of an admin statement's table list (cur:
// the session's database).
func tableName(t, cur string) (db, name string, err error) {
	m := reIdent.FindStringSubmatch(t)
	if m == nil {
		return "", "", mysql.NewSQLError(erParseError, ssAccessRule, "syntax error near %q", strings.TrimSpace(t))
	}
	db, name = cur, unquoteIdent(m[1])
	if m[2] != "" {
		db, name = name, unquoteIdent(m[2])
	}
	return db, name, nil
}

// unquoteIdent removes an identifier's backquotes.
func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}

func (h *conformHandler) accountUnlock(c *mysql.Conn, names []string, more bool, callback mysql.ResultSpoolFn) error {
	user, _ := h.sessionUser(c)
	if h.owner == nil || !h.owner(user) {
		return mysql.NewSQLError(1227, ssAccessRule, "Access denied; ALTER USER … ACCOUNT UNLOCK is for data owners (CREATE USER privilege)")
	}
	for _, n := range names {
		h.throttle.unlock(n)
	}
	return callback(&sqltypes.Result{}, more)
}
