package engine_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/catalog"
)

// Dump and restore (issue 13): the statements mysqldump writes for a table
// — DROP TABLE IF EXISTS, the owner's SHOW CREATE TABLE, INSERT of every
// row — replayed into another server keep the table protected, with its
// bounds, budget and ledger. .ci/dump_roundtrip.sh does the same with the
// real mysqldump and mariadb clients.

// dumpTable returns the statements mysqldump would write for demo.<table>,
// read as user.
func dumpTable(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	var name, ddl string
	if err := db.QueryRow("SHOW CREATE TABLE "+table).Scan(&name, &ddl); err != nil {
		t.Fatalf("SHOW CREATE TABLE %s: %v", table, err)
	}
	out := []string{"DROP TABLE IF EXISTS `" + table + "`", ddl}
	rows, err := db.Query("SELECT * FROM " + table + " ORDER BY 1")
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	var vals []string
	for _, raw := range scanAll(t, rows) {
		parts := make([]string, len(raw))
		for i, r := range raw {
			if !r.Valid {
				parts[i] = "NULL"
			} else {
				parts[i] = "'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(r.String) + "'"
			}
		}
		vals = append(vals, "("+strings.Join(parts, ",")+")")
	}
	if len(vals) > 0 {
		out = append(out, "INSERT INTO `"+table+"` VALUES "+strings.Join(vals, ","))
	}
	return out
}

func replay(t *testing.T, db *sql.DB, stmts []string) {
	t.Helper()
	for _, s := range stmts {
		mustExec(t, db, s)
	}
}

func ledgerRows(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	return int(queryFloat(t, db, "SELECT COUNT(*) FROM dp_ledger WHERE table_name = ?", table))
}

func checksum(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	var b strings.Builder
	for _, s := range dumpTable(t, db, table)[2:] {
		b.WriteString(s)
	}
	return b.String()
}

