package engine_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestAnalystCannotReadProtectedRows tries every SQL path we know of.
func TestAnalystCannotReadProtectedRows(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 50, 10)
	ana := ts.connect("ana", "ana-pw", "demo")

	// The owner reads normally.
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM people"); n != 50 {
		t.Fatalf("owner count = %v, want 50", n)
	}
	mustExec(t, root, "CREATE VIEW owner_view AS SELECT * FROM people")

	attacks := []string{
		"SELECT * FROM people",
		"SELECT age FROM demo.people WHERE id = 1",
		"SELECT AVG(age) FROM people",
		"SELECT COUNT(*) FROM people WHERE age > 40",
		"SELECT MAX(age), MIN(age) FROM people",
		"SELECT t.tname, p.age FROM towns t JOIN people p ON p.town = t.id",
		"SELECT * FROM towns WHERE id IN (SELECT town FROM people WHERE age > 60)",
		"SELECT EXISTS (SELECT 1 FROM people WHERE age = 33)",
		"SELECT (SELECT age FROM people LIMIT 1)",
		"SELECT tname FROM towns UNION SELECT name FROM people",
		"SELECT * FROM (SELECT * FROM people) AS sub",
		"WITH c AS (SELECT * FROM people) SELECT * FROM c",
		"CREATE TABLE stolen AS SELECT * FROM people",
		"INSERT INTO towns SELECT id + 100, name FROM people",
		"CREATE VIEW v AS SELECT * FROM people",
		"SELECT * FROM owner_view",
		"EXPLAIN SELECT * FROM people",
		"ANALYZE TABLE people",
		"UPDATE people SET age = 1 WHERE age > 50",
		"DELETE FROM people WHERE age > 50",
		"INSERT INTO people VALUES (1, 'dup', 30, 0)",
		"INSERT INTO people VALUES (1000, 'x', 30, 0)",
		"REPLACE INTO people VALUES (1, 'x', 30, 0)",
		"TRUNCATE TABLE people",
		"DROP TABLE people",
		"ALTER TABLE people ADD COLUMN z INT",
		"RENAME TABLE people TO people2",
		"CREATE TRIGGER trg AFTER INSERT ON people FOR EACH ROW INSERT INTO towns VALUES (NEW.id + 500, NEW.name)",
		"SELECT * FROM people INTO OUTFILE '/tmp/x'",
		"SELECT DP_PREDICT('nomodel', age) FROM people",
	}
	for _, q := range attacks {
		err := wantErr(t, ana, q)
		// No error may echo a row value (names are person<i>, ages 20..69).
		if strings.Contains(err.Error(), "person") {
			t.Fatalf("%s: error echoes a row value: %v", q, err)
		}
	}

	// Prepared statements go through the same checks.
	if _, err := ana.Prepare("SELECT age FROM people WHERE id = ?"); err == nil {
		var age float64
		if err := ana.QueryRow("SELECT age FROM people WHERE id = ?", 3).Scan(&age); err == nil {
			t.Fatalf("prepared statement read a protected value: %v", age)
		}
	}

	// information_schema: schema and row count are public, sizes are not.
	var rowsN, dataLen, avgLen any
	if err := ana.QueryRow("SELECT TABLE_ROWS, DATA_LENGTH, AVG_ROW_LENGTH FROM information_schema.tables WHERE table_schema = 'demo' AND table_name = 'people'").Scan(&rowsN, &dataLen, &avgLen); err != nil {
		t.Fatalf("information_schema.tables: %v", err)
	}
	for _, v := range []any{dataLen, avgLen} {
		if s := asString(v); s != "" && s != "0" {
			t.Fatalf("information_schema exposes a data-dependent size: %v", v)
		}
	}
	if asString(rowsN) != "50" {
		t.Fatalf("TABLE_ROWS = %v, want the public row count 50", rowsN)
	}
	rows, err := ana.Query("SHOW TABLE STATUS")
	if err == nil {
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, c := range cols {
				if (c == "Data_length" || c == "Avg_row_length" || c == "Index_length") && asString(vals[i]) != "0" && vals[i] != nil {
					t.Fatalf("SHOW TABLE STATUS %s = %v", c, asString(vals[i]))
				}
			}
		}
		rows.Close()
	}
	if n := queryFloat(t, ana, "SELECT COUNT(*) FROM information_schema.column_statistics"); n != 0 {
		t.Fatalf("column statistics visible: %v rows", n)
	}

	// The owner's data is intact and nothing was charged.
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM people"); n != 50 {
		t.Fatalf("owner count after attacks = %v, want 50", n)
	}
	if s := spent(t, ana, "demo.people"); s != 0 {
		t.Fatalf("attacks charged budget: %v", s)
	}
}

func asString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}
