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

// aggSession is one connection (session variables are per session).
func aggSession(t *testing.T, ts *testServer, eps float64) *sql.Conn {
	t.Helper()
	conn, err := ts.connect("ana", "ana-pw", "demo").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if eps > 0 {
		if _, err := conn.ExecContext(context.Background(), "SET SESSION dp_epsilon = ?", eps); err != nil {
			t.Fatalf("SET dp_epsilon: %v", err)
		}
	}
	return conn
}

func ledgerTotal(t *testing.T, root *sql.DB) int {
	t.Helper()
	return int(queryFloat(t, root, "SELECT COUNT(*) FROM dp_ledger"))
}

// querier is a connection or a pool.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryRows(t *testing.T, c querier, q string) [][]string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	return stringRows(t, rows)
}

// stringRows reads the remaining rows, NULL as "".
func stringRows(t *testing.T, rows *sql.Rows) [][]string {
	t.Helper()
	var out [][]string
	for _, vals := range scanAll(t, rows) {
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	return out
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return f
}

// TestDPGroupBy: an analyst's GROUP BY over a declared domain is answered
// with DP, charged once, with the noise scales in SHOW WARNINGS.
func TestDPGroupBy(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 3000, 100)
	mustExec(t, root, "CALL dp_labels('people', 'town', '0,1,2')")
	ctx := context.Background()

	// No budget for the query: refused, with what to do.
	none := aggSession(t, ts, 0)
	if _, err := none.QueryContext(ctx, "SELECT COUNT(*) FROM people"); err == nil || !strings.Contains(err.Error(), "dp_epsilon") {
		t.Fatalf("aggregate without dp_epsilon: %v", err)
	}
	c := aggSession(t, ts, 3)
	before := ledgerTotal(t, root)
	rows := queryRows(t, c, "SELECT town, COUNT(*) AS n, AVG(age) AS a, SUM(age) AS s FROM people GROUP BY town ORDER BY town")
	if len(rows) != 3 {
		t.Fatalf("rows %v", rows)
	}
	for i, r := range rows {
		// 1000 rows per town; ages 20..69, mean ≈ 44.5 (exact per town below).
		if r[0] != []string{"0", "1", "2"}[i] {
			t.Fatalf("group order %v", rows)
		}
		n, a, s := atof(t, r[1]), atof(t, r[2]), atof(t, r[3])
		if math.Abs(n-1000) > 60 || math.Abs(a-44.5) > 3 || math.Abs(s-44500) > 5000 {
			t.Fatalf("town %s: n %v avg %v sum %v", r[0], n, a, s)
		}
	}
	if got := ledgerTotal(t, root); got != before+1 {
		t.Fatalf("ledger entries %d → %d, want one more", before, got)
	}
	if s := spent(t, root, "demo.people"); math.Abs(s-3) > 1e-9 {
		t.Fatalf("spent %v, want 3", s)
	}
	warn := queryRows(t, c, "SHOW WARNINGS")
	if all := fmt.Sprint(warn); len(warn) != 2 || !strings.Contains(all, "COUNT(*) has Laplace noise of scale 1.33333") || !strings.Contains(all, "SUM/AVG(age)") {
		t.Fatalf("warnings %v", warn)
	}

	// WHERE, HAVING, LIMIT, a global aggregate and BI wrappers.
	for _, q := range []string{
		"SELECT town, COUNT(*) FROM people WHERE age > 30 AND name LIKE 'person%' GROUP BY town HAVING COUNT(*) > 0 ORDER BY 2 DESC LIMIT 2",
		"SELECT COUNT(*), AVG(age) FROM people",
		"SELECT * FROM (SELECT town, SUM(age) AS s FROM people WHERE town <> 2 GROUP BY town) AS virtual_table LIMIT 1000",
	} {
		before := ledgerTotal(t, root)
		if r := queryRows(t, c, q); len(r) == 0 {
			t.Fatalf("%s: no rows", q)
		}
		if got := ledgerTotal(t, root); got != before+1 {
			t.Fatalf("%s: ledger %d → %d", q, before, got)
		}
	}
}

