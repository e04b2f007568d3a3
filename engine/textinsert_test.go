package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpsql/dpsql/engine"
)

// Text INSERT plan cache (textinsert.go): every statement's outcome — the
// error (code, SQLSTATE, message), affected rows, LAST_INSERT_ID, the
// warnings — and the stored rows are those of the same statements run with
// the cache off, and the cache is used.

// textConn opens one connection as user on db; multi sets the client's
// multi-statement flag (COM_QUERY goes to ComMultiQuery).
func textConn(t *testing.T, ts *testServer, user, pw, db string, multi bool) *sql.Conn {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, pw, "tcp", ts.srv.Addr(), db
	cfg.Timeout = 10 * time.Second
	cfg.AllowNativePasswords = true
	cfg.MultiStatements = multi
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatalf("connector: %v", err)
	}
	pool := sql.OpenDB(conn)
	t.Cleanup(func() { pool.Close() })
	c, err := pool.Conn(context.Background())
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// textOutcome runs q as a text query and renders what the client sees.
// A q starting with "+" is run alone: the next statement's warnings are
// both statements' if the second did not clear the first's.
func textOutcome(t *testing.T, c *sql.Conn, q string) string {
	t.Helper()
	ctx := context.Background()
	alone := strings.HasPrefix(q, "+")
	q = strings.TrimPrefix(q, "+")
	var out string
	r, err := c.ExecContext(ctx, q)
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			out = fmt.Sprintf("error %d %s %s", me.Number, string(me.SQLState[:]), me.Message)
		} else {
			out = "error " + err.Error()
		}
	} else {
		ra, _ := r.RowsAffected()
		id, _ := r.LastInsertId()
		out = fmt.Sprintf("ok rows=%d id=%d", ra, id)
	}
	if alone {
		return q + " => " + out
	}
	rows, err := c.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		t.Fatalf("show warnings after %s: %v", q, err)
	}
	out += " warnings=" + strings.Join(rowStrings(t, rows), ";")
	var lid string
	if err := c.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&lid); err != nil {
		t.Fatalf("last_insert_id: %v", err)
	}
	return q + " => " + out + " last_insert_id=" + lid
}

func textDump(t *testing.T, c *sql.Conn, table string) []string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), "SELECT * FROM "+table+" ORDER BY 1")
	if err != nil {
		t.Fatalf("dump %s: %v", table, err)
	}
	return rowStrings(t, rows)
}

var textTables = []string{
	"CREATE TABLE tn (id INT PRIMARY KEY, i TINYINT, u INT UNSIGNED, b BIGINT, bu BIGINT UNSIGNED, d DECIMAL(10,3), f FLOAT, g DOUBLE, nn INT NOT NULL)",
	"CREATE TABLE ts (id INT PRIMARY KEY, c CHAR(5), v VARCHAR(10) CHARACTER SET latin1, tx TEXT COLLATE utf8mb4_bin, e ENUM('a','b','c'), s SET('x','y'), j JSON, bl BLOB, dt DATE, dtt DATETIME)",
	"CREATE TABLE ta (id BIGINT AUTO_INCREMENT PRIMARY KEY, a INT DEFAULT 7, b VARCHAR(10) DEFAULT 'dflt')",
	"CREATE TABLE tc (id INT PRIMARY KEY, v INT, CHECK (v > 0))",
	"CREATE TABLE tp (id INT PRIMARY KEY)",
	"CREATE TABLE tf (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES tp(id))",
	"CREATE TABLE tt (id INT PRIMARY KEY, v INT)",
	"CREATE TABLE tl (n INT)",
}

