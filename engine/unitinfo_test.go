package engine_test

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/server"
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
	// A tiny memory limit: a training's memory refusal names the row count.
	ts := startServerOpts(t, t.TempDir(), engine.Options{MaxReleaseMemory: 1 << 10}, server.Options{})
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
		mustExec(t, owner, "CALL dp_bounds('people', 'age', 0, 100)")
		mustExec(t, owner, "CALL dp_bounds('people', 'id', 0, 10)") // a feature for the trainings
		// Protected at row level first: people keeps its own (superseded)
		// account, which a dry run must not reach either.
		mustExec(t, owner, "CALL dp_protect('people', 5, 1e-6)")
		mustExec(t, owner, "CALL dp_privacy_unit('people', 'id', 'person')")
		mustExec(t, owner, "CALL dp_protect('rowlevel', 5, 1e-6)")
		mustExec(t, root, "GRANT SELECT, EXECUTE ON "+db+".* TO 'ana'@'%'")
	}
	ana := ts.connect("ana", "ana-pw", "u2") // a current database for DP_HISTOGRAM; statements name theirs

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
		// ★ functions: on a unit table their plans, dry runs and memory
		// estimates use no row count (trainings: the m of a noisy person
		// count, units.md §10).
		"SELECT DP_MEAN('DB.people', 'age', 1, 'dry_run=1')",
		"SELECT DP_QUANTILE('DB.people', 'age', 0.5, 1, 'dry_run=1')",
		"SELECT * FROM DP_HISTOGRAM('DB.people', 'age', 1, 'dry_run=1')",
		"SELECT DP_TRAIN('DB.people', 1, 'auto', 'label=age; features=id; dry_run=1')",
		"SELECT DP_LMGC_TRAIN('DB.people', 1)", // refused on public inputs (no label)
		// Above the 1 KiB limit even on one row: refused before the charge.
		"SELECT DP_LSQ('DB.people', 1, 'rbf', 'dim=4096; label=age; features=id')",
		// Person-level releases pass the memory admission on row counts
		// rounded up to powers of two (2 and 3 both → 4): same refusal.
		"SELECT DP_MEAN('DB.people', 'age', 1)",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM DB.visits",
	}
	for _, q := range stmts {
		a2, a3 := render("ana", q, "u2"), render("ana", q, "u3")
		if a2 != a3 {
			t.Errorf("analyst, %s: the answer depends on the row count:\n2 rows: %s\n3 rows: %s", q, a2, a3)
		}
		// Trainings run at person level: never refused for the unit, and
		// no answer names a row count (the same answer is what matters).
		if strings.Contains(a2, "privacy unit DB.person") || strings.Contains(a2, "n=") {
			t.Errorf("analyst, %s: %s; want a person-level answer without a row count", q, a2)
		}
	}
	// A training that runs: charged to the unit's account before reading;
	// after the charge the outcome depends on the m of the noisy person
	// count only (a DP release, so u2 and u3 may differ), and it is a model
	// or the generic failure (the 1 KiB memory limit on the m-row set),
	// never a message with a count.
	for _, q := range []string{
		"SELECT DP_TRAIN('DB.people', 1, 'linreg', 'label=age; features=id')",
	} {
		for _, db := range []string{"u2", "u3"} {
			a := render("ana", q, db)
			if !(strings.HasPrefix(a, "linreg_people_") || strings.Contains(a, "the mechanism failed after reading the data")) {
				t.Errorf("analyst, %s on %s: %s; want a model or the generic failure", q, db, a)
			}
		}
	}
	for _, tbl := range []string{"u2.people", "u3.people"} {
		if s := spent(t, ts.connect("root", rootPW, tbl[:2]), tbl); s != 1 {
			t.Errorf("%s: spent %v, want the one training's 1", tbl, s)
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

// TestUnitDumpRestore (issue 27): a dump of the three tables of a unit
// (what mysqldump writes: foreign key checks off, tables in name order)
// restores into a fresh server with the declarations AND the unit's shared
// account: its totals, its spend and its ledger, enforced; restoring again
// counts nothing twice; a restore into another database name moves the
// unit there.
func TestUnitDumpRestore(t *testing.T) {
	a := startServer(t, t.TempDir())
	rootA := setupShop(t, a)
	anaA := shopAnalyst(t, a, rootA, "ana")
	mustExec(t, anaA, "SET SESSION dp_epsilon = 1.5")
	queryFloat(t, anaA, "SELECT COUNT(*) FROM orders")
	tables := []string{"customers", "items", "orders"}
	var dump []string
	for _, tbl := range tables {
		dump = append(dump, dumpTable(t, rootA, tbl)...)
	}

	for _, db := range []string{"shop", "shop2"} {
		b := startServer(t, t.TempDir())
		rb := b.connect("root", rootPW, "")
		mustExec(t, rb, "CREATE DATABASE "+db)
		mustExec(t, rb, "CREATE USER 'ana'@'%' IDENTIFIED BY 'ana-pw'")
		mustExec(t, rb, "GRANT SELECT, EXECUTE ON "+db+".* TO 'ana'@'%'")
		rootB := b.connect("root", rootPW, db)
		rootB.SetMaxOpenConns(1)
		mustExec(t, rootB, "SET FOREIGN_KEY_CHECKS = 0")
		replay(t, rootB, dump)
		mustExec(t, rootB, "SET FOREIGN_KEY_CHECKS = 1")
		for _, tbl := range tables {
			key := db + "." + tbl
			var total, spentEps float64
			if err := rootB.QueryRow("SELECT epsilon_total, epsilon_spent FROM dp_budget WHERE table_name = ?", key).Scan(&total, &spentEps); err != nil {
				t.Fatalf("%s: dp_budget after the restore: %v", key, err)
			}
			if total != 20 || math.Abs(spentEps-1.5) > 1e-12 {
				t.Fatalf("%s restored with ε total %v, spent %v; want the unit's 20 and 1.5", key, total, spentEps)
			}
			if m, ok := b.e.Catalog.UnitOf(key); !ok || m.Unit != db+".customer" {
				t.Fatalf("%s restored in unit %+v (%v), want %s.customer", key, m, ok, db)
			}
		}
		unitAcct := "unit:" + db + ".customer"
		if n := ledgerRows(t, rootB, unitAcct); n != 1 {
			t.Fatalf("%s: %d ledger rows after the restore, want the dumped 1", unitAcct, n)
		}
		anaB := b.connect("ana", "ana-pw", db)
		anaB.SetMaxOpenConns(1)
		for _, tbl := range tables {
			wantErr(t, anaB, "SELECT * FROM "+tbl, "protected")
		}
		// The restored account is the one charged and enforced: 20 − 1.5 left.
		mustExec(t, anaB, "SET SESSION dp_epsilon = 18.6")
		wantErr(t, anaB, "SELECT COUNT(*) FROM items", "budget")
		mustExec(t, anaB, "SET SESSION dp_epsilon = 0.5")
		if n := queryFloat(t, anaB, "SELECT COUNT(*) FROM items"); math.Abs(n-201) > 60 {
			t.Fatalf("restored unit: COUNT(*) FROM items = %v, want 201 persons ± noise", n)
		}
		if s := spent(t, rootB, db+".customers"); math.Abs(s-2) > 1e-12 {
			t.Fatalf("spent after a query on the restored unit = %v, want 2", s)
		}
		// Replaying the (older) dump again counts its release once.
		mustExec(t, rootB, "SET FOREIGN_KEY_CHECKS = 0")
		replay(t, rootB, dump)
		for _, tbl := range tables {
			if s := spent(t, rootB, db+"."+tbl); math.Abs(s-2) > 1e-12 {
				t.Fatalf("%s: spent %v after re-restoring, want 2", tbl, s)
			}
		}
		if n := ledgerRows(t, rootB, unitAcct); n != 2 {
			t.Fatalf("%s: %d ledger rows after re-restoring, want 2", unitAcct, n)
		}
	}
}

// TestUnitQuotaAndBudgetShared (issue 27): dp_quota set on one table of a
// unit caps the analyst's spend on the unit's one account, whichever member
// a query reads; dp_budget and dp_quotas show the same shared figures on
// every member; a quota set through another member replaces it (one
// account, one quota).
func TestUnitQuotaAndBudgetShared(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupShop(t, ts)
	ana, bob := shopAnalyst(t, ts, root, "ana"), shopAnalyst(t, ts, root, "bob")
	mustExec(t, root, "CALL dp_quota('ana', 'customers', 1, 0)")
	mustExec(t, ana, "SET SESSION dp_epsilon = 0.6")
	queryFloat(t, ana, "SELECT COUNT(*) FROM orders")
	// 0.6 of ana's 1 is spent through orders: 0.6 more through items (or
	// customers) is over her unit quota, and nothing is charged.
	wantErr(t, ana, "SELECT COUNT(*) FROM items", "quota")
	wantErr(t, ana, "SELECT COUNT(*) FROM customers", "quota")
	tables := []string{"shop.customers", "shop.items", "shop.orders"}
	figures := func(c *sql.DB, q string) []string {
		var out []string
		for _, tbl := range tables {
			out = append(out, queryString(t, c, q, tbl))
		}
		return out
	}
	for _, got := range figures(ana, "SELECT CONCAT(epsilon_total, '/', epsilon_spent, '/', my_epsilon_spent, '/', my_epsilon_remaining, '/', my_epsilon_quota) FROM dp_budget WHERE table_name = ?") {
		if got != "20/0.6/0.6/0.4/1" {
			t.Fatalf("ana's dp_budget on the unit's tables: %q, want 20/0.6/0.6/0.4/1 on each", figures(ana, "SELECT CONCAT(epsilon_total, '/', epsilon_spent, '/', my_epsilon_spent, '/', my_epsilon_remaining, '/', my_epsilon_quota) FROM dp_budget WHERE table_name = ?"))
		}
	}
	// Another analyst is not bound by ana's quota, and spends the same account.
	mustExec(t, bob, "SET SESSION dp_epsilon = 0.6")
	queryFloat(t, bob, "SELECT COUNT(*) FROM items")
	for _, tbl := range tables {
		if s := spent(t, root, tbl); math.Abs(s-1.2) > 1e-12 {
			t.Fatalf("%s: spent %v, want the unit's 1.2", tbl, s)
		}
	}
	// A quota set through items is the unit's quota: it replaces ana's 1.
	mustExec(t, root, "CALL dp_quota('ana', 'items', 2, 0)")
	for _, got := range figures(root, "SELECT CONCAT(user, ':', epsilon_quota, ':', epsilon_spent) FROM dp_quotas WHERE user = 'ana' AND table_name = ?") {
		if got != "ana:2:0.6" {
			t.Fatalf("dp_quotas for ana on the unit's tables: %v, want ana:2:0.6 on each", figures(root, "SELECT CONCAT(user, ':', epsilon_quota, ':', epsilon_spent) FROM dp_quotas WHERE user = 'ana' AND table_name = ?"))
		}
	}
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM dp_quotas WHERE user = 'ana'"); n != 3 {
		t.Fatalf("%v dp_quotas rows for ana, want one per table of the unit", n)
	}
	queryFloat(t, ana, "SELECT COUNT(*) FROM customers")
	if s := spent(t, root, "shop.orders"); math.Abs(s-1.8) > 1e-12 {
		t.Fatalf("spent %v after ana's second query under the raised quota, want 1.8", s)
	}
}

// shopAnalyst creates analyst user (password user-pw) with SELECT and
// EXECUTE on shop and returns a one-connection pool (session settings
// stick).
func shopAnalyst(t *testing.T, ts *testServer, root *sql.DB, user string) *sql.DB {
	t.Helper()
	mustExec(t, root, "CREATE USER '"+user+"'@'%' IDENTIFIED BY '"+user+"-pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON shop.* TO '"+user+"'@'%'")
	c := ts.connect(user, user+"-pw", "shop")
	c.SetMaxOpenConns(1)
	return c
}