// TestDPAggRefusedBeforeCharging: shapes the planner cannot bound.
func TestDPAggRefusedBeforeCharging(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 100, 100)
	mustExec(t, root, "CALL dp_labels('people', 'town', '0,1,2')")
	mustExec(t, root, "CREATE TABLE demo.people2 (id INT PRIMARY KEY, age DOUBLE)")
	mustExec(t, root, "CALL dp_bounds('people2', 'age', 0, 100)")
	mustExec(t, root, "CALL dp_protect('people2', 10, 0)")
	c := aggSession(t, ts, 1)
	before := ledgerTotal(t, root)
	for _, q := range []struct{ sql, want string }{
		{"SELECT COUNT(*) FROM people p JOIN people2 q ON p.id = q.id", "protected"},
		{"SELECT COUNT(*) FROM people p JOIN towns t ON p.town = t.id", "protected"},
		{"SELECT MAX(age) FROM people", "DP_QUANTILE('people', '<column>', 0.01"},
		{"SELECT MIN(age), COUNT(*) FROM people GROUP BY town", "one row can move a minimum or maximum"},
		{"SELECT name, COUNT(*) FROM people GROUP BY name", "dp_delta"},
		{"SELECT SUM(id) FROM people", "dp_bounds"},
		{"SELECT COUNT(DISTINCT town) FROM people", "not supported yet"},
		{"SELECT COUNT(age) FROM people", "COUNT(*)"},
		{"SELECT SUM(age * 2) FROM people", "plain column"},
		{"SELECT COUNT(*) FROM people WHERE town IN (SELECT id FROM towns)", "cannot be bounded"},
		{"SELECT COUNT(*) FROM people WHERE age > RAND()", "cannot be bounded"},
		{"SELECT COUNT(*) FROM (SELECT * FROM people) AS x", "protected"},
		{"SELECT town, COUNT(*), (SELECT COUNT(*) FROM people2) FROM people GROUP BY town", ""},
		{"SELECT DP_MEAN('people', 'age', 1) FROM people", ""},
		{"SELECT age, COUNT(*) FROM people GROUP BY town", "not grouped"},
		{"SELECT COUNT(*) OVER () FROM people", ""},
	} {
		if _, err := c.QueryContext(context.Background(), q.sql); err == nil {
			t.Fatalf("%s: accepted", q.sql)
		} else if !strings.Contains(err.Error(), q.want) {
			t.Fatalf("%s: error %q does not mention %q", q.sql, err, q.want)
		}
	}
	if got := ledgerTotal(t, root); got != before {
		t.Fatalf("refused queries charged: ledger %d → %d", before, got)
	}
	if s := spent(t, root, "demo.people"); s != 0 {
		t.Fatalf("spent %v", s)
	}
}

// TestReleaseWrappers: BI tools wrap a DP function call in LIMIT and in a
// derived table; each is one release.
func TestReleaseWrappers(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 100, 100)
	ana := ts.connect("ana", "ana-pw", "demo")
	for i, q := range []string{
		"SELECT DP_MEAN('people', 'age', 1) AS m LIMIT 1000",
		"SELECT * FROM (SELECT DP_MEAN('people', 'age', 1) AS m) AS virtual_table LIMIT 1000",
		"SELECT m FROM (SELECT DP_MEAN('people', 'age', 1) AS m) AS virtual_table",
	} {
		if m := queryFloat(t, ana, q); m < 0 || m > 100 {
			t.Fatalf("%s = %v", q, m)
		}
		if s := spent(t, root, "demo.people"); s != float64(i+1) {
			t.Fatalf("%s: spent %v, want %d", q, s, i+1)
		}
	}
	for _, q := range []string{
		"SELECT m + 1 FROM (SELECT DP_MEAN('people', 'age', 1) AS m) AS x JOIN towns",
		"SELECT * FROM towns, (SELECT DP_MEAN('people', 'age', 1) AS m) AS x",
		"SELECT DP_MEAN('people', 'age', 1) FROM towns LIMIT 1",
	} {
		wantErr(t, ana, q, "on its own")
	}
	if s := spent(t, root, "demo.people"); s != 3 {
		t.Fatalf("refused wrappers charged: spent %v", s)
	}
}

