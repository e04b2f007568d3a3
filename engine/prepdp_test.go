package engine_test

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// Server-side prepared statements of DP aggregate queries (issue 27 item
// 4): go-sql-driver with interpolateParams=false sends every query with
// arguments as COM_STMT_PREPARE + COM_STMT_EXECUTE. PREPARE binds only
// (nothing charged); every EXECUTE runs the path of the equivalent text
// query with the bound values: one charge per new measurement, the answer
// cache for a repeated one, refusals before any charge, raw reads refused.

// prepShop is the shop of setupShop (orders at person level: customer 0
// has 500 orders, all of amount 10) plus a row-level protected table
// visits (300 rows, minutes = 30 for id < 150, else 50; ε = 10, δ = 0),
// and an analyst on one connection.
func prepShop(t *testing.T) (root, ana *sql.DB) {
	t.Helper()
	_, root, ana = prepShopServer(t)
	return root, ana
}

func prepShopServer(t *testing.T) (ts *testServer, root, ana *sql.DB) {
	t.Helper()
	ts = startServer(t, t.TempDir())
	root = setupShop(t, ts)
	mustExec(t, root, "CREATE TABLE visits (id INT PRIMARY KEY, minutes DOUBLE)")
	var vs []string
	for i := 0; i < 300; i++ {
		vs = append(vs, fmt.Sprintf("(%d, %d)", i, 30+20*(i/150)))
	}
	mustExec(t, root, "INSERT INTO visits VALUES "+strings.Join(vs, ","))
	mustExec(t, root, "CALL dp_bounds('visits', 'minutes', 0, 60)")
	mustExec(t, root, "CALL dp_protect('visits', 10, 0)")
	return ts, root, shopAnalyst(t, ts, root, "ana")
}