// textStatements are the statements of TestTextInsertSameOutcomes: every
// shape several times with other values (the cache is trusted from the
// fourth use), failures and warnings among them.
func textStatements() []string {
	var s []string
	add := func(f string, a ...any) { s = append(s, fmt.Sprintf(f, a...)) }
	for r := 0; r < 5; r++ {
		id := 10 * r
		add("INSERT INTO tn VALUES (%d, %d, %d, %d, %d, %d.5, %d.25, %de3, %d)", id, r-2, r*1000, -r*1000000000000, uint64(1)<<63+uint64(r), r, r, r, r)
		add("INSERT INTO tn (id, nn, d, g) VALUES (%d, %d, -%d.125, -2.5E-%d)", id+1, r, r, r+1)
		add("INSERT INTO tn (id, bu, f) VALUES (%d, 18446744073709551615, .5);", id+2) // NOT NULL nn has no default
		add("INSERT INTO tn (id, nn, bu) VALUES (%d, 1, 18446744073709551616)", id+3)  // out of range
		add("INSERT INTO tn (id, nn, i) VALUES (%d, 1, %d)", id+4, 120+r*50)           // 170, 220: out of range
		add("INSERT INTO tn (id, nn, i) VALUES (%d, NULL, 1)", id+5)                   // NOT NULL
		add("INSERT INTO tn (id, nn) VALUES (%d, 'x%d')", id+6, r)                     // type error
		add("INSERT INTO tn (id, nn) VALUES (%d, %d)", id, r)                          // duplicate key
		add("INSERT INTO tn (id, nn, d) VALUES (%d, 1, 123456789.5)", id+7)            // DECIMAL out of range
		add("INSERT INTO tn (id, nn, g, f) VALUES (%d, 1, 1e308, 3.4e38)", id+8)
		add("INSERT INTO ts VALUES (%d, 'ab%d', 'é%d', 'Tx''t%d', 'b', 'x,y', '{\"a\": %d}', 'blob%d', '2024-01-0%d', '2024-02-03 04:05:0%d')", id, r, r, r, r, r, r+1, r)
		add("INSERT INTO ts (id, c) VALUES (%d, 'toolong%d')", id+1, r)                              // too long
		add("INSERT INTO ts (id, e) VALUES (%d, 'zz')", id+2)                                        // bad ENUM
		add("INSERT INTO ts (id, dt) VALUES (%d, '2024-13-0%d')", id+3, r+1)                         // bad date
		add("INSERT INTO ts (id, j) VALUES (%d, '{bad')", id+4)                                      // bad JSON
		add("INSERT INTO ts (id, c, v) VALUES (%d, 'a%d', 'b'), (%d, 'c', 'd%d')", id+5, r, id+6, r) // two rows
		add("INSERT INTO ta (a, b) VALUES (%d, 'r%d')", r, r)
		add("INSERT INTO ta VALUES (NULL, %d, 'n')", r)
		add("INSERT INTO ta VALUES (0, %d, 'z')", r)
		add("INSERT INTO ta VALUES (%d, %d, 'e')", 1000+r, r)
		add("INSERT INTO ta (b) VALUES ('only%d')", r)
		add("INSERT INTO tc VALUES (%d, %d)", id, r) // r = 0 fails the CHECK
		add("INSERT INTO tp VALUES (%d)", id)
		add("INSERT INTO tf VALUES (%d, %d)", id, id)     // parent exists
		add("INSERT INTO tf VALUES (%d, %d)", id+1, id+3) // no parent
		add("INSERT INTO tt VALUES (%d, %d)", id, r)
	}
	// Non-strict mode: warnings instead of errors.
	s = append(s, "SET sql_mode = ''")
	for r := 0; r < 5; r++ {
		id := 100 + 10*r
		add("INSERT INTO tn (id, nn, i) VALUES (%d, 1, %d)", id, 200+r)
		add("INSERT INTO tn (id, nn) VALUES (%d, 'x%d')", id+1, r)
		add("INSERT INTO ts (id, c) VALUES (%d, 'toolong%d')", id, r)
		add("INSERT INTO ts (id, dt) VALUES (%d, '2024-13-0%d')", id+1, r+1)
		// A statement clears the warnings of the one before (a plain
		// INSERT here either fails or makes none; INSERT IGNORE does).
		add("+INSERT IGNORE INTO tn (id, nn) VALUES (%d, 1)", 0)
		add("INSERT INTO tn (id, nn, i) VALUES (%d, 1, %d)", 2000+r, r)
	}
	s = append(s, "SET sql_mode = DEFAULT")
	// Transactions.
	s = append(s, "BEGIN")
	for r := 0; r < 4; r++ {
		add("INSERT INTO tt VALUES (%d, %d)", 200+r, r)
	}
	s = append(s, "ROLLBACK", "BEGIN")
	for r := 0; r < 4; r++ {
		add("INSERT INTO tt VALUES (%d, %d)", 300+r, r)
		add("INSERT INTO tn (id, nn) VALUES (%d, %d)", 300+r, r)
	}
	s = append(s, "COMMIT", "SET autocommit = 0")
	for r := 0; r < 4; r++ {
		add("INSERT INTO tn (id, nn) VALUES (%d, %d)", 400+r, r)
	}
	s = append(s, "ROLLBACK")
	for r := 0; r < 4; r++ {
		add("INSERT INTO tn (id, nn) VALUES (%d, %d)", 500+r, r)
	}
	s = append(s, "COMMIT", "SET autocommit = 1")
	return s
}

