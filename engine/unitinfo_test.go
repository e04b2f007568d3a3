package engine_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestUnitTableStatisticsHidden (issue 27): the row count of a table of a
// privacy unit is not public (add/remove one person: docs/privacy/units.md
// §2). Two databases hold the same unit (people ← visits) with 2 and 3
// persons of one visit each; every statistic an analyst can read about
// them — information_schema.tables, SHOW TABLE STATUS, SHOW INDEX,
// information_schema.statistics, SHOW CREATE TABLE, EXPLAIN, COUNT(*)
// without a budget — gives the same answer for both, while the owner sees
// the exact counts. A row-level protected table keeps its public count.
func TestUnitTableStatisticsHidden(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := ts.connect("root", rootPW, "")
	mustExec(t, root, "CREATE USER 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	for _, n := range []int{2, 3} {
		db := fmt.Sprintf("u%d", n)
		mustExec(t, root, "CREATE DATABASE "+db)
		mustExec(t, root, "CREATE TABLE "+db+".people (id INT PRIMARY KEY AUTO_INCREMENT, age DOUBLE, KEY (age))")
		mustExec(t, root, "CREATE TABLE "+db+".visits (id INT PRIMARY KEY AUTO_INCREMENT, person_id INT, FOREIGN KEY (person_id) REFERENCES "+db+".people(id))")
		mustExec(t, root, "CREATE TABLE "+db+".rowlevel (id INT PRIMARY KEY, x DOUBLE)")
		for i := 1; i <= n; i++ {
			mustExec(t, root, fmt.Sprintf("INSERT INTO %s.people (age) VALUES (%d)", db, 20+i))
			mustExec(t, root, fmt.Sprintf("INSERT INTO %s.visits (person_id) VALUES (%d)", db, i))
			mustExec(t, root, fmt.Sprintf("INSERT INTO %s.rowlevel VALUES (%d, 1)", db, i))
		}
		owner := ts.connect("root", rootPW, db)
		mustExec(t, owner, "CALL dp_privacy_unit('people', 'id', 'person')")
		mustExec(t, owner, "CALL dp_protect('people', 5, 1e-6)")
		mustExec(t, owner, "CALL dp_protect('rowlevel', 5, 1e-6)")
		mustExec(t, root, "GRANT SELECT, EXECUTE ON "+db+".* TO 'ana'@'%'")
	}
	ana := ts.connect("ana", "ana-pw", "")

	// render gives a statement's rows (or its error) with the database name
	// replaced, so that u2 and u3 compare equal iff nothing else differs.
	render := func(who string, q, db string) string {
		c := ana
		if who == "root" {
			c = root
		}
		rows, err := c.Query(strings.ReplaceAll(q, "DB", db))
		if err != nil {
			return "error: " + strings.ReplaceAll(err.Error(), db, "DB")
		}
		defer rows.Close()
		return strings.ReplaceAll(strings.Join(rowStrings(t, rows), "\n"), db, "DB")
	}
	stmts := []string{
		"SELECT TABLE_NAME, TABLE_ROWS, AVG_ROW_LENGTH, DATA_LENGTH, INDEX_LENGTH, DATA_FREE, AUTO_INCREMENT FROM information_schema.tables WHERE table_schema = 'DB' AND table_name IN ('people', 'visits') ORDER BY 1",
		"SHOW TABLE STATUS FROM DB WHERE Name IN ('people', 'visits')",
		"SHOW INDEX FROM people FROM DB",
		"SHOW INDEX FROM visits FROM DB",
		"SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME, CARDINALITY FROM information_schema.statistics WHERE table_schema = 'DB' AND table_name IN ('people', 'visits') ORDER BY 1, 2, 3",
		"SHOW CREATE TABLE DB.people",
		"SHOW CREATE TABLE DB.visits",
		"EXPLAIN SELECT COUNT(*) FROM DB.visits",
		"EXPLAIN SELECT * FROM DB.people WHERE age > 0",
		"SELECT COUNT(*) FROM DB.visits",
	}
	for _, q := range stmts {
		a2, a3 := render("ana", q, "u2"), render("ana", q, "u3")
		if a2 != a3 {
			t.Errorf("analyst, %s: the answer depends on the row count:\n2 rows: %s\n3 rows: %s", q, a2, a3)
		}
	}
	// The check above must be able to fail: the owner sees the counts.
	for _, n := range []int{2, 3} {
		db := fmt.Sprintf("u%d", n)
		for _, tbl := range []string{"people", "visits"} {
			want := fmt.Sprint(n)
			if got := queryString(t, root, "SELECT TABLE_ROWS FROM information_schema.tables WHERE table_schema = ? AND table_name = ?", db, tbl); got != want {
				t.Errorf("owner: TABLE_ROWS of %s.%s = %s, want %s", db, tbl, got, want)
			}
			st := render("root", "SHOW TABLE STATUS FROM DB LIKE '"+tbl+"'", db)
			if f := strings.Split(st, "|"); len(f) < 5 || f[4] != want {
				t.Errorf("owner: SHOW TABLE STATUS of %s.%s = %s, want Rows %s", db, tbl, st, want)
			}
		}
		// Row-level protected: replace-one neighbours keep n public.
		if got := queryString(t, ana, "SELECT TABLE_ROWS FROM information_schema.tables WHERE table_schema = ? AND table_name = 'rowlevel'", db); got != fmt.Sprint(n) {
			t.Errorf("analyst: TABLE_ROWS of row-level %s.rowlevel = %s, want the public %d", db, got, n)
		}
	}
	if got := render("ana", "SELECT TABLE_ROWS FROM information_schema.tables WHERE table_schema = 'DB' AND table_name = 'visits'", "u3"); got != "0" {
		t.Errorf("analyst: TABLE_ROWS of a unit table = %s, want 0", got)
	}
}
