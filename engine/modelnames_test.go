package engine_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// modelNamesDBs creates databases a and b, each with a protected table t
// (n rows: x in [0, 10], label y = x + 1 in [0, 12]) and a public table pub
// of the same columns, and accounts ana (SELECT, EXECUTE on a.* and b.*)
// and onlya (on a.* only).
func modelNamesDBs(t *testing.T, ts *testServer) *sql.DB {
	t.Helper()
	root := ts.connect("root", rootPW, "")
	for db, n := range map[string]int{"a": 300, "b": 500} {
		mustExec(t, root, "CREATE DATABASE "+db)
		var rows []string
		for i := 0; i < n; i++ {
			x := float64(i%100) / 10
			rows = append(rows, fmt.Sprintf("(%d, %v, %v)", i, x, x+1))
		}
		for _, tb := range []string{"t", "pub"} {
			mustExec(t, root, fmt.Sprintf("CREATE TABLE %s.%s (id INT PRIMARY KEY, x DOUBLE, y DOUBLE)", db, tb))
			mustExec(t, root, fmt.Sprintf("INSERT INTO %s.%s VALUES %s", db, tb, strings.Join(rows, ",")))
		}
		mustExec(t, root, fmt.Sprintf("CALL dp_bounds('%s.t', 'x', 0, 10)", db))
		mustExec(t, root, fmt.Sprintf("CALL dp_bounds('%s.t', 'y', 0, 12)", db))
		mustExec(t, root, fmt.Sprintf("CALL dp_protect('%s.t', 10, 1e-5)", db))
	}
	mustExec(t, root, "CREATE USER ana IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON a.* TO ana")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON b.* TO ana")
	mustExec(t, root, "CREATE USER onlya IDENTIFIED BY 'pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON a.* TO onlya")
	return root
}