// textRun creates database db, runs stmts in it (cache on or off) and
// returns the outcomes and the tables' rows.
func textRun(t *testing.T, ts *testServer, db string, on, multi bool, setup, stmts []string) ([]string, uint64) {
	t.Helper()
	defer ts.e.SetTextInsertCache(on)()
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE "+db)
	c := textConn(t, ts, "root", rootPW, db, multi)
	for _, q := range setup {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	before, fast := ts.e.TextInsertHits(), ts.e.TextInsertFastHits()
	var out []string
	for _, q := range stmts {
		out = append(out, textOutcome(t, c, q))
	}
	hits := ts.e.TextInsertHits() - before
	if on && ts.e.TextInsertFastHits()-fast < 10 {
		t.Errorf("%d re-uses without binding again, want the fast path taken", ts.e.TextInsertFastHits()-fast)
	}
	for _, tb := range []string{"tn", "ts", "ta", "tc", "tp", "tf", "tt", "tl"} {
		for _, r := range textDump(t, c, tb) {
			out = append(out, tb+": "+r)
		}
	}
	return out, hits
}

func compareOutcomes(t *testing.T, on, off []string) {
	t.Helper()
	if len(on) != len(off) {
		t.Fatalf("%d outcomes with the cache, %d without", len(on), len(off))
	}
	bad := 0
	for i := range on {
		if on[i] != off[i] {
			t.Errorf("with the cache:    %s\nwithout the cache: %s", on[i], off[i])
			if bad++; bad > 10 {
				t.FailNow()
			}
		}
	}
}

func TestTextInsertSameOutcomes(t *testing.T) {
	ts := startServer(t, t.TempDir())
	stmts := textStatements()
	for _, multi := range []bool{false, true} {
		suffix := map[bool]string{false: "", true: "m"}[multi]
		off, offHits := textRun(t, ts, "toff"+suffix, false, multi, textTables, stmts)
		on, onHits := textRun(t, ts, "ton"+suffix, true, multi, textTables, stmts)
		if offHits != 0 {
			t.Fatalf("multi=%v: %d cache hits with the cache off", multi, offHits)
		}
		// Most shapes are cacheable; each is used 4–5 times, the first
		// three analysed in full.
		if onHits < 20 {
			t.Fatalf("multi=%v: %d cache hits, want the cache used", multi, onHits)
		}
		compareOutcomes(t, on, off)
		t.Logf("multi=%v: %d statements, %d cache hits", multi, len(stmts), onHits)
	}
}

// Statements of other forms never take the path; a plain one does.
func TestTextInsertNeverCached(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE tnc")
	c := textConn(t, ts, "root", rootPW, "tnc", true)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE w (id INT PRIMARY KEY, k INT DEFAULT 3, s VARCHAR(20))",
		"CREATE TABLE src (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE prot (id INT PRIMARY KEY, k INT)",
		"INSERT INTO prot VALUES (1, 1)",
		"CALL dp_protect('prot', 10, 0)",
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	never := []string{
		"INSERT INTO w VALUES (%d, 1 + 1, 'a')",
		"INSERT INTO w VALUES (%d, ABS(-1), 'a')",
		"INSERT INTO w VALUES (%d, DEFAULT, 'a')",
		"INSERT INTO w VALUES (%d, 1, CONCAT('a', 'b'))",
		"INSERT /* c */ INTO w VALUES (%d, 1, 'a')",
		"/* c */ INSERT INTO w VALUES (%d, 1, 'a')",
		"INSERT INTO w VALUES (%d, 1, 'a') -- c",
		"INSERT INTO w VALUES (%d, 1, 'a') # c",
		"INSERT INTO w (id, /* c */ k) VALUES (%d, 1)",
		"INSERT INTO w VALUES (%d, 1, 'a') ON DUPLICATE KEY UPDATE k = 2",
		"INSERT IGNORE INTO w VALUES (%d, 1, 'a')",
		"INSERT INTO w SELECT %d, 1, 'a'",
		"INSERT INTO w (id, k) SELECT %d, k FROM src LIMIT 1",
		"INSERT INTO w SET id = %d, k = 1",
		"INSERT INTO w VALUES (%d, 1, 'a'); INSERT INTO w VALUES (100000, 1, 'b')",
		"INSERT INTO w VALUES (%d, 1, \"a\")",
		"INSERT INTO w VALUES (%d, 1, 'a\\'b')",
		"INSERT INTO w VALUES (%d, 1, _utf8mb4'a')",
		"INSERT INTO w VALUES (%d, 0x10, 'a')",
		"INSERT INTO w VALUES (%d, TRUE, 'a')",
		"INSERT INTO w VALUES (%d, 1, 'a' 'b')",
		"REPLACE INTO w VALUES (%d, 1, 'a')",
		"INSERT INTO prot VALUES (%d, 1)",
		"INSERT INTO prot (id, k) VALUES (%d, 1)",
	}
	id := 1000
	for _, f := range never {
		before := ts.e.TextInsertHits()
		for i := 0; i < 6; i++ {
			id++
			q := fmt.Sprintf(f, id)
			if strings.Contains(q, "100000") {
				if _, err := c.ExecContext(ctx, "DELETE FROM w WHERE id = 100000"); err != nil {
					t.Fatal(err)
				}
			}
			c.ExecContext(ctx, q) // errors (protected table) are fine here
		}
		if h := ts.e.TextInsertHits() - before; h != 0 {
			t.Errorf("%s: %d cache hits, want none", f, h)
		}
	}
	// The plain form does take it (the counter works).
	before := ts.e.TextInsertHits()
	for i := 0; i < 6; i++ {
		id++
		if _, err := c.ExecContext(ctx, fmt.Sprintf("INSERT INTO w VALUES (%d, 1, 'a')", id)); err != nil {
			t.Fatal(err)
		}
	}
	if h := ts.e.TextInsertHits() - before; h != 5 {
		t.Errorf("plain INSERT: %d cache hits, want 5 (6 uses, the first analysed)", h)
	}
}

// SplitTextInsert's templates.
func TestSplitTextInsert(t *testing.T) {
	for q, want := range map[string]string{
		"INSERT INTO t VALUES (1, -2, 'a''b', NULL, -1.5, 2e3)":  "INSERT INTO t VALUES (?, ?, ?, NULL, -?, ?)",
		"insert into `d`.`t` (a,b) values(1,'x'),(2 , 'y') ;  ":  "insert into `d`.`t` (a,b) values(?, ?), (?, ?)",
		"INSERT INTO t VALUE (NULL)":                             "",
		"INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 1": "",
		"INSERT INTO t VALUES (1);;":                             "",
		"INSERT INTO t VALUES (1); SELECT 1":                     "",
		"INSERT INTO t VALUES (1), (2, 3)":                       "ok", // widths are the binder's to refuse
		"INSERT INTO t VALUES (-1e5, .5, 1.)":                    "INSERT INTO t VALUES (-?, ?, ?)",
		"INSERT INTO t (a -- x\n) VALUES (1)":                    "",
		"INSERT INTO t VALUES (- 1)":                             "",
	} {
		got, ok := engine.SplitTextInsert(q)
		if want == "ok" {
			if !ok {
				t.Errorf("%q: refused", q)
			}
			continue
		}
		if (want == "") == ok || ok && got != want {
			t.Errorf("%q: %q %v, want %q", q, got, ok, want)
		}
	}
}

// tstep is one statement of a scenario, run as root or as the scenario's
// user (%U, on database %D).
type tstep struct {
	user bool
	q    string
}

func warmSteps(user bool, f string, from, n int) []tstep {
	var s []tstep
	for i := from; i < from+n; i++ {
		s = append(s, tstep{user, strings.ReplaceAll(f, "#", fmt.Sprint(i))})
	}
	return s
}

func cat(parts ...[]tstep) []tstep {
	var s []tstep
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

// runScenario runs steps in a new database (cache on or off) and returns
// the outcomes, the rows of w, and the cache hits.
func runScenario(t *testing.T, ts *testServer, db string, on bool, steps []tstep) ([]string, uint64, uint64) {
	t.Helper()
	defer ts.e.SetTextInsertCache(on)()
	root0 := ts.connect("root", rootPW, "")
	mustExec(t, root0, "CREATE DATABASE "+db)
	user := "u" + db
	mustExec(t, root0, "CREATE USER '"+user+"'@'%' IDENTIFIED BY 'upw'")
	mustExec(t, root0, "GRANT SELECT ON "+db+".* TO '"+user+"'@'%'")
	root := textConn(t, ts, "root", rootPW, db, false)
	for _, q := range []string{
		"CREATE TABLE w (id INT PRIMARY KEY, k INT, s VARCHAR(20) DEFAULT 'd')",
	} {
		if _, err := root.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	uc := textConn(t, ts, user, "upw", db, false)
	before := ts.e.TextInsertHits()
	var out []string
	var tail uint64 // hits of the last three steps
	for i, st := range steps {
		if i == len(steps)-3 {
			tail = ts.e.TextInsertHits()
		}
		q := strings.NewReplacer("%U", "'"+user+"'@'%'", "%D", db).Replace(st.q)
		c := root
		if st.user {
			c = uc
		}
		// The database name differs between the runs.
		out = append(out, strings.ReplaceAll(textOutcome(t, c, q), db, "DB"))
	}
	hits := ts.e.TextInsertHits() - before
	tail = ts.e.TextInsertHits() - tail
	rows, err := root.QueryContext(context.Background(), "SELECT * FROM w ORDER BY 1")
	if err == nil {
		for _, r := range rowStrings(t, rows) {
			out = append(out, "w: "+r)
		}
	} else {
		out = append(out, "w: "+err.Error())
	}
	return out, hits, tail
}

// A DDL, GRANT/REVOKE or dp_protect between two text INSERTs takes effect
// at once: every outcome is the one without the cache, while the cache was
// in use before the change.
func TestTextInsertChangesTakeEffect(t *testing.T) {
	ts := startServer(t, t.TempDir())
	warm := warmSteps(false, "INSERT INTO w (id, k) VALUES (#, #)", 1, 5)
	warmAll := warmSteps(false, "INSERT INTO w VALUES (#, #, 's#')", 1, 5)
	scenarios := []struct {
		name  string
		steps []tstep
	}{
		{"add column", cat(warm, warmAll[:0], []tstep{{false, "ALTER TABLE w ADD COLUMN z INT DEFAULT 42"}},
			warmSteps(false, "INSERT INTO w (id, k) VALUES (#, #)", 10, 3),
			warmSteps(false, "INSERT INTO w VALUES (#, #, 's')", 20, 3))},
		{"full rows then add column", cat(warmAll, []tstep{{false, "ALTER TABLE w ADD COLUMN z INT DEFAULT 42"}},
			warmSteps(false, "INSERT INTO w VALUES (#, #, 's#')", 10, 3))},
		{"modify column", cat(warm, []tstep{{false, "ALTER TABLE w MODIFY COLUMN k TINYINT"}},
			warmSteps(false, "INSERT INTO w (id, k) VALUES (#, 1#)", 10, 3))},
		{"drop default", cat(warm, []tstep{{false, "ALTER TABLE w ALTER COLUMN s SET DEFAULT 'new'"}},
			warmSteps(false, "INSERT INTO w (id, k) VALUES (#, #)", 10, 3))},
		{"rename column", cat(warmAll, []tstep{{false, "ALTER TABLE w RENAME COLUMN k TO kk"}},
			warmSteps(false, "INSERT INTO w (id, k) VALUES (#, #)", 10, 3))},
		{"unique index", cat(warm, []tstep{{false, "CREATE UNIQUE INDEX uk ON w (k)"}},
			warmSteps(false, "INSERT INTO w (id, k) VALUES (1#, 3)", 10, 3))},
		{"check constraint", cat(warm, []tstep{{false, "ALTER TABLE w ADD CONSTRAINT kc CHECK (k < 10)"}},
			warmSteps(false, "INSERT INTO w (id, k) VALUES (#, 5#)", 10, 3))},
		{"drop and create", cat(warm, []tstep{{false, "DROP TABLE w"}, {false, "CREATE TABLE w (id INT PRIMARY KEY, k VARCHAR(2), s TEXT)"}},
			warmSteps(false, "INSERT INTO w (id, k) VALUES (#, 12345)", 10, 3))},
		{"drop", cat(warm, []tstep{{false, "DROP TABLE w"}},
			warmSteps(false, "INSERT INTO w (id, k) VALUES (#, #)", 10, 3))},
		{"dp_protect", cat(warm, []tstep{{false, "CALL dp_protect('w', 10, 0)"}},
			warmSteps(false, "INSERT INTO w (id, k) VALUES (#, #)", 10, 3))},
		{"revoke", cat([]tstep{{false, "GRANT INSERT ON %D.w TO %U"}},
			warmSteps(true, "INSERT INTO w (id, k) VALUES (#, #)", 1, 5),
			[]tstep{{false, "REVOKE INSERT ON %D.w FROM %U"}},
			warmSteps(true, "INSERT INTO w (id, k) VALUES (#, #)", 10, 3),
			[]tstep{{false, "GRANT INSERT ON %D.w TO %U"}},
			warmSteps(true, "INSERT INTO w (id, k) VALUES (#, #)", 20, 3))},
		{"dp_protect, analyst", cat([]tstep{{false, "GRANT INSERT ON %D.w TO %U"}},
			warmSteps(true, "INSERT INTO w (id, k) VALUES (#, #)", 1, 5),
			[]tstep{{false, "CALL dp_protect('w', 10, 0)"}},
			warmSteps(true, "INSERT INTO w (id, k) VALUES (#, #)", 10, 3))},
		{"no insert privilege", warmSteps(true, "INSERT INTO w (id, k) VALUES (#, #)", 1, 6)},
	}
	for i, sc := range scenarios {
		off, _, _ := runScenario(t, ts, fmt.Sprintf("soff%d", i), false, sc.steps)
		on, hits, tail := runScenario(t, ts, fmt.Sprintf("son%d", i), true, sc.steps)
		// A protected table's statements are never cached.
		if strings.HasPrefix(sc.name, "dp_protect") && tail != 0 {
			t.Errorf("%s: %d cache hits after dp_protect", sc.name, tail)
		}
		t.Logf("%s: %d cache hits", sc.name, hits)
		if hits == 0 && sc.name != "no insert privilege" {
			t.Errorf("%s: the cache was not used", sc.name)
		}
		compareOutcomes(t, on, off)
		if sc.name == "dp_protect, analyst" {
			for _, o := range on[len(sc.steps)-3 : len(sc.steps)] {
				if !strings.Contains(o, "=> error") {
					t.Errorf("an analyst's INSERT into a protected table: %s", o)
				}
			}
		}
		if sc.name == "no insert privilege" {
			for j := 1; j < len(sc.steps); j++ {
				a, b := on[j-1][strings.Index(on[j-1], "=>"):], on[j][strings.Index(on[j], "=>"):]
				// MySQL's 1142/42000 (issue 29; go-mysql-server said 1105).
				if !strings.HasPrefix(a, "=> error 1142 42000 command denied") || a != b {
					t.Errorf("refusals differ: %s / %s", on[j-1], on[j])
				}
			}
		}
	}
}
