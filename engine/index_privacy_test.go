package engine_test

import (
	"strings"
	"testing"
)

// Indexes on a protected table give analysts no new path to its rows: index
// lookups and joins are refused like scans, and what information_schema says
// about the indexes holds no row value or row-derived statistic.
func TestIndexesOnProtectedTables(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 60, 10)
	// Statistics gathered while the table was unprotected must not
	// outlive protection.
	mustExec(t, root, "CREATE TABLE demo.later (id INT PRIMARY KEY, age DOUBLE, KEY ia (age))")
	mustExec(t, root, "INSERT INTO demo.later VALUES (1, 31), (2, 47), (3, 58)")
	mustExec(t, root, "ANALYZE TABLE demo.later")
	mustExec(t, root, "CALL dp_bounds('later', 'age', 0, 100)")
	mustExec(t, root, "CALL dp_protect('later', 1, 0)")
	mustExec(t, root, "CREATE INDEX by_age ON people (age)")
	mustExec(t, root, "CREATE UNIQUE INDEX by_name ON people (name)")
	ana := ts.connect("ana", "ana-pw", "demo")
	for _, q := range []string{
		"SELECT id FROM people WHERE age = 33",
		"SELECT id FROM people WHERE age BETWEEN 30 AND 31",
		"SELECT COUNT(*) FROM people WHERE name = 'person7'",
		"SELECT t.tname FROM towns t JOIN people p ON p.age = t.id",
		"SELECT /*+ LOOKUP_JOIN(t,p) */ t.tname FROM towns t JOIN people p ON p.id = t.id",
		"SELECT age FROM people ORDER BY age LIMIT 1",
		"SELECT id FROM later WHERE age > 40",
		"INSERT INTO people (id, name, age, town) VALUES (500, 'person7', 30, 0)",
	} {
		err := wantErr(t, ana, q)
		if strings.Contains(err.Error(), "person") {
			t.Fatalf("%s: error echoes a row value: %v", q, err)
		}
	}
	for _, q := range []string{
		"SELECT CONCAT_WS(',', table_name, index_name, column_name, cardinality) FROM information_schema.statistics WHERE table_schema = 'demo'",
		"SELECT CONCAT_WS(',', table_name, column_name, histogram) FROM information_schema.column_statistics",
	} {
		rows, err := ana.Query(q)
		if err != nil {
			continue // refusing is fine too
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(s, "person") || strings.Contains(s, "later") && strings.Contains(s, "bucket") || strings.Contains(s, "people") && !strings.HasSuffix(s, ",0") {
				t.Errorf("%s: %s", q, s)
			}
			for _, v := range []string{"31", "47", "58"} {
				if strings.Contains(s, v) {
					t.Errorf("%s: %s reveals a row value", q, s)
				}
			}
		}
		rows.Close()
	}
	// The owner's lookups work.
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM people WHERE name = 'person7'"); n != 1 {
		t.Fatalf("owner lookup through the unique index: %v", n)
	}
}

// The store can keep triggers and stored procedures; dpsql refuses them to
// everyone (a trigger would copy protected rows, a procedure would run with
// its definer's rights).
func TestTriggersAndProceduresRefused(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 5, 10)
	for _, q := range []string{
		"CREATE TRIGGER trg AFTER INSERT ON towns FOR EACH ROW SET @x = 1",
		"CREATE PROCEDURE p() SELECT 1",
	} {
		wantErr(t, root, q, "not supported by dpsql")
	}
	wantErr(t, root, "CALL p()", "does not exist")
}