func TestDumpRestoreKeepsProtection(t *testing.T) {
	a := startServer(t, t.TempDir())
	rootA := setupProtected(t, a, 60, 2)
	mustExec(t, rootA, "CALL dp_labels('people', 'town', '0,1,2')")
	anaA := a.connect("ana", "ana-pw", "demo")
	queryFloat(t, anaA, "SELECT DP_MEAN('people', 'age', 0.5)")
	// A released model (public) travels with its training table.
	if err := a.e.Catalog.PutModel(catalog.ModelRecord{Name: "m_people", Kind: "linreg", Table: "demo.people", Epsilon: 0.5, N: 60, Model: json.RawMessage(`{"w":[1.5]}`)}); err != nil {
		t.Fatal(err)
	}
	dump := dumpTable(t, rootA, "people")
	if !strings.Contains(dump[1], "dpsql:v1:") {
		t.Fatalf("the owner's SHOW CREATE TABLE carries no dpsql catalog: %s", dump[1])
	}
	var name, anaDDL string
	if err := anaA.QueryRow("SHOW CREATE TABLE people").Scan(&name, &anaDDL); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(anaDDL, "dpsql:") {
		t.Fatalf("an analyst's SHOW CREATE TABLE shows the dpsql catalog: %s", anaDDL)
	}

	// A fresh server: the restore is protected from its CREATE TABLE on.
	b := startServer(t, t.TempDir())
	mustExec(t, b.connect("root", rootPW, ""), "CREATE DATABASE demo")
	rootB := b.connect("root", rootPW, "demo")
	mustExec(t, rootB, "CREATE USER 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, rootB, "GRANT SELECT, INSERT, CREATE, DROP, EXECUTE ON demo.* TO 'ana'@'%'")
	anaB := b.connect("ana", "ana-pw", "demo")
	wantErr(t, anaB, dump[1], "only data owners may restore it")
	replay(t, rootB, dump[:2])
	wantErr(t, anaB, "SELECT * FROM people", "is protected")
	wantErr(t, anaB, "INSERT INTO people VALUES (999, 'x', 1, 0)", "protected")
	replay(t, rootB, dump[2:])
	wantErr(t, anaB, "SELECT COUNT(*) FROM people", "protected")
	if got, want := checksum(t, rootB, "people"), checksum(t, rootA, "people"); got != want {
		t.Fatal("restored rows differ from the dumped ones")
	}
	if s := spent(t, rootB, "demo.people"); math.Abs(s-0.5) > 1e-12 {
		t.Fatalf("restored spent ε = %v, want 0.5", s)
	}
	if n := ledgerRows(t, rootB, "demo.people"); n != 1 {
		t.Fatalf("restored ledger rows = %d, want 1", n)
	}
	cols := func(db *sql.DB) string {
		rows := queryStrings(t, db, "SELECT CONCAT(column_name, ':', COALESCE(lower_bound, ''), ':', COALESCE(upper_bound, ''), ':', COALESCE(labels, '')) FROM dp_columns WHERE table_name = 'demo.people'")
		return strings.Join(rows, ";")
	}
	if got, want := cols(rootB), cols(rootA); got != want || want == "" {
		t.Fatalf("restored catalog %q, want %q", got, want)
	}
	if m, err := b.e.Catalog.Model("demo", "m_people"); err != nil || string(m.Model) != `{"w":[1.5]}` || m.Table != "demo.people" {
		t.Fatalf("restored model %+v, %v", m, err)
	}
	// The restored budget is enforced: 2 − 0.5 remain.
	wantErr(t, anaB, "SELECT DP_MEAN('people', 'age', 1.6)", "privacy budget exceeded")
	queryFloat(t, anaB, "SELECT DP_MEAN('people', 'age', 0.25)")

	// Restoring the same (older) dump again lowers nothing: B keeps its
	// own later release, and the dumped one is not counted twice.
	replay(t, rootB, dump)
	if s := spent(t, rootB, "demo.people"); math.Abs(s-0.75) > 1e-12 {
		t.Fatalf("spent after re-restoring an older dump = %v, want 0.75", s)
	}
	if n := ledgerRows(t, rootB, "demo.people"); n != 2 {
		t.Fatalf("ledger rows after re-restoring = %d, want 2", n)
	}
	wantErr(t, anaB, "SELECT * FROM people", "is protected")

	// A dump of B restored into A: the histories share the first release
	// and each has one more; the merge counts all three once.
	queryFloat(t, anaA, "SELECT DP_MEAN('people', 'age', 0.125)")
	replay(t, rootA, dumpTable(t, rootB, "people"))
	if s := spent(t, rootA, "demo.people"); math.Abs(s-0.875) > 1e-12 {
		t.Fatalf("spent after merging divergent histories = %v, want 0.875", s)
	}
	if n := ledgerRows(t, rootA, "demo.people"); n != 3 {
		t.Fatalf("ledger rows after merging = %d, want 3", n)
	}
}

func TestDumpRestoreRefusals(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 10, 1)
	dump := dumpTable(t, root, "people")

	// An unreadable catalog never creates an unprotected table.
	bad := strings.Replace(dump[1], "dpsql:v1:{", "dpsql:v1:{\"x\":", 1)
	mustExec(t, root, "DROP TABLE people")
	wantErr(t, root, bad, "unreadable")
	wantErr(t, root, "SELECT * FROM people", "not found")

	// A table name with a budget account is created protected, and only by
	// an owner, even without the catalog in its comment.
	ana := ts.connect("ana", "ana-pw", "demo")
	wantErr(t, ana, "CREATE TABLE people (id INT PRIMARY KEY, age DOUBLE)", "only data owners may create it")
	mustExec(t, ana, "CREATE TABLE mine (id INT PRIMARY KEY, age DOUBLE)")
	wantErr(t, ana, "RENAME TABLE mine TO people", "only data owners may create it")
	wantErr(t, ana, "ALTER TABLE mine RENAME TO people", "only data owners may create it")
	mustExec(t, root, "RENAME TABLE mine TO people")
	wantErr(t, ana, "SELECT * FROM people", "is protected")
	mustExec(t, root, "DROP TABLE people")
	mustExec(t, root, "CREATE TABLE people (id INT PRIMARY KEY, age DOUBLE)")
	wantErr(t, ana, "SELECT * FROM people", "is protected")

	// The placeholders mysqldump writes for the dpsql views are no-ops.
	mustExec(t, root, "DROP TABLE IF EXISTS dp_budget")
	mustExec(t, root, "DROP TABLE IF EXISTS towns, dp_ledger")
	wantErr(t, root, "SELECT * FROM towns", "not found")
	mustExec(t, root, "CREATE TABLE `dp_owners` (`user` text)")
	mustExec(t, root, "DROP VIEW IF EXISTS dp_models")
	wantErr(t, root, "CREATE TABLE dp_owners (x INT)", "reserved")
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM dp_owners"); n != 1 {
		t.Fatalf("dp_owners has %v rows after the placeholders, want 1", n)
	}

	// mysqldump of the mysql database asks for the server logs' structure.
	var name, ddl string
	sys := ts.connect("root", rootPW, "mysql")
	for _, tbl := range []string{"general_log", "slow_log"} {
		if err := sys.QueryRow("SHOW CREATE TABLE "+tbl).Scan(&name, &ddl); err != nil || !strings.HasPrefix(ddl, "CREATE TABLE `"+tbl+"`") {
			t.Fatalf("SHOW CREATE TABLE mysql.%s = %q, %v", tbl, ddl, err)
		}
	}
	if err := root.QueryRow("SHOW CREATE TABLE mysql.general_log").Scan(&name, &ddl); err != nil {
		t.Fatal(err)
	}
	wantErr(t, root, "SHOW CREATE TABLE general_log", "not found")
}

// TestDumpCommentEscaping: label values with quotes and backslashes, and a
// comment of the owner's own, survive the round trip through SQL text.
func TestDumpCommentEscaping(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE demo")
	root := ts.connect("root", rootPW, "demo")
	mustExec(t, root, `CREATE TABLE odd (id INT PRIMARY KEY, tag VARCHAR(32)) COMMENT='it''s mine'`)
	mustExec(t, root, `INSERT INTO odd VALUES (1, 'a''b'), (2, 'c\\d'), (3, 'e"f')`)
	mustExec(t, root, `CALL dp_labels('odd', 'tag', 'a''b,c\\d,e"f')`)
	mustExec(t, root, "CALL dp_protect('odd', 1, 0)")
	before := queryStrings(t, root, "SELECT labels FROM dp_columns WHERE table_name = 'demo.odd'")
	dump := dumpTable(t, root, "odd")
	replay(t, root, dump)
	after := queryStrings(t, root, "SELECT labels FROM dp_columns WHERE table_name = 'demo.odd'")
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("labels after restore %v, want %v", after, before)
	}
	var name, ddl string
	if err := root.QueryRow("SHOW CREATE TABLE odd").Scan(&name, &ddl); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ddl, "COMMENT='it''s mine dpsql:v1:") {
		t.Fatalf("the owner's comment is not kept before the catalog: %s", ddl)
	}
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM odd"); n != 3 {
		t.Fatalf("rows after restore = %v, want 3", n)
	}
}
