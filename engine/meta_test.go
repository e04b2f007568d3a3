package engine_test

import (
	"database/sql"
	"strings"
	"testing"
)

// TestAnalystSeesPublicMetadata: the schema, keys and row count of a
// protected table are public; BI tools need them (issue 12).
func TestAnalystSeesPublicMetadata(t *testing.T) {
	ts := startServer(t, t.TempDir())
	setupProtected(t, ts, 20, 10)
	ana := ts.connect("ana", "ana-pw", "demo")

	var name, ddl string
	if err := ana.QueryRow("SHOW CREATE TABLE people").Scan(&name, &ddl); err != nil {
		t.Fatalf("SHOW CREATE TABLE: %v", err)
	}
	if !strings.Contains(ddl, "PRIMARY KEY (`id`)") || !strings.Contains(ddl, "`age` double") {
		t.Fatalf("SHOW CREATE TABLE people = %s", ddl)
	}
	for _, q := range []string{"SHOW FULL COLUMNS FROM people", "SHOW COLUMNS FROM demo.people", "DESCRIBE people"} {
		if cols := countRows(t, ana, q); cols != 4 {
			t.Fatalf("%s: %d rows, want 4", q, cols)
		}
	}
	countRows(t, ana, "SHOW INDEX FROM people")
	if n := countRows(t, ana, "SHOW TABLE STATUS LIKE 'people'"); n != 1 {
		t.Fatalf("SHOW TABLE STATUS: %d rows", n)
	}
	// Statements that provably read no rows answer empty, with columns.
	for _, q := range []string{
		"SELECT TRUE AS _ FROM demo.people WHERE 1 <> 1 LIMIT 0", // Metabase's read probe
		"SELECT * FROM people LIMIT 0",                           // COM_FIELD_LIST
		"SELECT * FROM people WHERE 1 = 0",
		"SELECT p.age FROM people p JOIN towns t ON p.town = t.id WHERE NULL",
	} {
		rows, err := ana.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n != 0 || len(cols) == 0 {
			t.Fatalf("%s: %d rows, columns %v", q, n, cols)
		}
	}
	// Not provably empty: still refused.
	for _, q := range []string{
		"SELECT * FROM people WHERE 1 = 1",
		"SELECT * FROM people WHERE age > 1000",
		"SELECT * FROM people LIMIT 1",
		"SELECT * FROM people WHERE @x = 1",
	} {
		wantErr(t, ana, q, "protected")
	}
	// Own grants: allowed; another account's: refused.
	if n := countRows(t, ana, "SHOW GRANTS FOR CURRENT_USER()"); n < 1 {
		t.Fatal("SHOW GRANTS FOR CURRENT_USER() returned nothing")
	}
	countRows(t, ana, "SHOW GRANTS")
	wantErr(t, ana, "SHOW GRANTS FOR root", "another account")

	// One identity.
	var comment, version, port string
	if err := ana.QueryRow("SELECT @@version_comment, VERSION(), @@port").Scan(&comment, &version, &port); err != nil {
		t.Fatal(err)
	}
	if comment != "dpsql" || !strings.HasSuffix(version, "-dpsql") || !strings.HasSuffix(ts.srv.Addr(), ":"+port) {
		t.Fatalf("identity: comment %q version %q port %q (listening on %s)", comment, version, port, ts.srv.Addr())
	}
	// dp_* views are views.
	rows, err := ana.Query("SHOW FULL TABLES")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for rows.Next() {
		var n, ty string
		if err := rows.Scan(&n, &ty); err != nil {
			t.Fatal(err)
		}
		types[n] = ty
	}
	rows.Close()
	if types["dp_budget"] != "VIEW" || types["people"] != "BASE TABLE" {
		t.Fatalf("SHOW FULL TABLES: %v", types)
	}
}

func countRows(t testing.TB, db *sql.DB, q string) int {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}