// prepared prepares q on db (one connection) and fails the test on error.
func prepared(t *testing.T, db *sql.DB, q string) *sql.Stmt {
	t.Helper()
	st, err := db.Prepare(q)
	if err != nil {
		t.Fatalf("PREPARE %s: %v", q, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// stmtRows executes st with args and returns its rows as strings.
func stmtRows(t *testing.T, st *sql.Stmt, args ...any) [][]string {
	t.Helper()
	rows, err := st.Query(args...)
	if err != nil {
		t.Fatalf("EXECUTE %v: %v", args, err)
	}
	defer rows.Close()
	return stringRows(t, rows)
}

// wantCachedAgain requires st executed again with args, and then the
// equivalent text query, to return the answer a of its first execution
// with no charge (the answer cache, keyed on the compiled query).
func wantCachedAgain(t *testing.T, root, ana *sql.DB, table string, before charges, a [][]string, st *sql.Stmt, text string, args ...any) charges {
	t.Helper()
	if again := stmtRows(t, st, args...); fmt.Sprint(again) != fmt.Sprint(a) {
		t.Fatalf("same parameters: %v, then %v (not from the answer cache)", a, again)
	}
	if got := queryRows(t, ana, text); fmt.Sprint(got) != fmt.Sprint(a) {
		t.Fatalf("text query %s after the prepared one: %v, want the cached %v", text, got, a)
	}
	return wantCharged(t, root, table, before, 0, 0, "the same execution again and the equivalent text query")
}

// stmtErr executes st with args and returns its error (nil if it ran).
func stmtErr(st *sql.Stmt, args ...any) error {
	rows, err := st.Query(args...)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	err = rows.Err()
	rows.Close()
	return err
}

// charges is the ledger's row count and the ε spent on a table.
type charges struct {
	ledger int
	spent  float64
}

func chargesOf(t *testing.T, root *sql.DB, table string) charges {
	t.Helper()
	return charges{ledgerTotal(t, root), spent(t, root, table)}
}

// wantCharged requires exactly n more ledger rows and ε more spent.
func wantCharged(t *testing.T, root *sql.DB, table string, before charges, n int, eps float64, what string) charges {
	t.Helper()
	now := chargesOf(t, root, table)
	if now.ledger != before.ledger+n || math.Abs(now.spent-(before.spent+eps)) > 1e-9 {
		t.Fatalf("%s: ledger %d → %d, %s spent %v → %v; want %d more rows and ε %v more", what, before.ledger, now.ledger, table, before.spent, now.spent, n, eps)
	}
	return now
}

func TestPreparedDPSessionEpsilon(t *testing.T) {
	root, ana := prepShop(t)
	mustExec(t, ana, "SET SESSION dp_epsilon = 1")

	// A unit table (person level): customer 0's 500 orders count once.
	c0 := chargesOf(t, root, "shop.orders")
	st := prepared(t, ana, "SELECT COUNT(*) FROM orders WHERE amount > ?")
	c0 = wantCharged(t, root, "shop.orders", c0, 0, 0, "PREPARE alone")
	a := stmtRows(t, st, 5) // every order: 201 persons
	if n := atof(t, a[0][0]); math.Abs(n-201) > 30 {
		t.Fatalf("COUNT(*) WHERE amount > 5 = %v, want 201 persons ± noise", n)
	}
	if w := fmt.Sprint(queryRows(t, ana, "SHOW WARNINGS")); !strings.Contains(w, "scale") {
		t.Fatalf("no noise scale in the warnings of a prepared DP release: %s", w)
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 1, "first EXECUTE")
	if n := atof(t, stmtRows(t, st, 50)[0][0]); math.Abs(n) > 30 { // no order has amount > 50
		t.Fatalf("COUNT(*) WHERE amount > 50 = %v, want 0 ± noise", n)
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 1, "EXECUTE with another value")
	// The same value again, and the text query with that literal: the
	// stored answer, free.
	c0 = wantCachedAgain(t, root, ana, "shop.orders", c0, a, st, "SELECT COUNT(*) FROM orders WHERE amount > 5", 5)
	// And so is the SQL-level PREPARE … FROM / EXECUTE … USING.
	mustExec(t, ana, "PREPARE byname FROM 'SELECT COUNT(*) FROM orders WHERE amount > ?'")
	mustExec(t, ana, "SET @lo = 5")
	if named := queryRows(t, ana, "EXECUTE byname USING @lo"); fmt.Sprint(named) != fmt.Sprint(a) {
		t.Fatalf("EXECUTE … USING: %v, want the cached %v", named, a)
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 0, 0, "EXECUTE … USING with the same value")

	// Grouped over a join, parameters in WHERE and HAVING.
	g := prepared(t, ana, "SELECT c.region, COUNT(*) AS n FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.amount >= ? GROUP BY c.region HAVING COUNT(*) > ? ORDER BY c.region")
	rows := stmtRows(t, g, 10, -1000)
	if len(rows) != 2 || rows[0][0] != "north" || math.Abs(atof(t, rows[0][1])-101) > 30 || math.Abs(atof(t, rows[1][1])-100) > 30 {
		t.Fatalf("grouped rows %v", rows)
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 1, "grouped EXECUTE")
	// HAVING is post-processing of the same measurement: no new charge.
	if rows := stmtRows(t, g, 10, 1e9); len(rows) != 0 {
		t.Fatalf("HAVING COUNT(*) > 1e9 kept %v", rows)
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 0, 0, "another HAVING value over the same measurement")

	// A row-level table.
	v := prepared(t, ana, "SELECT COUNT(*), AVG(minutes) FROM visits WHERE id < ?")
	cv := chargesOf(t, root, "shop.visits")
	r1, r2 := stmtRows(t, v, 150), stmtRows(t, v, 300)
	if n, m := atof(t, r1[0][0]), atof(t, r1[0][1]); math.Abs(n-150) > 40 || math.Abs(m-30) > 10 {
		t.Fatalf("visits id < 150: %v", r1)
	}
	if n, m := atof(t, r2[0][0]), atof(t, r2[0][1]); math.Abs(n-300) > 40 || math.Abs(m-40) > 10 {
		t.Fatalf("visits id < 300: %v", r2)
	}
	wantCharged(t, root, "shop.visits", cv, 2, 2, "two row-level EXECUTEs")
}

func TestPreparedDPClause(t *testing.T) {
	root, ana := prepShop(t)
	// A session ε that the clause must override at every execution.
	mustExec(t, ana, "SET SESSION dp_epsilon = 3")

	c0 := chargesOf(t, root, "shop.orders")
	const clause = "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5, max_groups_contributed = 1, privacy_unit_column = customer_id) c.region, COUNT(*) AS n, SUM(o.amount, contribution_bounds_per_group => (0, 10)) AS s FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.amount > ? GROUP BY c.region ORDER BY c.region"
	st := prepared(t, ana, clause)
	c0 = wantCharged(t, root, "shop.orders", c0, 0, 0, "PREPARE of the clause")
	check := func(rows [][]string, north, south float64) {
		t.Helper()
		// ε = 0.5 split over COUNT and SUM: COUNT scale 4, SUM scale 40
		// (the clamp 10); customer 0's 500 orders count once and sum to
		// at most 10.
		if len(rows) != 2 || rows[0][0] != "north" || math.Abs(atof(t, rows[0][1])-north) > 60 || math.Abs(atof(t, rows[1][1])-south) > 60 ||
			math.Abs(atof(t, rows[0][2])-10*north) > 600 || math.Abs(atof(t, rows[1][2])-10*south) > 600 {
			t.Fatalf("clause rows %v, want about %v and %v persons", rows, north, south)
		}
	}
	a := stmtRows(t, st, 5)
	check(a, 101, 100)
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 0.5, "first EXECUTE of the clause (its ε, not the session's)")
	check(stmtRows(t, st, 50), 0, 0)
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 0.5, "second EXECUTE, another value: the clause applies again")
	c0 = wantCachedAgain(t, root, ana, "shop.orders", c0, a, st, strings.Replace(clause, "?", "5", 1), 5)
	// The session path between two executions does not inherit the clause.
	if n := queryFloat(t, ana, "SELECT COUNT(*) FROM orders WHERE amount > ?", 9); math.Abs(n-201) > 30 {
		t.Fatalf("session-ε count %v", n)
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 3, "a session-ε query between clause executions")
	check(stmtRows(t, st, 7), 101, 100)
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 0.5, "the clause after a session-ε query")

	// A row-level table: the clause's ε per execution.
	// SUM is a centred sum plus the midpoint times the noisy count, each at
	// ε = 1: two Laplace(60) terms (centred sum: sensitivity 2·30; count:
	// 2 at scale 2, times the midpoint 30; see EXPLAIN), standard
	// deviation 120. The tolerance of
	// 1,000 is over 8 deviations and still tells 150 from 0 apart (4,500).
	v := prepared(t, ana, "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 2) SUM(minutes) FROM visits WHERE id >= ?")
	cv := chargesOf(t, root, "shop.visits")
	if s := atof(t, stmtRows(t, v, 150)[0][0]); math.Abs(s-150*50) > 1000 {
		t.Fatalf("SUM(minutes) id >= 150: %v", s)
	}
	if s := atof(t, stmtRows(t, v, 0)[0][0]); math.Abs(s-(150*30+150*50)) > 1000 {
		t.Fatalf("SUM(minutes) id >= 0: %v", s)
	}
	wantCharged(t, root, "shop.visits", cv, 2, 4, "two row-level clause EXECUTEs")

	// An owner's clause statement is a DP release at every execution; the
	// owner's plain prepared statement right after it is exact (the clause
	// does not outlive its execution).
	ro, err := root.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ost, err := ro.PrepareContext(t.Context(), "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.25) SUM(minutes) FROM visits WHERE id < ?")
	if err != nil {
		t.Fatal(err)
	}
	defer ost.Close()
	plain, err := ro.PrepareContext(t.Context(), "SELECT SUM(minutes) FROM visits WHERE id < ?")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	cv = chargesOf(t, root, "shop.visits")
	for _, lim := range []int{100, 200} {
		var dp, exact float64
		if err := ost.QueryRow(lim).Scan(&dp); err != nil {
			t.Fatal(err)
		}
		if err := plain.QueryRow(lim).Scan(&exact); err != nil {
			t.Fatal(err)
		}
		if want := float64(30*min(lim, 150) + 50*max(lim-150, 0)); exact != want {
			t.Fatalf("owner's plain prepared SUM after a clause execution: %v, want the exact %v", exact, want)
		}
	}
	wantCharged(t, root, "shop.visits", cv, 2, 0.5, "owner's clause executions (DP releases) and plain ones (free)")
}