// modelN is the training n DP_MODEL_JSON reports for model (and its db):
// the two databases' tables differ in n, so it says which model answered.
func modelN(t *testing.T, q interface {
	QueryRow(string, ...any) *sql.Row
}, model string) (int, string) {
	t.Helper()
	var js string
	if err := q.QueryRow("SELECT DP_MODEL_JSON(?)", model).Scan(&js); err != nil {
		t.Fatalf("DP_MODEL_JSON(%s): %v", model, err)
	}
	var doc struct {
		N  int    `json:"n"`
		DB string `json:"db"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.N, doc.DB
}

// TestModelNamesPerDatabase: a model belongs to the database of its
// training table. Two databases both train m; a bare name resolves in the
// session's database (USE switches it), db.m works from anywhere, no
// database means an error; name-taken checks are per database and charge
// nothing; visibility holds across databases; dropping one m leaves the
// other; dp_models shows db; models survive a restart and a dump moves a
// model with its table.
func TestModelNamesPerDatabase(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := modelNamesDBs(t, ts)
	anaA, anaB := ts.connect("ana", "ana-pw", "a"), ts.connect("ana", "ana-pw", "b")
	anaNone := ts.connect("ana", "ana-pw", "")

	// Both databases train m; default names are per database too.
	for _, c := range []*sql.DB{anaA, anaB} {
		if m := queryString(t, c, "SELECT DP_TRAIN('t', 1, 'linreg', 'label=y; model=m')"); m != "m" {
			t.Fatalf("model name %q", m)
		}
		if m := queryString(t, c, "SELECT DP_TRAIN('t', 1, 'linreg', 'label=y')"); m != "linreg_t_1" {
			t.Fatalf("default model name %q, want linreg_t_1 in each database", m)
		}
	}
	// Taken in a (any case), refused before charging; model= may name
	// only the training table's database.
	for _, c := range []struct {
		db *sql.DB
		q  string
	}{
		{anaA, "SELECT DP_TRAIN('t', 1, 'linreg', 'label=y; model=M')"},
		{anaB, "SELECT DP_TRAIN('a.t', 1, 'linreg', 'label=y; model=a.m')"},
	} {
		q := c.q
		before := spent(t, anaA, "a.t")
		wantErr(t, c.db, q, `model name "`, "already taken in database a")
		if s := spent(t, anaA, "a.t"); s != before {
			t.Fatalf("%s: refused name charged %v", q, s-before)
		}
	}
	before := spent(t, anaA, "a.t")
	wantErr(t, anaA, "SELECT DP_TRAIN('t', 1, 'linreg', 'label=y; model=b.x')", "belongs to the database of its training table (a)")
	if s := spent(t, anaA, "a.t"); s != before {
		t.Fatal("a model= in another database charged")
	}

	// Bare names resolve in the session's database, qualified anywhere.
	for _, c := range []struct {
		db    *sql.DB
		model string
		n     int
		in    string
	}{{anaA, "m", 300, "a"}, {anaB, "m", 500, "b"}, {anaA, "b.m", 500, "b"}, {anaB, "A.M", 300, "a"}, {anaNone, "a.m", 300, "a"}, {anaNone, "`b`.`m`", 500, "b"}} {
		if n, db := modelN(t, c.db, c.model); n != c.n || db != c.in {
			t.Fatalf("DP_MODEL_JSON(%s) from its session: n=%d db=%s, want %d, %s", c.model, n, db, c.n, c.in)
		}
	}
	// USE switches the database bare names resolve in, on one session.
	conn, err := anaNone.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	row := func(q string, args ...any) *sql.Row { return conn.QueryRowContext(context.Background(), q, args...) }
	for _, step := range []struct {
		db string
		n  int
	}{{"a", 300}, {"b", 500}, {"a", 300}} {
		if _, err := conn.ExecContext(context.Background(), "USE "+step.db); err != nil {
			t.Fatal(err)
		}
		if n, _ := modelN(t, rowQuerier(row), "m"); n != step.n {
			t.Fatalf("after USE %s, m has n=%d, want %d", step.db, n, step.n)
		}
	}
	// No current database: a bare name is an error that says so.
	for _, q := range []string{
		"SELECT DP_MODEL_JSON('m')",
		"SELECT DP_PREDICT('m', 1.5)",
		"SELECT DP_EVALUATE('m', 'a.pub', 1)",
		"CALL dp_drop_model('m')",
	} {
		c := anaNone
		if strings.HasPrefix(q, "CALL") {
			c = ts.connect("root", rootPW, "")
		}
		wantErr(t, c, q, "no database selected", "'<db>.<model>'")
	}

	// DP_PREDICT and DP_EVALUATE (public test table: exact, no charge)
	// with bare and qualified names.
	for _, c := range []struct {
		db    *sql.DB
		q     string
		table string
	}{
		{anaA, "SELECT COUNT(DP_PREDICT('m', x)) FROM pub", "a.t"},
		{anaNone, "SELECT COUNT(DP_PREDICT('b.m', x)) FROM b.pub", "b.t"},
		{anaA, "SELECT COUNT(DP_PREDICT('b.m', x)) FROM pub", "b.t"},
	} {
		if n := queryFloat(t, c.db, c.q); n < 300 {
			t.Fatalf("%s: %v predictions", c.q, n)
		}
	}
	spentB := spent(t, anaB, "b.t")
	for _, c := range []struct {
		db *sql.DB
		q  string
	}{{anaB, "SELECT DP_EVALUATE('m', 'pub', 1)"}, {anaA, "SELECT DP_EVALUATE('b.m', 'b.pub', 1)"}} {
		// y = x + 1 exactly: a linreg at ε = 1 on 500 rows is close.
		if rmse := queryFloat(t, c.db, c.q); !(rmse >= 0 && rmse < 3) {
			t.Fatalf("%s: RMSE %v", c.q, rmse)
		}
	}
	if s := spent(t, anaB, "b.t"); s != spentB {
		t.Fatal("DP_EVALUATE on a public table charged the training table")
	}

	// The views show the database; each database's view its own models.
	if got := strings.Join(queryStrings(t, anaA, "SELECT CONCAT(name, '|', db, '|', n, '|', table_name) FROM dp_models ORDER BY name"), ";"); got != "linreg_t_1|a|300|a.t;m|a|300|a.t" {
		t.Fatalf("a.dp_models: %s", got)
	}
	if got := strings.Join(queryStrings(t, root, "SELECT CONCAT(db, '.', name) FROM dpsql.dp_models WHERE name = 'm' ORDER BY db"), ";"); got != "a.m;b.m" {
		t.Fatalf("dpsql.dp_models: %s", got)
	}

	// Visibility across databases: for onlya, b.m is exactly a missing
	// model, by every function; a.m works; and b's models are not listed.
	onlyA := ts.connect("onlya", "pw", "a")
	if n, _ := modelN(t, onlyA, "m"); n != 300 {
		t.Fatalf("onlya: m has n=%d", n)
	}
	for _, pair := range [][2]string{
		{"SELECT DP_MODEL_JSON('b.m')", "SELECT DP_MODEL_JSON('b.nosuch')"},
		{"SELECT DP_PREDICT('b.m', x) FROM pub", "SELECT DP_PREDICT('b.nosuch', x) FROM pub"},
		{"SELECT DP_EVALUATE('b.m', 'pub', 0.5)", "SELECT DP_EVALUATE('b.nosuch', 'pub', 0.5)"},
	} {
		e1, e2 := queryErr(onlyA, pair[0]), queryErr(onlyA, pair[1])
		if e1 == nil || e2 == nil {
			t.Fatalf("onlya: %s → %v; %s → %v", pair[0], e1, pair[1], e2)
		}
		if a, b := strings.ReplaceAll(e1.Error(), "b.m", "X"), strings.ReplaceAll(e2.Error(), "b.nosuch", "X"); a != b || !strings.Contains(a, "does not exist") {
			t.Fatalf("onlya: a model of b answers unlike a missing one:\n  %s\n  %s", e1, e2)
		}
	}
	if n := queryFloat(t, onlyA, "SELECT COUNT(*) FROM dp_models WHERE db <> 'a'"); n != 0 {
		t.Fatalf("onlya's dp_models lists %v models of b", n)
	}

	// Drop in one database leaves the other; the name is free again there.
	rootA := ts.connect("root", rootPW, "a")
	mustExec(t, rootA, "CALL dp_drop_model('m')")
	wantErr(t, anaA, "SELECT DP_MODEL_JSON('m')", `model "a.m" does not exist`)
	if n, _ := modelN(t, anaB, "m"); n != 500 {
		t.Fatalf("b.m after dropping a.m: n=%d", n)
	}
	wantErr(t, rootA, "CALL dp_drop_model('m')", "not found")
	if m := queryString(t, anaA, "SELECT DP_TRAIN('t', 1, 'linreg', 'label=y; model=m')"); m != "m" {
		t.Fatalf("retrained name %q", m)
	}
	mustExec(t, rootA, "CALL dp_drop_model('b.linreg_t_1')")
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_models WHERE name = 'linreg_t_1'"); n != 1 {
		t.Fatalf("%v linreg_t_1 left after dropping b's", n)
	}

	// A restart keeps both m, each in its database.
	dir := ts.dir
	ts.stop()
	ts = startServer(t, dir)
	for db, want := range map[string]int{"a": 300, "b": 500} {
		if n, in := modelN(t, ts.connect("ana", "ana-pw", db), "m"); n != want || in != db {
			t.Fatalf("after restart, %s.m: n=%d db=%s", db, n, in)
		}
	}

	// A dump of a.t restored into database c brings its models into c.
	rootA = ts.connect("root", rootPW, "a")
	dump := dumpTable(t, rootA, "t")
	mustExec(t, rootA, "CREATE DATABASE c")
	replay(t, ts.connect("root", rootPW, "c"), dump)
	if got := strings.Join(queryStrings(t, ts.connect("root", rootPW, "c"), "SELECT CONCAT(db, '.', name, '|', table_name) FROM dp_models ORDER BY name"), ";"); got != "c.linreg_t_1|c.t;c.m|c.t" {
		t.Fatalf("models restored into c: %s", got)
	}
	if n, in := modelN(t, ts.connect("root", rootPW, "a"), "m"); n != 300 || in != "a" {
		t.Fatalf("a.m after restoring into c: n=%d db=%s", n, in)
	}
	if math.IsNaN(spent(t, ts.connect("root", rootPW, "c"), "c.t")) {
		t.Fatal("no budget restored for c.t")
	}
}

// rowQuerier adapts a QueryRow function (one session's) to modelN.
type rowQuerier func(string, ...any) *sql.Row

func (f rowQuerier) QueryRow(q string, args ...any) *sql.Row { return f(q, args...) }
