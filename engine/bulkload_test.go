package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpsql/dpsql/engine"
)

// The store-level bulk writer (bulkload.go, bulkloaddata.go) must answer
// exactly as go-mysql-server's per-row insert chain: every statement runs
// on twin tables, once with the writer off and once with it on, and the
// outcomes are compared — error, affected rows, insert id, warnings, rows,
// unique index contents and the AUTO_INCREMENT counter.

// outcome is everything a client can observe of a statement.
type outcome struct {
	err, warnings, rows, index, create string
	affected, insertID                 int64
}

func observe(t *testing.T, conn *sql.Conn, table, stmt string, idx string) outcome {
	t.Helper()
	ctx := context.Background()
	var o outcome
	res, err := conn.ExecContext(ctx, stmt)
	o.err = strings.ReplaceAll(errText(err), table, "T")
	if err == nil {
		o.affected, _ = res.RowsAffected()
		o.insertID, _ = res.LastInsertId()
	}
	o.warnings = strings.ReplaceAll(strings.Join(connDump(t, conn, "SHOW WARNINGS"), "\n"), table, "T")
	o.rows = strings.Join(connDump(t, conn, "SELECT * FROM "+table+" ORDER BY 1"), "\n")
	if idx != "" {
		o.index = strings.Join(connDump(t, conn, fmt.Sprintf("SELECT %s, id FROM %s WHERE %s IS NOT NULL ORDER BY %s", idx, table, idx, idx)), "\n")
	}
	create := strings.Join(connDump(t, conn, "SHOW CREATE TABLE "+table), "\n")
	o.create = strings.ReplaceAll(create, table, "T")
	return o
}

func connDump(t *testing.T, conn *sql.Conn, q string) []string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	return rowStrings(t, rows)
}

// twinBulk runs stmt (%[1]s is the table) on slow with the bulk writer
// off and on fast with it on, and requires the same outcome.
func twinBulk(t *testing.T, conn *sql.Conn, slow, fast, stmt, idx string, wantBulk bool) outcome {
	t.Helper()
	restore := engine.SetBulkLoadOff(true)
	os := observe(t, conn, slow, fmt.Sprintf(stmt, slow), idx)
	restore()
	before := engine.BulkLoads()
	of := observe(t, conn, fast, fmt.Sprintf(stmt, fast), idx)
	if took := engine.BulkLoads() > before; took != wantBulk {
		t.Fatalf("%s: bulk writer taken = %v, want %v", short(stmt), took, wantBulk)
	}
	if os != of {
		t.Fatalf("%s:\nper-row path %+v\nbulk writer  %+v", short(stmt), os, of)
	}
	return of
}

func pinnedConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func registerData(t *testing.T, name, data string) {
	mysql.RegisterReaderHandler(name, func() io.Reader { return strings.NewReader(data) })
	t.Cleanup(func() { mysql.DeregisterReaderHandler(name) })
}

