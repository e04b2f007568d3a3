package engine_test

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"

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
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = "NULL"
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
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