// TestDPHistogramAndDefaults: DP_HISTOGRAM over a declared domain and over
// public bins; an owner's per-account default ε for aggregate queries.
func TestDPHistogramAndDefaults(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 3000, 100)
	mustExec(t, root, "CALL dp_domain('people', 'town', '0,1,2')")
	ana := ts.connect("ana", "ana-pw", "demo")
	var js string
	if err := ana.QueryRow("SELECT DP_HISTOGRAM('people', 'town', 1)").Scan(&js); err != nil {
		t.Fatal(err)
	}
	var h struct {
		Scale float64 `json:"laplace_scale"`
		N     int64
		Bins  []struct {
			Label string
			Count float64
		}
	}
	if err := json.Unmarshal([]byte(js), &h); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	if len(h.Bins) != 3 || h.Scale != 2 || h.N != 3000 {
		t.Fatalf("histogram %s", js)
	}
	for _, b := range h.Bins {
		if math.Abs(b.Count-1000) > 40 {
			t.Fatalf("histogram %s", js)
		}
	}
	if err := ana.QueryRow("SELECT DP_HISTOGRAM('people', 'age', 1, 'bins=5')").Scan(&js); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(js), &h); err != nil || len(h.Bins) != 5 {
		t.Fatalf("binned histogram %s (%v)", js, err)
	}
	// ages 20..69 uniform: bins [0,20) and [80,100] are empty, [20,40) has 40%.
	if math.Abs(h.Bins[0].Count) > 40 || math.Abs(h.Bins[1].Count-1200) > 40 || math.Abs(h.Bins[4].Count) > 40 {
		t.Fatalf("binned histogram %s", js)
	}
	if s := spent(t, root, "demo.people"); s != 2 {
		t.Fatalf("spent %v", s)
	}
	wantErr(t, ana, "SELECT DP_HISTOGRAM('people', 'name', 1)", "public")
	wantErr(t, ana, "SELECT DP_HISTOGRAM('people', 'age', 1, 'edges=5,1')", "increasing")
	wantErr(t, ana, "SELECT DP_HISTOGRAM('people', 'age', 1) FROM towns", "on its own")

	// Per-account default: no SET needed; the session's value wins.
	wantErr(t, ana, "CALL dp_defaults('ana', 0.5, 0)", "owner")
	mustExec(t, root, "CALL dp_defaults('ana', 0.5, 0)")
	if r := countRows(t, ana, "SELECT town, COUNT(*) FROM people GROUP BY town"); r != 3 {
		t.Fatalf("rows %d", r)
	}
	if s := spent(t, root, "demo.people"); s != 2.5 {
		t.Fatalf("spent %v, want 2.5", s)
	}
	c := aggSession(t, ts, 0.25)
	queryRows(t, c, "SELECT COUNT(*) FROM people")
	if s := spent(t, root, "demo.people"); s != 2.75 {
		t.Fatalf("spent %v, want 2.75", s)
	}
}

// TestAnswerCache: the same measurement on the same snapshot is answered from
// the durable cache at no charge, across restarts; a write or dp_fresh = 1
// makes a new, charged release.
func TestAnswerCache(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	root := setupProtected(t, ts, 500, 100)
	mustExec(t, root, "CALL dp_labels('people', 'town', '0,1,2')")
	q := "SELECT town, COUNT(*), AVG(age) FROM people WHERE age >= 30 GROUP BY town ORDER BY town"
	c := aggSession(t, ts, 1)
	first := fmt.Sprint(queryRows(t, c, q))
	if got := fmt.Sprint(queryRows(t, c, q)); got != first {
		t.Fatalf("cached answer differs: %s vs %s", got, first)
	}
	// Same measurement, other post-processing: also from the cache.
	if r := queryRows(t, c, "SELECT AVG(age), town FROM people WHERE age >= 30 GROUP BY town HAVING COUNT(*) > 1000"); len(r) != 0 {
		t.Fatalf("HAVING over the cached answer: %v", r)
	}
	if got := ledgerTotal(t, root); got != 1 {
		t.Fatalf("ledger entries %d, want 1", got)
	}
	warn := fmt.Sprint(queryRows(t, c, "SHOW WARNINGS"))
	if !strings.Contains(warn, "answer cache") {
		t.Fatalf("no cache note in warnings: %s", warn)
	}
	// Another ε is another measurement: charged.
	c2 := aggSession(t, ts, 0.5)
	queryRows(t, c2, q)
	if got := ledgerTotal(t, root); got != 2 {
		t.Fatalf("ledger entries %d, want 2", got)
	}

	// Durable across a restart.
	ts.stop()
	ts = startServer(t, dir)
	root = ts.connect("root", rootPW, "demo")
	c = aggSession(t, ts, 1)
	if got := fmt.Sprint(queryRows(t, c, q)); got != first {
		t.Fatalf("after restart: %s vs %s", got, first)
	}
	if got := ledgerTotal(t, root); got != 2 {
		t.Fatalf("after restart: ledger entries %d, want 2", got)
	}
	// dp_fresh forces a new release.
	if _, err := c.ExecContext(context.Background(), "SET SESSION dp_fresh = 1"); err != nil {
		t.Fatal(err)
	}
	queryRows(t, c, q)
	if got := ledgerTotal(t, root); got != 3 {
		t.Fatalf("dp_fresh: ledger entries %d, want 3", got)
	}
	if _, err := c.ExecContext(context.Background(), "SET SESSION dp_fresh = 0"); err != nil {
		t.Fatal(err)
	}
	queryRows(t, c, q)
	if got := ledgerTotal(t, root); got != 3 {
		t.Fatalf("after dp_fresh the new answer is cached: ledger %d", got)
	}
	// An owner's write (same n: an update) starts a new snapshot.
	mustExec(t, root, "UPDATE people SET age = 31 WHERE id = 1")
	queryRows(t, c, q)
	if got := ledgerTotal(t, root); got != 4 {
		t.Fatalf("after a write: ledger entries %d, want 4", got)
	}
}

