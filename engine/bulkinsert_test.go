package engine_test

import (
	"database/sql"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpsql/dpsql/engine"
)

// The fast multi-row INSERT path (bulkinsert.go) must answer exactly as the
// ordinary path: same rows, same errors, same AUTO_INCREMENT values, nothing
// written by a failing statement, ROLLBACK undoing it, analysts refused on
// protected tables. Each statement runs twice, on twin tables, once with the
// fast path disabled and once forced, and the outcomes are compared.

const bulkDDL = "CREATE TABLE %s (id INT PRIMARY KEY, a DOUBLE, b FLOAT, c DECIMAL(10,3), s VARCHAR(8) NOT NULL, n INT NULL, k INT, UNIQUE KEY uk_%s (k))"

// bulkDump renders every row of table in key order.
func bulkDump(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query("SELECT * FROM " + table + " ORDER BY 1")
	if err != nil {
		t.Fatalf("dump %s: %v", table, err)
	}
	defer rows.Close()
	return rowStrings(t, rows)
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// twinExec runs the statement (with %s standing for the table) on the slow
// table and, forced through the fast path, on the fast table, and requires
// the same outcome and the same table contents afterwards.
func twinExec(t *testing.T, db *sql.DB, slow, fast, stmt string, wantFast bool) error {
	t.Helper()
	restore := engine.SetBulkInsertMinBytes(math.MaxInt32)
	_, errSlow := db.Exec(fmt.Sprintf(stmt, slow))
	restore()
	restore = engine.SetBulkInsertMinBytes(0)
	before := engine.BulkRewrites()
	_, errFast := db.Exec(fmt.Sprintf(stmt, fast))
	took := engine.BulkRewrites() > before
	restore()
	if took != wantFast {
		t.Fatalf("%s: fast path taken = %v, want %v", short(stmt), took, wantFast)
	}
	es, ef := strings.ReplaceAll(errText(errSlow), slow, "T"), strings.ReplaceAll(errText(errFast), fast, "T")
	if es != ef {
		t.Fatalf("%s: slow path answered %q, fast path %q", short(stmt), es, ef)
	}
	ds, df := bulkDump(t, db, slow), bulkDump(t, db, fast)
	if strings.Join(ds, "\n") != strings.Join(df, "\n") {
		t.Fatalf("%s: tables differ:\nslow %v\nfast %v", short(stmt), ds, df)
	}
	return errFast
}

func TestBulkInsertMatchesSlowPath(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE bk")
	db := ts.connect("root", rootPW, "bk")
	db.SetMaxOpenConns(1)
	for _, tb := range []string{"slow", "fast"} {
		mustExec(t, db, fmt.Sprintf(bulkDDL, tb, tb))
	}
	ok := []string{
		"INSERT INTO %s VALUES (1, 1.5, 2.25, 3.125, 'a', NULL, 1), (2, -0.1, -0.0, -12.5, 'it''s', 7, 2), (3, 1e3, -2.5E-3, 0.0005, '', -128, 3)",
		"INSERT INTO %s (id, s, a) VALUES (4, 'x', 0.30000000000000004), (5,'y',123456789.123456789), (6 , 'z' , -0)",
		"insert into %s values\n(7, 9007199254740993, 3.4e38, 9999999.999, 'é', 2147483647, NULL);",
		"INSERT INTO bk.%s VALUES (8, '1.5', '2', '3', '42', '7', 8)",
		"INSERT INTO %s VALUES (9, 1, 1, 1.2345, 'r', 1, 9)", // DECIMAL(10,3) rounds the literal
	}
	for _, q := range ok {
		if err := twinExec(t, db, "slow", "fast", q, true); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	bad := []string{
		"INSERT INTO %s VALUES (20, 1, 1, 1, 'a', 1, 20), (20, 2, 2, 2, 'b', 2, 21)", // duplicate key in the statement
		"INSERT INTO %s VALUES (21, 1, 1, 1, 'a', 1, 21), (1, 2, 2, 2, 'b', 2, 22)",  // duplicate of an existing row
		"INSERT INTO %s VALUES (22, 1, 1, 1, 'a', 1, 22), (23, 2, 2, 2, 'b', 2, 3)",  // duplicate unique k
		"INSERT INTO %s VALUES (24, 1, 1, 1, 'too long a string', 1, 24)",
		"INSERT INTO %s VALUES (25, 1, 1, 1, NULL, 1, 25)",
		"INSERT INTO %s VALUES (26, 1, 1, 1, 'a', 99999999999, 26)",
		"INSERT INTO %s VALUES (27, 'abc', 1, 1, 'a', 1, 27)",
		"INSERT INTO %s VALUES (28, 1, 1, 123456789.5, 'a', 1, 28)",
	}
	for _, q := range bad {
		if err := twinExec(t, db, "slow", "fast", q, true); err == nil {
			t.Fatalf("%s: expected an error", q)
		}
	}
	// Forms left to the ordinary path answer as before.
	fallback := []string{
		"INSERT INTO %s VALUES (30, 1, 1, 1, 'a', 1, 30), (31, 1, 1, 1, 'a')", // tuple widths differ
		"INSERT INTO %s VALUES (32, 1+1, 1, 1, 'a', 1, 32)",                   // expression
		"INSERT IGNORE INTO %s VALUES (33, 1, 1, 1, 'a', 1, 33), (1, 1, 1, 1, 'a', 1, 34)",
		"INSERT INTO %s VALUES (35, 1, 1, 1, 'a\\'b', 1, 35)", // backslash escape
		"INSERT INTO %s VALUES (36, 1, 1, 1, 'a', 1, 36) ON DUPLICATE KEY UPDATE a = 2",
		"INSERT INTO %s VALUES (37, 1, 1, 1, 'a', 1, 37); SELECT 1",
		"INSERT INTO %s (id, nope) VALUES (29, 1)", // unknown column
	}
	for _, q := range fallback {
		twinExec(t, db, "slow", "fast", q, false)
	}

	// AUTO_INCREMENT filled by the engine: same ids, same LAST_INSERT_ID.
	mustExec(t, db, "CREATE TABLE ai_slow (id INT AUTO_INCREMENT PRIMARY KEY, v DOUBLE)")
	mustExec(t, db, "CREATE TABLE ai_fast (id INT AUTO_INCREMENT PRIMARY KEY, v DOUBLE)")
	for i := 0; i < 2; i++ {
		twinExec(t, db, "ai_slow", "ai_fast", "INSERT INTO %s (v) VALUES (1.5), (2.5), (NULL)", true)
	}
	var lastSlow, lastFast int64
	restore := engine.SetBulkInsertMinBytes(math.MaxInt32)
	mustExec(t, db, "INSERT INTO ai_slow (v) VALUES (7), (8)")
	if err := db.QueryRow("SELECT LAST_INSERT_ID()").Scan(&lastSlow); err != nil {
		t.Fatal(err)
	}
	restore()
	restore = engine.SetBulkInsertMinBytes(0)
	mustExec(t, db, "INSERT INTO ai_fast (v) VALUES (7), (8)")
	if err := db.QueryRow("SELECT LAST_INSERT_ID()").Scan(&lastFast); err != nil {
		t.Fatal(err)
	}
	restore()
	if lastSlow != lastFast || lastFast != 7 {
		t.Fatalf("LAST_INSERT_ID: slow %d, fast %d, want 7", lastSlow, lastFast)
	}
	// An explicit AUTO_INCREMENT column keeps the ordinary path.
	twinExec(t, db, "ai_slow", "ai_fast", "INSERT INTO %s (id, v) VALUES (NULL, 1), (100, 2)", false)
}

func TestBulkInsertRollbackAndGuard(t *testing.T) {
	defer engine.SetBulkInsertMinBytes(0)()
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 20, 5)
	mustExec(t, root, "CREATE TABLE demo.pub (id INT PRIMARY KEY, v DOUBLE)")

	// ROLLBACK undoes a bulk INSERT; COMMIT keeps it.
	before := engine.BulkRewrites()
	tx, err := root.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO pub VALUES (1, 1.5), (2, 2.5), (3, 3.5)"); err != nil {
		t.Fatal(err)
	}
	if n := countTableRows(t, tx, "pub"); n != 3 {
		t.Fatalf("inside the transaction: %d rows, want 3", n)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := countTableRows(t, root, "pub"); n != 0 {
		t.Fatalf("after ROLLBACK: %d rows, want 0", n)
	}
	tx, _ = root.Begin()
	if _, err := tx.Exec("INSERT INTO pub VALUES (1, 1.5), (2, 2.5)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := countTableRows(t, root, "pub"); n != 2 {
		t.Fatalf("after COMMIT: %d rows, want 2", n)
	}

	// An analyst may not write the protected table, through either path,
	// and nothing is written.
	ana := ts.connect("ana", "ana-pw", "demo")
	wantErr(t, ana, "INSERT INTO people VALUES (1000, 'x', 30, 1), (1001, 'y', 40, 2)", "protected")
	wantErr(t, ana, "INSERT INTO demo.people (id, name, age, town) VALUES (1002, 'x', 30, 1)", "protected")
	if n := countTableRows(t, root, "people"); n != 20 {
		t.Fatalf("people has %d rows after refused inserts, want 20", n)
	}
	// The owner's bounds refusal (age outside [0, 100]) holds on the fast
	// path too, and leaves the table unchanged.
	wantErr(t, root, "INSERT INTO people VALUES (1003, 'x', 30, 1), (1004, 'y', 400, 2)", "outside its declared bounds")
	if n := countTableRows(t, root, "people"); n != 20 {
		t.Fatalf("people has %d rows after a refused insert, want 20", n)
	}
	mustExec(t, root, "INSERT INTO people VALUES (1005, 'x', 30, 1), (1006, 'y', 40, 2)")
	if n := countTableRows(t, root, "people"); n != 22 {
		t.Fatalf("people has %d rows, want 22", n)
	}
	if engine.BulkRewrites()-before < 6 {
		t.Fatalf("only %d statements took the fast path", engine.BulkRewrites()-before)
	}
}

// TestInsertPastTailSeesConcurrentDuplicate: an insert whose key sorts after
// every committed key skips the store lookup (editor.absentAbove); a key
// another transaction committed meanwhile must still be a duplicate.
func TestInsertPastTailSeesConcurrentDuplicate(t *testing.T) {
	_, db := txServer(t)
	a, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Rollback()
	if _, err := a.Exec("INSERT INTO acct VALUES (50, 'a', 1)"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "INSERT INTO acct VALUES (100, 'b', 2)") // committed after a's snapshot
	_, err = a.Exec("INSERT INTO acct VALUES (100, 'c', 3)")
	if n, _ := mysqlErr(err); n != 1062 {
		t.Fatalf("insert of a key committed by another transaction: %v, want error 1062", err)
	}
	// Keys in a gap below the tail and past it are accepted.
	if _, err := a.Exec("INSERT INTO acct VALUES (3, 'd', 4), (200, 'e', 5)"); err != nil {
		t.Fatal(err)
	}
	_, err = a.Exec("INSERT INTO acct VALUES (2, 'dup', 0)")
	if n, _ := mysqlErr(err); n != 1062 {
		t.Fatalf("insert of an existing key: %v, want error 1062", err)
	}
}

// TestLoadDataAndIgnoreRowMarks: go-mysql-server brackets every row of LOAD
// DATA LOCAL (IGNORE semantics), INSERT IGNORE and UPDATE as a statement of
// its own; the store's statement marks (an undo log) must drop exactly the
// failing rows, and a statement reading its own table must not see its
// own writes.
func TestLoadDataAndIgnoreRowMarks(t *testing.T) {
	_, db := txServer(t)
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE TABLE ld (id INT PRIMARY KEY, v DOUBLE NOT NULL, u INT, UNIQUE KEY uu (u))")
	mustExec(t, db, "INSERT INTO ld VALUES (2, 0.5, 20)")
	// Rows: new, duplicate id 2, new, duplicate u 30 of the row before, new.
	data := "1,1.5,10\n2,2.5,99\n3,3.5,30\n4,4.5,30\n5,5.5,50\n"
	mysql.RegisterReaderHandler("ldtest", func() io.Reader { return strings.NewReader(data) })
	defer mysql.DeregisterReaderHandler("ldtest")
	mustExec(t, db, "LOAD DATA LOCAL INFILE 'Reader::ldtest' INTO TABLE ld FIELDS TERMINATED BY ','")
	want := []string{"1|1.5|10", "2|0.5|20", "3|3.5|30", "5|5.5|50"}
	if got := bulkDump(t, db, "ld"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("after LOAD DATA: %v, want %v", got, want)
	}
	// Inside a transaction, then rolled back: nothing stays.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT IGNORE INTO ld VALUES (6, 6.5, 60), (1, 0, 0), (7, 7.5, 60), (8, 8.5, 80)"); err != nil {
		t.Fatal(err)
	}
	if n := countTableRows(t, tx, "ld"); n != 6 {
		t.Fatalf("after INSERT IGNORE: %d rows, want 6", n)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := bulkDump(t, db, "ld"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("after ROLLBACK: %v, want %v", got, want)
	}
	// Inside a transaction, a failing statement leaves none of its rows
	// (through either INSERT path), the earlier statement's stay.
	for _, minBytes := range []int{math.MaxInt32, 0} {
		restore := engine.SetBulkInsertMinBytes(minBytes)
		tx, err = db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("INSERT INTO ld VALUES (9, 9.5, 90)"); err != nil {
			t.Fatal(err)
		}
		_, err = tx.Exec("INSERT INTO ld VALUES (10, 1, 100), (11, 1, 110), (3, 1, 120)")
		if n, _ := mysqlErr(err); n != 1062 {
			t.Fatalf("duplicate in a transaction: %v, want error 1062", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		restore()
		if got := bulkDump(t, db, "ld"); strings.Join(got, " ") != strings.Join(append(append([]string{}, want...), "9|9.5|90"), " ") {
			t.Fatalf("after COMMIT of a transaction with a failed statement: %v", got)
		}
		mustExec(t, db, "DELETE FROM ld WHERE id = 9")
	}
	// A statement reading the table it writes sees it as it began.
	mustExec(t, db, "INSERT INTO ld SELECT id + 100, v, NULL FROM ld")
	if n := countTableRows(t, db, "ld"); n != 8 {
		t.Fatalf("after INSERT … SELECT from itself: %d rows, want 8", n)
	}
	mustExec(t, db, "UPDATE ld SET id = id + 1 ORDER BY id DESC")
	got := bulkDump(t, db, "ld")
	if len(got) != 8 || got[0] != "2|1.5|10" || got[7] != "106|5.5|NULL" {
		t.Fatalf("after UPDATE id = id + 1: %v", got)
	}
	// A failing UPDATE changes nothing.
	_, err = db.Exec("UPDATE ld SET u = 10 WHERE id = 3")
	if n, _ := mysqlErr(err); n != 1062 {
		t.Fatalf("UPDATE to a duplicate u: %v, want error 1062", err)
	}
	if again := bulkDump(t, db, "ld"); strings.Join(again, " ") != strings.Join(got, " ") {
		t.Fatalf("a failed UPDATE changed the table: %v", again)
	}
}
