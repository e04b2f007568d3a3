package engine_test

import (
	"database/sql"
	"strconv"
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

// TestKeysAndIndexesArePublicMetadata: primary keys and the store's
// secondary and unique indexes are listed by SHOW INDEX / SHOW KEYS and
// information_schema STATISTICS, KEY_COLUMN_USAGE and TABLE_CONSTRAINTS for
// protected and unprotected tables, to analysts as to owners: names only,
// with a constant cardinality (never a value or count from the rows).
func TestKeysAndIndexesArePublicMetadata(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 20, 10)
	mustExec(t, root, "CREATE INDEX age_idx ON people (age)")
	mustExec(t, root, "CREATE UNIQUE INDEX name_u ON people (name)")
	mustExec(t, root, "CREATE UNIQUE INDEX tname_u ON towns (tname)")
	mustExec(t, root, "CREATE TABLE demo.pairs (a INT, b INT, v DOUBLE, PRIMARY KEY (a, b))")
	ana := ts.connect("ana", "ana-pw", "demo")
	want := map[string][]string{
		// Key_name:Column_name:Seq:Non_unique per table.
		"people": {"PRIMARY:id:1:0", "age_idx:age:1:1", "name_u:name:1:0"},
		"towns":  {"PRIMARY:id:1:0", "tname_u:tname:1:0"},
		"pairs":  {"PRIMARY:a:1:0", "PRIMARY:b:2:0"},
	}
	for who, db := range map[string]*sql.DB{"owner": root, "analyst": ana} {
		for table, w := range want {
			for _, verb := range []string{"SHOW INDEX FROM ", "SHOW KEYS FROM "} {
				got := queryStrings(t, db, "SELECT CONCAT(index_name, ':', column_name, ':', seq_in_index, ':', non_unique, ':', COALESCE(cardinality, 0)) FROM information_schema.STATISTICS WHERE table_schema = 'demo' AND table_name = '"+table+"' ORDER BY index_name = 'PRIMARY' DESC, index_name, seq_in_index")
				if strings.Join(got, " ") != strings.Join(withZero(w), " ") {
					t.Fatalf("%s: STATISTICS of %s = %v, want %v", who, table, got, withZero(w))
				}
				rows, err := db.Query(verb + table)
				if err != nil {
					t.Fatalf("%s: %s%s: %v", who, verb, table, err)
				}
				var show []string
				for rows.Next() {
					var tbl, key, col string
					var nonUnique, seq, card int
					var collation, subPart, packed, null, typ, comment, icomment, visible, expr any
					if err := rows.Scan(&tbl, &nonUnique, &key, &seq, &col, &collation, &card, &subPart, &packed, &null, &typ, &comment, &icomment, &visible, &expr); err != nil {
						t.Fatal(err)
					}
					if card != 0 {
						t.Fatalf("%s: %s%s cardinality %d: must not describe the rows", who, verb, table, card)
					}
					show = append(show, strings.Join([]string{key, col, itoa(seq), itoa(nonUnique)}, ":"))
				}
				rows.Close()
				if strings.Join(show, " ") != strings.Join(w, " ") {
					t.Fatalf("%s: %s%s = %v, want %v", who, verb, table, show, w)
				}
			}
		}
		cons := queryStrings(t, db, "SELECT CONCAT(table_name, '.', constraint_name, ':', constraint_type) FROM information_schema.TABLE_CONSTRAINTS WHERE table_schema = 'demo' ORDER BY 1")
		if strings.Join(cons, " ") != "pairs.PRIMARY:PRIMARY KEY people.PRIMARY:PRIMARY KEY people.name_u:UNIQUE towns.PRIMARY:PRIMARY KEY towns.tname_u:UNIQUE" {
			t.Fatalf("%s: TABLE_CONSTRAINTS %v", who, cons)
		}
		kcu := queryStrings(t, db, "SELECT CONCAT(table_name, '.', constraint_name, '.', column_name, ':', ordinal_position) FROM information_schema.KEY_COLUMN_USAGE WHERE table_schema = 'demo' ORDER BY 1")
		if strings.Join(kcu, " ") != "pairs.PRIMARY.a:1 pairs.PRIMARY.b:2 people.PRIMARY.id:1 people.name_u.name:1 towns.PRIMARY.id:1 towns.tname_u.tname:1" {
			t.Fatalf("%s: KEY_COLUMN_USAGE %v", who, kcu)
		}
	}
	// Reading the metadata charged nothing and the rows stay refused.
	if s := spent(t, root, "demo.people"); s != 0 {
		t.Fatalf("metadata charged %v", s)
	}
	wantErr(t, ana, "SELECT name FROM people ORDER BY name LIMIT 1", "protected")
}

func withZero(w []string) []string {
	out := make([]string, len(w))
	for i, s := range w {
		out[i] = s + ":0"
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