// TestDPPartitionSelection: GROUP BY a column with no declared domain is
// answered with private partition selection when the session has a δ.
func TestDPPartitionSelection(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 10, 100)
	mustExec(t, root, "CREATE TABLE demo.visits (id INT PRIMARY KEY, city VARCHAR(20), minutes DOUBLE)")
	var b strings.Builder
	for i := 0; i < 3001; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		city := []string{"'oslo'", "'lima'", "'pune'"}[i%3]
		if i == 3000 {
			city = "'secret-town'" // one row: must not appear
		}
		fmt.Fprintf(&b, "(%d, %s, %d)", i, city, i%60)
	}
	mustExec(t, root, "INSERT INTO demo.visits VALUES "+b.String())
	mustExec(t, root, "CALL dp_bounds('visits', 'minutes', 0, 60)")
	mustExec(t, root, "CALL dp_protect('visits', 10, 1e-3)")
	mustExec(t, root, "GRANT SELECT ON demo.visits TO 'ana'@'%'")
	c := aggSession(t, ts, 1)
	q := "SELECT city, COUNT(*), AVG(minutes) FROM visits GROUP BY city ORDER BY city"
	if _, err := c.QueryContext(context.Background(), q); err == nil || !strings.Contains(err.Error(), "dp_delta") {
		t.Fatalf("no δ: %v", err)
	}
	if _, err := c.ExecContext(context.Background(), "SET SESSION dp_delta = 1e-5"); err != nil {
		t.Fatal(err)
	}
	rows := queryRows(t, c, q)
	if len(rows) != 3 || rows[0][0] != "lima" || rows[1][0] != "oslo" || rows[2][0] != "pune" {
		t.Fatalf("selected groups %v", rows)
	}
	for _, r := range rows {
		if n := atof(t, r[1]); math.Abs(n-1000) > 60 {
			t.Fatalf("count %v", rows)
		}
	}
	if d := queryFloat(t, root, "SELECT delta_spent FROM dp_budget WHERE table_name = 'demo.visits'"); math.Abs(d-1e-5) > 1e-12 {
		t.Fatalf("δ spent %v", d)
	}
	warn := fmt.Sprint(queryRows(t, c, "SHOW WARNINGS"))
	if !strings.Contains(warn, "selected privately") {
		t.Fatalf("warnings %s", warn)
	}
	// Cached like any other measurement.
	before := ledgerTotal(t, root)
	if again := queryRows(t, c, q); fmt.Sprint(again) != fmt.Sprint(rows) || ledgerTotal(t, root) != before {
		t.Fatalf("partition selection answer not cached")
	}
	// people has no δ budget: refused before charging.
	if _, err := c.QueryContext(context.Background(), "SELECT name, COUNT(*) FROM people GROUP BY name"); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("δ over budget: %v", err)
	}
}