func TestBulkLoadDataMatchesPerRowPath(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE bl")
	conn := pinnedConn(t, ts.connect("root", rootPW, "bl"))
	for _, tb := range []string{"slow", "fast"} {
		if _, err := conn.ExecContext(context.Background(), fmt.Sprintf(
			"CREATE TABLE %s (id INT PRIMARY KEY, v DOUBLE NOT NULL, s VARCHAR(8), u INT, w FLOAT, UNIQUE KEY uu_%s (u), KEY ks_%s (s))", tb, tb, tb)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, data, stmt string
		bulk             bool
	}{
		{"plain", "1,1.5,a,10,0.5\n2,2.5,b,20,1e3\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' INTO TABLE %[1]s FIELDS TERMINATED BY ','", true},
		// Duplicates of an earlier row of the file, of a stored row, of a
		// unique key: skipped with a warning (LOCAL implies IGNORE).
		{"dups", "3,3.5,c,30,0\n1,9,x,99,0\n4,4.5,d,30,0\n5,5.5,e,50,0\n3,0,z,0,0\n6,6.5,f,60,0\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' INTO TABLE %[1]s FIELDS TERMINATED BY ','", true},
		// NULL spellings, empty fields, empty lines. (Escapes other than \N
		// are MySQL's on the bulk path, issue 29, and go-mysql-server drops
		// the escape character on the per-row path: TestMySQLConformance
		// compares them with MariaDB.)
		{"nulls", "7,\\N,NULL,,\n\n8,8.5,,\\N,NULL\n9,9.5,abc,90,\\N\n10,1,z,100,2\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' INTO TABLE %[1]s FIELDS TERMINATED BY ','", true},
		// Values that do not convert: zero or truncation with a warning.
		{"bad values", "11,abc,toolongstring,110,1\n12, 12.5 ,ok,1e20,3.5e39\n13,0x10,h,130,inf\n14,1e400,i,140,-0\n15,12abc,j,x,5\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' INTO TABLE %[1]s FIELDS TERMINATED BY ','", true},
		// Too few and too many fields.
		{"widths", "16,16.5\n17,17.5,q,170,1,extra,fields\n18\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' INTO TABLE %[1]s FIELDS TERMINATED BY ','", true},
		{"column list", "a\t19\t19.5\nb\t20\t20.5\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' INTO TABLE %[1]s (s, id, v)", true},
		{"ignore lines, crlf", "id;v\r\n21;21.5\r\n22;22.5\r\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' INTO TABLE %[1]s FIELDS TERMINATED BY ';' LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES", true},
		{"multi-byte terminator", "23::23.5::m\n24::24.5::n\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' INTO TABLE %[1]s FIELDS TERMINATED BY '::' (id, v, s)", true},
		// User variables and SET: go-mysql-server's parser, the bulk writer.
		{"set", "25,3,p\n26,4,q\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' INTO TABLE %[1]s FIELDS TERMINATED BY ',' (id, @x, s) SET v = @x * 2", true},
		{"enclosed", "\"27\",\"27.5\"\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' INTO TABLE %[1]s FIELDS TERMINATED BY ',' ENCLOSED BY '\"' (id, v)", true},
		{"explicit ignore", "28,28.5\n1,0\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' IGNORE INTO TABLE %[1]s FIELDS TERMINATED BY ',' (id, v)", true},
		// REPLACE keeps the per-row path.
		{"replace", "1,100.5\n29,29.5\n", "LOAD DATA LOCAL INFILE 'Reader::%[2]s' REPLACE INTO TABLE %[1]s FIELDS TERMINATED BY ',' (id, v)", false},
	}
	for _, c := range cases {
		name := strings.ReplaceAll(c.name, " ", "_")
		registerData(t, name, c.data)
		twinBulk(t, conn, "slow", "fast", strings.ReplaceAll(c.stmt, "%[2]s", name), "u", c.bulk)
	}

	// A foreign key (child side) keeps the per-row path (dpsql refuses
	// triggers; the writer would leave a database with any to that path).
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE par (id INT PRIMARY KEY)",
		"INSERT INTO par VALUES (1), (2)",
		"CREATE TABLE ch_slow (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES par (id))",
		"CREATE TABLE ch_fast (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES par (id))",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	registerData(t, "fk", "10,1\n11,3\n12,2\n")
	twinBulk(t, conn, "ch_slow", "ch_fast", "LOAD DATA LOCAL INFILE 'Reader::fk' INTO TABLE %[1]s FIELDS TERMINATED BY ','", "", false)

	// Multi-row INSERT (bulkinsert.go's rewrite on both sides): failing
	// statements leave nothing; IGNORE keeps the per-row path.
	defer engine.SetBulkInsertMinBytes(0)()
	for _, q := range []string{
		"INSERT INTO %[1]s VALUES (40, 1, 'a', 400, 1), (41, 2, 'b', 410, 2)",
		"INSERT INTO %[1]s VALUES (42, 1, 'a', 420, 1), (42, 2, 'b', 421, 2)",
		"INSERT INTO %[1]s VALUES (43, 1, 'a', 430, 1), (44, 2, 'b', 400, 2)",
		"INSERT INTO %[1]s VALUES (45, 1, 'a', 450, 1), (46, NULL, 'b', 460, 2)",
		"INSERT INTO %[1]s (id, v) VALUES (47, 1), (48, 'x')",
	} {
		twinBulk(t, conn, "slow", "fast", q, "u", true)
	}
	twinBulk(t, conn, "slow", "fast", "INSERT IGNORE INTO %[1]s VALUES (49, 1, 'a', 490, 1), (40, 2, 'b', 491, 2)", "u", false)
}

func TestBulkLoadAutoIncrementAndRollback(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE bl")
	db := ts.connect("root", rootPW, "bl")
	conn := pinnedConn(t, db)
	for _, tb := range []string{"ai_slow", "ai_fast"} {
		if _, err := conn.ExecContext(context.Background(), fmt.Sprintf(
			"CREATE TABLE %s (id INT AUTO_INCREMENT PRIMARY KEY, v DOUBLE, u INT, UNIQUE KEY (u))", tb)); err != nil {
			t.Fatal(err)
		}
	}
	registerData(t, "ai1", "1.5,1\n2.5,2\n3.5,1\n4.5,4\n")
	registerData(t, "ai2", "10,7.5,7\n5,5.5,5\n10,0,8\n,6.5,6\n")
	twinBulk(t, conn, "ai_slow", "ai_fast", "LOAD DATA LOCAL INFILE 'Reader::ai1' INTO TABLE %[1]s FIELDS TERMINATED BY ',' (v, u)", "u", true)
	twinBulk(t, conn, "ai_slow", "ai_fast", "LOAD DATA LOCAL INFILE 'Reader::ai2' INTO TABLE %[1]s FIELDS TERMINATED BY ','", "u", true)
	defer engine.SetBulkInsertMinBytes(0)()
	twinBulk(t, conn, "ai_slow", "ai_fast", "INSERT INTO %[1]s (v, u) VALUES (1, 100), (2, 101)", "u", true)
	twinBulk(t, conn, "ai_slow", "ai_fast", "INSERT INTO %[1]s (v, u) VALUES (1, 102), (2, 100), (3, 103)", "u", true)
	twinBulk(t, conn, "ai_slow", "ai_fast", "INSERT INTO %[1]s (v, u) VALUES (4, 104)", "u", true)

	// ROLLBACK removes what the bulk writer wrote; a failing statement in
	// a transaction leaves none of its rows, the earlier statement's stay.
	mustExec(t, db, "CREATE TABLE rb (id INT PRIMARY KEY, v DOUBLE)")
	registerData(t, "rb", "1,1\n2,2\n3,3\n")
	before := engine.BulkLoads()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("LOAD DATA LOCAL INFILE 'Reader::rb' INTO TABLE rb FIELDS TERMINATED BY ','"); err != nil {
		t.Fatal(err)
	}
	if n := countTableRows(t, tx, "rb"); n != 3 {
		t.Fatalf("inside the transaction: %d rows, want 3", n)
	}
	if _, err := tx.Exec("INSERT INTO rb VALUES (4, 4), (5, 5), (1, 0)"); err == nil {
		t.Fatal("duplicate key accepted")
	}
	if n := countTableRows(t, tx, "rb"); n != 3 {
		t.Fatalf("after a failed INSERT in the transaction: %d rows, want 3", n)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := countTableRows(t, db, "rb"); n != 0 {
		t.Fatalf("after ROLLBACK: %d rows, want 0", n)
	}
	// Savepoints: ROLLBACK TO undoes the bulk writes after it (several
	// batches), the ones before stay.
	var big strings.Builder
	for i := 10; i < 3000; i++ {
		fmt.Fprintf(&big, "%d,%d\n", i, i)
	}
	registerData(t, "rbbig", big.String())
	tx, err = db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"LOAD DATA LOCAL INFILE 'Reader::rb' INTO TABLE rb FIELDS TERMINATED BY ','",
		"SAVEPOINT s1",
		"LOAD DATA LOCAL INFILE 'Reader::rbbig' INTO TABLE rb FIELDS TERMINATED BY ','",
	} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if n := countTableRows(t, tx, "rb"); n != 2993 {
		t.Fatalf("before ROLLBACK TO: %d rows, want 2993", n)
	}
	if _, err := tx.Exec("ROLLBACK TO SAVEPOINT s1"); err != nil {
		t.Fatal(err)
	}
	if n := countTableRows(t, tx, "rb"); n != 3 {
		t.Fatalf("after ROLLBACK TO: %d rows, want 3", n)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := bulkDump(t, db, "rb"); strings.Join(got, " ") != "1|1 2|2 3|3" {
		t.Fatalf("after COMMIT: %v", got)
	}
	if engine.BulkLoads()-before != 4 {
		t.Fatalf("%d statements took the bulk writer, want 4", engine.BulkLoads()-before)
	}
}

// TestBulkLoadProtectedBounds: a bounds violation deep in a load of a
// protected table is refused by the bulk writer with the per-row path's
// error and leaves no row; analysts cannot load it at all.
func TestBulkLoadProtectedBounds(t *testing.T) {
	defer engine.SetBulkInsertMinBytes(0)()
	n := 50000
	if raceEnabled {
		n = 5000
	}
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 20, 5)
	var csv, ins strings.Builder
	ins.WriteString("INSERT INTO people VALUES ")
	for i := 1; i <= n+10; i++ {
		age := 20 + i%50
		if i == n {
			age = 400
		}
		fmt.Fprintf(&csv, "%d,p%d,%d,%d\n", 1000+i, i, age, i%3)
		if i > 1 {
			ins.WriteString(",")
		}
		fmt.Fprintf(&ins, "(%d,'p%d',%d,%d)", 1000+i, i, age, i%3)
	}
	registerData(t, "people", csv.String())
	load := "LOAD DATA LOCAL INFILE 'Reader::people' INTO TABLE people FIELDS TERMINATED BY ','"
	want := "value 400 of column age is outside its declared bounds [0, 100] for demo.people"
	var errs [2]string
	for i, off := range []bool{true, false} {
		restore := engine.SetBulkLoadOff(off)
		before := engine.BulkLoads()
		for j, q := range []string{load, ins.String()} {
			_, err := root.Exec(q)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("bulk off = %v, statement %d: %v, want %q", off, j, err, want)
			}
			errs[i] += err.Error() + "\n"
			if c := countTableRows(t, root, "people"); c != 20 {
				t.Fatalf("bulk off = %v, statement %d: %d rows after the refusal, want 20", off, j, c)
			}
		}
		if took := engine.BulkLoads() - before; (took == 2) == off {
			t.Fatalf("bulk off = %v: %d statements took the bulk writer", off, took)
		}
		restore()
	}
	if errs[0] != errs[1] {
		t.Fatalf("errors differ:\nper-row %s\nbulk    %s", errs[0], errs[1])
	}
	// Analysts are refused before any row is read, through both forms.
	ana := ts.connect("ana", "ana-pw", "demo")
	registerData(t, "few", "5000,x,30,1\n")
	for _, q := range []string{
		"LOAD DATA LOCAL INFILE 'Reader::few' INTO TABLE people FIELDS TERMINATED BY ','",
		"INSERT INTO people VALUES (5001, 'x', 30, 1), (5002, 'y', 40, 2)",
	} {
		_, err := ana.Exec(q)
		if err == nil || !strings.Contains(err.Error(), "protected") && !strings.Contains(err.Error(), "command denied") {
			t.Fatalf("%s: analyst got %v, want a refusal", short(q), err)
		}
	}
	if c := countTableRows(t, root, "people"); c != 20 {
		t.Fatalf("%d rows after refused analyst loads, want 20", c)
	}
	// Declared bounds hold on good loads: the owner's load goes through.
	registerData(t, "ok", "6000,x,30,1\n6001,y,40,2\n")
	mustExec(t, root, "LOAD DATA LOCAL INFILE 'Reader::ok' INTO TABLE people FIELDS TERMINATED BY ','")
	if c := countTableRows(t, root, "people"); c != 22 {
		t.Fatalf("%d rows after the owner's load, want 22", c)
	}
}