func TestPreparedDPRefusals(t *testing.T) {
	root, ana := prepShop(t)
	mustExec(t, ana, "SET SESSION dp_epsilon = 1")
	c0 := chargesOf(t, root, "shop.orders")
	cv := chargesOf(t, root, "shop.visits")

	// A placeholder where the clause needs a literal: refused at PREPARE
	// with the clause's message (1064).
	for _, q := range []string{
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = ?) COUNT(*) FROM orders",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = ?) COUNT(*) FROM orders WHERE amount > ?",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) SUM(amount, contribution_bounds_per_group => (0, ?)) FROM orders",
	} {
		_, err := ana.Prepare(q)
		if n, _ := sqlErr(err); n != 1064 || !strings.Contains(err.Error(), "placeholder") {
			t.Fatalf("PREPARE %s: %v, want 1064 naming the placeholder", q, err)
		}
	}
	// A malformed clause: the clause's error, not the parser's position.
	if _, err := ana.Prepare("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1 COUNT(*) FROM orders WHERE amount > ?"); err == nil || !strings.Contains(err.Error(), "DIFFERENTIAL_PRIVACY clause") {
		t.Fatalf("malformed clause: %v", err)
	}

	// Refused at EXECUTE, before any charge, every time, with the text
	// path's reasons.
	for _, tc := range []struct{ q, why string }{
		{"SELECT * FROM orders WHERE amount > ?", "is protected"},
		{"SELECT amount FROM orders WHERE id = ?", "is protected"},
		{"SELECT minutes FROM visits WHERE id = ?", "is protected"},
		{"SELECT COUNT(*) FROM visits WHERE id < ? UNION SELECT ?", "is protected"},
		{"SELECT (SELECT COUNT(*) FROM visits WHERE id < ?)", "is protected"},
		{"SELECT MAX(amount) FROM orders WHERE amount > ?", "not supported"},
		{"SELECT COUNT(*) FROM orders o JOIN customers c ON o.id = c.id WHERE o.amount > ?", "does not preserve"},
		{"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) * FROM orders WHERE amount > ?", "is protected"},
		{"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) MAX(amount) FROM orders WHERE amount > ?", "not supported"},
		{"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, privacy_unit_column = id) COUNT(*) FROM orders WHERE amount > ?", "privacy_unit_column"},
		{"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, privacy_unit_column = id) COUNT(*) FROM visits WHERE id < ?", "no declared privacy unit"},
		{"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 100) COUNT(*) FROM orders WHERE amount > ?", "budget exceeded"},
	} {
		args := make([]any, strings.Count(tc.q, "?"))
		for i := range args {
			args[i] = 5
		}
		st := prepared(t, ana, tc.q) // binding is public: PREPARE takes it
		for i := 0; i < 2; i++ {
			if err := stmtErr(st, args...); err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("EXECUTE %s: %v, want a refusal saying %q", tc.q, err, tc.why)
			}
		}
	}
	wantCharged(t, root, "shop.orders", c0, 0, 0, "refused prepared statements")
	wantCharged(t, root, "shop.visits", cv, 0, 0, "refused prepared statements")

	// The same statements by name (PREPARE … FROM / EXECUTE … USING) are
	// refused the same way.
	if _, err := ana.Exec("PREPARE s FROM 'SELECT amount FROM orders WHERE id = ?'"); err == nil {
		if _, err := ana.Exec("SET @x = 1"); err != nil {
			t.Fatal(err)
		}
		if rows, err := ana.Query("EXECUTE s USING @x"); err == nil {
			t.Fatalf("EXECUTE s: %v", rowStrings(t, rows))
		}
	}
	// PREPARE … FROM @variable: go-mysql-server reads the variable's text
	// itself, so the clause there is a syntax error (docs/sql.md; the
	// literal form is TestSQLPreparedDPClause).
	conn, err := ana.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "SET @q = 'SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM orders WHERE amount > ?'"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "PREPARE c FROM @q"); err == nil {
		t.Fatal("PREPARE … FROM @q of a clause text accepted")
	}
	wantCharged(t, root, "shop.orders", c0, 0, 0, "PREPARE … FROM of a raw read")
}