// TestDPAggPrepared: server-side prepared statements with parameters (as
// go-sql-driver sends them) are planned with the bound values, one charge
// per execution.
func TestDPAggPrepared(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 3000, 100)
	mustExec(t, root, "CALL dp_labels('people', 'town', '0,1,2')")
	c := aggSession(t, ts, 2)
	// ages are 20..69 uniformly: age > 30 keeps 39/50, age > 60 keeps 9/50.
	for i, tc := range []struct{ age, want float64 }{{30, 780}, {60, 180}} {
		rows, err := c.QueryContext(context.Background(), "SELECT town, COUNT(*) FROM people WHERE age > ? GROUP BY town ORDER BY town", tc.age)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var town string
			var cnt float64
			if err := rows.Scan(&town, &cnt); err != nil {
				t.Fatal(err)
			}
			if math.Abs(cnt-tc.want) > 40 {
				t.Fatalf("age > %v: town %s count %v, want ≈ %v", tc.age, town, cnt, tc.want)
			}
			n++
		}
		rows.Close()
		if n != 3 {
			t.Fatalf("%d groups", n)
		}
		if got := ledgerTotal(t, root); got != i+1 {
			t.Fatalf("ledger %d after %d executions", got, i+1)
		}
	}
}

// TestDPAggSessionStillGuarded: with a budget in the session, everything that
// is not a supported aggregate is still refused, and nothing is charged.
func TestDPAggSessionStillGuarded(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 100, 100)
	mustExec(t, root, "CALL dp_labels('people', 'town', '0,1,2')")
	c := aggSession(t, ts, 1)
	for _, q := range []string{
		"SELECT * FROM people",
		"SELECT age FROM people LIMIT 5",
		"SELECT town, COUNT(*) FROM people GROUP BY town UNION SELECT 1, 2",
		"INSERT INTO towns SELECT town, COUNT(*) FROM people GROUP BY town",
		"CREATE TABLE stolen AS SELECT town, COUNT(*) AS n FROM people GROUP BY town",
		"CREATE VIEW v AS SELECT COUNT(*) FROM people",
		// EXPLAIN of a supported aggregate answers its DP plan
		// (TestDPExplainRowLevel); EXPLAIN of the rows stays refused.
		"EXPLAIN SELECT * FROM people",
		"EXPLAIN SELECT age FROM people WHERE age > 3",
		"SELECT (SELECT COUNT(*) FROM people)",
		"SELECT * FROM towns WHERE id < (SELECT COUNT(*) FROM people)",
		"SELECT t.tname, x.n FROM towns t JOIN (SELECT town, COUNT(*) AS n FROM people GROUP BY town) x ON x.town = t.id",
	} {
		if rows, err := c.QueryContext(context.Background(), q); err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
			if err == nil {
				t.Fatalf("%s: accepted", q)
			}
		}
	}
	if s := spent(t, root, "demo.people"); s != 0 {
		t.Fatalf("spent %v", s)
	}
	// A CTE around a supported aggregate is one release.
	if r := queryRows(t, c, "WITH x AS (SELECT town, COUNT(*) AS n FROM people GROUP BY town) SELECT * FROM x ORDER BY town"); len(r) != 3 {
		t.Fatalf("CTE rows %v", r)
	}
	if s := spent(t, root, "demo.people"); s != 1 {
		t.Fatalf("spent %v after the CTE", s)
	}
}

// TestDPQuantile: a private median over the declared bounds' grid.
func TestDPQuantile(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 3000, 100)
	ana := ts.connect("ana", "ana-pw", "demo")
	// ages 20..69 uniformly: median 44.5, grid step 0.1 on [0, 100].
	if m := queryFloat(t, ana, "SELECT DP_QUANTILE('people', 'age', 0.5, 1)"); math.Abs(m-44.5) > 2 {
		t.Fatalf("median %v", m)
	}
	if m := queryFloat(t, ana, "SELECT DP_QUANTILE('people', 'age', 0.9, 1, 'grid=101')"); math.Abs(m-65) > 3 {
		t.Fatalf("90th percentile %v", m)
	}
	if s := spent(t, root, "demo.people"); s != 2 {
		t.Fatalf("spent %v", s)
	}
	wantErr(t, ana, "SELECT DP_QUANTILE('people', 'age', 1.5, 1)", "q must be")
	wantErr(t, ana, "SELECT DP_QUANTILE('people', 'name', 0.5, 1)", "bounds")
	wantErr(t, ana, "SELECT DP_QUANTILE('people', 'age', 0.5, 1, 'grid=1')", "grid")
	if s := spent(t, root, "demo.people"); s != 2 {
		t.Fatalf("refused calls charged: %v", s)
	}
}

// TestAnswerCacheEviction: the cache is bounded; an evicted answer makes
// the next identical query a new, charged release (never a free one).
func TestAnswerCacheEviction(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 200, 100)
	mustExec(t, root, "CALL dp_labels('people', 'town', '0,1,2')")
	if err := ts.e.Catalog.SetAnswerCacheLimits(1, 1<<20); err != nil {
		t.Fatal(err)
	}
	c := aggSession(t, ts, 1)
	q1 := "SELECT town, COUNT(*) FROM people GROUP BY town"
	q2 := "SELECT town, AVG(age) FROM people GROUP BY town"
	for i, step := range []struct {
		q      string
		ledger int
	}{{q1, 1}, {q1, 1}, {q2, 2}, {q2, 2}, {q1, 3}, {q1, 3}} {
		queryRows(t, c, step.q)
		if got := ledgerTotal(t, root); got != step.ledger {
			t.Fatalf("step %d (%s): ledger entries %d, want %d", i, step.q, got, step.ledger)
		}
	}
	if n, _ := ts.e.Catalog.AnswerCacheSize(); n != 1 {
		t.Fatalf("cache holds %d answers, bound 1", n)
	}
}

// TestDPHistogramTableFunction: SELECT * FROM DP_HISTOGRAM(…) is one charged
// release with one row per public bin; it is refused (before any charge)
// unless it is the statement's only source.
func TestDPHistogramTableFunction(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 3000, 100)
	mustExec(t, root, "CALL dp_domain('people', 'town', '0,1,2')")
	ana := ts.connect("ana", "ana-pw", "demo")
	rows, err := ana.Query("SELECT bin, lo, hi, count FROM DP_HISTOGRAM('people', 'age', 1, 'bins=5') AS h ORDER BY lo")
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for rows.Next() {
		var bin string
		var lo, hi, c float64
		if err := rows.Scan(&bin, &lo, &hi, &c); err != nil {
			t.Fatal(err)
		}
		if hi-lo != 20 {
			t.Fatalf("bin %s = [%v, %v)", bin, lo, hi)
		}
		got = append(got, c)
	}
	rows.Close()
	// ages 20..69 uniform over 3000 rows: 0, 1200, 1200, 600, 0.
	want := []float64{0, 1200, 1200, 600, 0}
	if len(got) != 5 {
		t.Fatalf("bins %v", got)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 40 {
			t.Fatalf("counts %v, want ≈ %v", got, want)
		}
	}
	if s := spent(t, root, "demo.people"); s != 1 {
		t.Fatalf("spent %v, want 1", s)
	}
	// Post-processing of the bins is fine and is one more release.
	if n := countRows(t, ana, "SELECT * FROM DP_HISTOGRAM('people', 'town', 0.5) WHERE count > 100 LIMIT 10"); n != 3 {
		t.Fatalf("town bins %d", n)
	}
	if s := spent(t, root, "demo.people"); s != 1.5 {
		t.Fatalf("spent %v, want 1.5", s)
	}
	for _, q := range []string{
		"SELECT * FROM DP_HISTOGRAM('people', 'town', 1) AS h JOIN towns t ON h.bin = t.id",
		"SELECT * FROM towns WHERE id IN (SELECT bin FROM DP_HISTOGRAM('people', 'town', 1) AS h)",
		"SELECT * FROM DP_HISTOGRAM('people', 'town', 1) AS a UNION ALL SELECT * FROM DP_HISTOGRAM('people', 'town', 1) AS b",
	} {
		wantErr(t, ana, q, "only source")
	}
	wantErr(t, ana, "SELECT * FROM DP_HISTOGRAM('people', 'name', 1)", "public")
	if s := spent(t, root, "demo.people"); s != 1.5 {
		t.Fatalf("refused table-function calls charged: spent %v", s)
	}
}