// SQL-level prepared statements (PREPARE … FROM '…' / EXECUTE … USING):
// the clause in the literal is taken at every EXECUTE of that name, and a
// later PREPARE of the same name without it, DEALLOCATE or another
// connection never inherits it.
func TestSQLPreparedDPClause(t *testing.T) {
	ts, root, anaDB := prepShopServer(t)
	ctx := t.Context()
	ana, err := anaDB.Conn(ctx) // SQL-level statements live on one connection
	if err != nil {
		t.Fatal(err)
	}
	defer ana.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := ana.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows := func(q string) [][]string {
		t.Helper()
		r, err := ana.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer r.Close()
		return stringRows(t, r)
	}
	exec("SET SESSION dp_epsilon = 3")
	c0 := chargesOf(t, root, "shop.orders")
	// The literal holds doubled quotes: read as MySQL reads them.
	exec("PREPARE s FROM 'SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5, max_groups_contributed = 1, privacy_unit_column = customer_id) COUNT(*) FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.amount > ? AND c.region = ''north'''")
	c0 = wantCharged(t, root, "shop.orders", c0, 0, 0, "PREPARE … FROM with the clause")
	exec("SET @v = 5")
	// ε = 0.5 on one COUNT: Laplace scale 2; 101 north persons above 5.
	if n := atof(t, rows("EXECUTE s USING @v")[0][0]); math.Abs(n-101) > 40 {
		t.Fatalf("EXECUTE s USING 5: %v, want about 101", n)
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 0.5, "EXECUTE of the clause (its ε, not the session's)")
	exec("SET @v = 50")
	if n := atof(t, rows("EXECUTE s USING @v")[0][0]); math.Abs(n) > 40 {
		t.Fatalf("EXECUTE s USING 50: %v, want about 0", n)
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 0.5, "second EXECUTE, another value")
	// The same name prepared again without the clause: the session's ε.
	exec("PREPARE s FROM 'SELECT COUNT(*) FROM orders WHERE amount > ?'")
	exec("SET @v = 9")
	if n := atof(t, rows("EXECUTE s USING @v")[0][0]); math.Abs(n-201) > 30 {
		t.Fatalf("session-ε EXECUTE: %v", n)
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 3, "the re-prepared name without the clause")
	// DEALLOCATE forgets the clause; a new PREPARE of the name without it
	// is again the session path.
	exec("PREPARE t FROM 'SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.25) COUNT(*) FROM orders WHERE amount > ?'")
	exec("DEALLOCATE PREPARE t")
	if _, err := ana.QueryContext(ctx, "EXECUTE t USING @v"); err == nil {
		t.Fatal("EXECUTE of a deallocated statement answered")
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 0, 0, "PREPARE and DEALLOCATE")
	// A placeholder in OPTIONS is refused at PREPARE with the clause's
	// reason, before anything runs.
	if _, err := ana.ExecContext(ctx, "PREPARE u FROM 'SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = ?) COUNT(*) FROM orders'"); err == nil || !strings.Contains(err.Error(), "placeholder") {
		t.Fatalf("PREPARE with ? in OPTIONS: %v", err)
	}
	c0 = wantCharged(t, root, "shop.orders", c0, 0, 0, "refused PREPARE")

	// With multi-statements on (as the mariadb CLI sends every text): a
	// text of one PREPARE or EXECUTE takes the same path; an EXECUTE of a
	// clause statement followed by another statement is refused, so the
	// clause never reaches a later statement.
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "ana", "ana-pw", "tcp", ts.srv.Addr(), "shop"
	cfg.AllowNativePasswords, cfg.MultiStatements = true, true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	multiDB := sql.OpenDB(connector)
	defer multiDB.Close()
	multi, err := multiDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer multi.Close()
	if _, err := multi.ExecContext(ctx, "PREPARE m FROM 'SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5) COUNT(*) FROM orders WHERE amount > ?'"); err != nil {
		t.Fatal(err)
	}
	if _, err := multi.ExecContext(ctx, "SET @w = 3"); err != nil {
		t.Fatal(err)
	}
	r, err := multi.QueryContext(ctx, "EXECUTE m USING @w")
	if err != nil {
		t.Fatal(err)
	}
	if got := stringRows(t, r); math.Abs(atof(t, got[0][0])-201) > 40 {
		t.Fatalf("multi-statement connection, EXECUTE m USING 3: %v", got)
	}
	r.Close()
	c0 = wantCharged(t, root, "shop.orders", c0, 1, 0.5, "EXECUTE of the clause with multi-statements on")
	if _, err := multi.ExecContext(ctx, "SET @w = 4; EXECUTE m USING @w; SELECT 1"); err == nil || !strings.Contains(err.Error(), "alone in its text") {
		t.Fatalf("EXECUTE of a clause statement amid other statements: %v", err)
	}
	wantCharged(t, root, "shop.orders", c0, 0, 0, "refused multi-statement EXECUTE")
}
