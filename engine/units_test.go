package engine_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
)

// TestPrivacyUnitDeclarations (issue 27, docs/privacy/units.md): over the
// wire, the owner declares a unit on a two-table shop; its tables share one
// budget (dp_protect, dp_budget, dp_quota); row-level releases on them are
// refused before charging; raw rows stay refused; a table with row-level
// releases cannot join; declarations cannot change; the dump carries them.
func TestPrivacyUnitDeclarations(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE shop")
	root := ts.connect("root", rootPW, "shop")
	mustExec(t, root, "CREATE TABLE customers (id INT PRIMARY KEY, region VARCHAR(16))")
	mustExec(t, root, "CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT, amount DOUBLE, FOREIGN KEY (customer_id) REFERENCES customers(id))")
	var cs, os []string
	for c := 0; c < 100; c++ {
		cs = append(cs, fmt.Sprintf("(%d, '%s')", c, []string{"north", "south"}[c%2]))
	}
	for o := 0; o < 600; o++ {
		c := 0 // customer 0 has 500 orders
		if o >= 500 {
			c = o - 500
		}
		os = append(os, fmt.Sprintf("(%d, %d, %d)", o, c, o%100))
	}
	mustExec(t, root, "INSERT INTO customers VALUES "+strings.Join(cs, ","))
	mustExec(t, root, "INSERT INTO orders VALUES "+strings.Join(os, ","))
	mustExec(t, root, "CALL dp_bounds('orders', 'amount', 0, 100)")
	mustExec(t, root, "CREATE USER 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON shop.* TO 'ana'@'%'")
	ana := ts.connect("ana", "ana-pw", "shop")

	// customers is protected (row level, nothing released) before the unit
	// exists: the unit's account starts from its budget.
	mustExec(t, root, "CALL dp_protect('customers', 4, 1e-6)")
	wantErr(t, ana, "CALL dp_privacy_unit('customers', 'id', 'customer')", "only data owners")
	mustExec(t, root, "CALL dp_privacy_unit('customers', 'id', 'customer')")
	mustExec(t, root, "CALL dp_privacy_unit('orders', 'customer_id', 'customer')")
	for _, tbl := range []string{"shop.customers", "shop.orders"} {
		var rows int
		var total float64
		if err := root.QueryRow("SELECT COUNT(*), MAX(epsilon_total) FROM dp_budget WHERE table_name = ?", tbl).Scan(&rows, &total); err != nil || rows != 1 || total != 4 {
			t.Fatalf("%s after the declaration: %d row(s), ε total %v (%v); want one row with the seeded 4", tbl, rows, total, err)
		}
	}
	wantErr(t, ana, "SELECT * FROM orders", "protected") // protected as it joined
	wantErr(t, root, "CALL dp_privacy_unit('orders', 'id', 'customer')", "cannot change")
	wantErr(t, root, "CALL dp_privacy_unit('orders', 'nope', 'customer')", "no column")
	wantErr(t, root, "CALL dp_privacy_unit('orders', 'customer_id', 'bad name')", "unit name")

	// One budget: protecting orders protects customers too.
	mustExec(t, root, "CALL dp_protect('orders', 3, 1e-6)")
	for _, tbl := range []string{"shop.customers", "shop.orders"} {
		if got := queryFloat(t, root, "SELECT epsilon_total FROM dp_budget WHERE table_name = ?", tbl); got != 3 {
			t.Fatalf("%s: epsilon_total %v, want the unit's 3", tbl, got)
		}
	}
	wantErr(t, ana, "SELECT * FROM customers", "protected")
	wantErr(t, ana, "SELECT * FROM orders", "protected")

	// A training on a unit table keeps one row per person (units.md §10);
	// a public-input refusal (no feature) charges nothing.
	wantErr(t, ana, "SELECT DP_TRAIN('orders', 0.5, 'linreg', 'label=amount')", "no feature columns")
	for _, tbl := range []string{"shop.customers", "shop.orders"} {
		if s := spent(t, root, tbl); s != 0 {
			t.Fatalf("%s: spent %v after refused releases", tbl, s)
		}
	}
	// Aggregate SQL goes through the person-level compiler and charges the
	// unit's one account.
	agg := ts.connect("ana", "ana-pw", "shop")
	agg.SetMaxOpenConns(1)
	mustExec(t, agg, "SET SESSION dp_epsilon = 0.5")
	if n := queryFloat(t, agg, "SELECT COUNT(*) FROM orders WHERE amount > 1"); math.Abs(n-99) > 40 {
		t.Fatalf("COUNT(*) WHERE amount > 1 = %v, want ≈ 99 customers", n)
	}
	for _, tbl := range []string{"shop.customers", "shop.orders"} {
		if s := spent(t, root, tbl); s != 0.5 {
			t.Fatalf("%s: spent %v, want the unit's 0.5", tbl, s)
		}
	}

	// dp_quota on a member caps the account's share of the unit.
	mustExec(t, root, "CALL dp_quota('ana', 'customers', 1, 0)")
	var n int
	if err := root.QueryRow("SELECT COUNT(*) FROM dp_quotas WHERE user = 'ana' AND epsilon_quota = 1").Scan(&n); err != nil || n != 2 {
		t.Fatalf("dp_quotas rows for the unit: %d (%v), want one per table", n, err)
	}

	// A table with row-level releases cannot join the unit.
	mustExec(t, root, "CREATE TABLE notes (id INT PRIMARY KEY, customer_id INT, score DOUBLE)")
	mustExec(t, root, "INSERT INTO notes VALUES (1, 1, 5), (2, 2, 6)")
	mustExec(t, root, "CALL dp_bounds('notes', 'score', 0, 10)")
	mustExec(t, root, "CALL dp_protect('notes', 2, 0)")
	if _, err := ana.Exec("SELECT DP_MEAN('notes', 'score', 0.5)"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, root, "CALL dp_privacy_unit('notes', 'customer_id', 'customer')", "row-level releases")

	// The declaration travels in the owner's dump (SHOW CREATE TABLE comment).
	var name, create string
	if err := root.QueryRow("SHOW CREATE TABLE orders").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(create, `"unit":{"unit":"shop.customer","column":"customer_id"`) {
		t.Fatalf("dump of orders does not carry its unit: %s", create)
	}
}

// TestAnalystBypassSuiteUnits runs every statement of the analyst bypass
// suite that reads demo.people against a people table of a declared
// privacy unit, with and without a DP budget in the session: each is
// refused and echoes no row value, except, with a budget, the four plain
// aggregates, answered with person-level DP and charged to the unit, and
// the one valid training (one row per person, units.md §10).
func TestAnalystBypassSuiteUnits(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE demo")
	root := ts.connect("root", rootPW, "demo")
	mustExec(t, root, "CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(64), age DOUBLE, town INT)")
	mustExec(t, root, "CREATE TABLE visits (id INT PRIMARY KEY, person_id INT, minutes DOUBLE, FOREIGN KEY (person_id) REFERENCES people(id))")
	mustExec(t, root, "CREATE TABLE towns (id INT PRIMARY KEY, tname VARCHAR(64))")
	mustExec(t, root, "INSERT INTO towns VALUES (0,'a'),(1,'b'),(2,'c')")
	var p, v []string
	for i := 0; i < 50; i++ {
		p = append(p, fmt.Sprintf("(%d, 'person%d', %d, %d)", i, i, 20+i, i%3))
		v = append(v, fmt.Sprintf("(%d, %d, %d)", i, i%7, i))
	}
	mustExec(t, root, "INSERT INTO people VALUES "+strings.Join(p, ","))
	mustExec(t, root, "INSERT INTO visits VALUES "+strings.Join(v, ","))
	mustExec(t, root, "CALL dp_bounds('people', 'age', 0, 100)")
	mustExec(t, root, "CALL dp_domain('people', 'town', '0,1,2')")
	mustExec(t, root, "CALL dp_privacy_unit('people', 'id', 'person')")
	mustExec(t, root, "CALL dp_privacy_unit('visits', 'person_id', 'person')")
	mustExec(t, root, "CALL dp_protect('visits', 10, 1e-6)")
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, CREATE VIEW, DROP, ALTER, EXECUTE, TRIGGER ON demo.* TO 'ana'@'%'")
	leak := regexp.MustCompile(`person\d`)
	// With a budget, the suite's plain aggregates are answered with
	// person-level DP (the point of units); everything else stays refused.
	dpAnswered := map[string]bool{
		"SELECT AVG(age) FROM people": true, "SELECT COUNT(*) FROM people WHERE age > 40": true,
		"SELECT SUM(age) FROM people": true, "SELECT town, COUNT(*) FROM people GROUP BY town": true,
	}
	// Trainings on a unit table are person-level releases (units.md §10):
	// the suite's one valid training is answered (without a session budget
	// too: DP functions carry their ε) and charged once; on the second
	// pass its model name is taken.
	trainings := map[string]bool{"SELECT DP_LSQ('people', 1, 'linear', 'label=age; model=m_people')": true}
	n, answered, trained := 0, 0, 0
	for _, budget := range []string{"", "SET SESSION dp_epsilon = 1"} {
		c := ts.connect("ana", "ana-pw", "demo")
		c.SetMaxOpenConns(1)
		if budget != "" {
			mustExec(t, c, budget)
		}
		for _, q := range bypassStatements {
			if !strings.Contains(strings.ToLower(q), "people") || strings.Contains(q, "owner_view") || strings.Contains(q, "ROOTCONN") {
				continue
			}
			n++
			err := queryErr(c, q)
			if err == nil && budget != "" && dpAnswered[q] {
				answered++ // a DP answer (numbers only), charged to the unit
				continue
			}
			if err == nil && trainings[q] {
				trained++ // a person-level model, charged to the unit
				continue
			}
			if err == nil {
				t.Errorf("%q, %s: accepted", budget, q)
				continue
			}
			if leak.MatchString(err.Error()) {
				t.Errorf("%s: error leaks a value: %v", q, err)
			}
		}
		for _, q := range []string{"SELECT * FROM visits", "SELECT SUM(minutes) FROM visits", "SELECT v.minutes FROM visits v JOIN people p ON v.person_id = p.id"} {
			if err := queryErr(c, q); err == nil {
				t.Errorf("%q, %s: accepted", budget, q)
			}
		}
	}
	if n < 60 {
		t.Fatalf("only %d statements ran", n)
	}
	if answered != len(dpAnswered) {
		t.Fatalf("%d of the %d DP-answerable aggregates were answered", answered, len(dpAnswered))
	}
	if trained != len(trainings) {
		t.Fatalf("%d of the %d valid trainings ran", trained, len(trainings))
	}
	for _, tbl := range []string{"demo.people", "demo.visits"} {
		if s := spent(t, root, tbl); s != float64(answered+trained) {
			t.Fatalf("%s: spent %v after the suite, want %d (the DP answers only)", tbl, s, answered+trained)
		}
	}
	if got := queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger"); got != float64(answered+trained) {
		t.Fatalf("%v ledger entries after the suite, want %d", got, answered+trained)
	}
}

// TestUnitQueriesOverTheWire (issue 27): the three-table shop customers ←
// orders ← items with the unit declared on customers only (orders and items
// inherit through their FOREIGN KEYs); an analyst's ordinary aggregate SQL
// with SET SESSION dp_epsilon compiles through the privacy-unit compiler:
// one-table, two-table and three-table queries grouped by a customer
// attribute; a customer with 500 orders moves COUNT by at most C = 1 plus
// noise; every query spends the one budget dp_budget shows on all three
// tables; a non-preserving join and raw reads are refused without charge.
// setupShop builds the three-table shop (customers ← orders ← items, the
// unit declared on customers only; customer 0 has 500 orders) with a
// budget of ε = 20, δ = 10⁻⁶ for the unit.
func setupShop(t *testing.T, ts *testServer) *sql.DB {
	t.Helper()
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE shop")
	root := ts.connect("root", rootPW, "shop")
	mustExec(t, root, "CREATE TABLE customers (id INT PRIMARY KEY, region VARCHAR(16))")
	mustExec(t, root, "CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT, amount DOUBLE, FOREIGN KEY (customer_id) REFERENCES customers(id))")
	mustExec(t, root, "CREATE TABLE items (id INT PRIMARY KEY, order_id INT, qty INT, FOREIGN KEY (order_id) REFERENCES orders(id))")
	var cs, os, is []string
	for c := 0; c < 201; c++ {
		cs = append(cs, fmt.Sprintf("(%d, '%s')", c, []string{"north", "south"}[c%2]))
	}
	for o := 0; o < 700; o++ {
		c := 0 // customer 0 (north) has 500 orders
		if o >= 500 {
			c = o - 499
		}
		os = append(os, fmt.Sprintf("(%d, %d, %d)", o, c, 10))
		is = append(is, fmt.Sprintf("(%d, %d, 2)", o, o))
	}
	mustExec(t, root, "INSERT INTO customers VALUES "+strings.Join(cs, ","))
	mustExec(t, root, "INSERT INTO orders VALUES "+strings.Join(os, ","))
	mustExec(t, root, "INSERT INTO items VALUES "+strings.Join(is, ","))
	mustExec(t, root, "CALL dp_bounds('orders', 'amount', 0, 100)")
	mustExec(t, root, "CALL dp_bounds('items', 'qty', 0, 10)")
	mustExec(t, root, "CALL dp_domain('customers', 'region', 'north,south')")
	mustExec(t, root, "CALL dp_privacy_unit('customers', 'id', 'customer')")
	mustExec(t, root, "CALL dp_protect('customers', 20, 1e-6)")
	for _, tbl := range []string{"shop.customers", "shop.orders", "shop.items"} {
		if got := queryFloat(t, root, "SELECT epsilon_total FROM dp_budget WHERE table_name = ?", tbl); got != 20 {
			t.Fatalf("%s: ε total %v, want the unit's 20 (inherited through the foreign keys)", tbl, got)
		}
	}
	return root
}

func TestUnitQueriesOverTheWire(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupShop(t, ts)
	ana := shopAnalyst(t, ts, root, "ana")
	for _, q := range []string{"SELECT * FROM customers", "SELECT * FROM orders", "SELECT * FROM items"} {
		wantErr(t, ana, q, "protected")
	}
	mustExec(t, ana, "SET SESSION dp_epsilon = 1")

	// One table: a customer with 500 orders counts once (C = 1).
	n := queryFloat(t, ana, "SELECT COUNT(*) FROM orders")
	if math.Abs(n-201) > 30 { // Laplace scale 1: |noise| > 30 has probability e^-30
		t.Fatalf("COUNT(*) FROM orders = %v, want 201 persons ± noise (700 rows: the heavy customer must count once)", n)
	}
	// Two tables, grouped by a customer attribute.
	rows, err := ana.Query("SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS s FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region ORDER BY c.region")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]float64{}
	for rows.Next() {
		var r string
		var c, s float64
		if err := rows.Scan(&r, &c, &s); err != nil {
			t.Fatal(err)
		}
		got[r] = [2]float64{c, s}
	}
	rows.Close()
	// north: 100 customers + the heavy one; south 100; SUM per person ≤ C·100.
	// Scales at ε = 1 split over the two vectors: COUNT 2, SUM ≈ 200; the
	// bounds are 15 and 14 scales (each exceeded with probability < 10⁻⁶).
	// Unclamped, the heavy customer alone would put north at 6000.
	if len(got) != 2 || math.Abs(got["north"][0]-101) > 30 || math.Abs(got["south"][0]-100) > 30 ||
		math.Abs(got["north"][1]-(100*10+100)) > 2800 || math.Abs(got["south"][1]-1000) > 2800 {
		t.Fatalf("orders by region %v", got)
	}
	// Three tables.
	var north float64
	if err := ana.QueryRow("SELECT COUNT(*) FROM items i JOIN orders o ON i.order_id = o.id JOIN customers c ON o.customer_id = c.id WHERE c.region = 'north' GROUP BY c.region").Scan(&north); err != nil {
		t.Fatal(err)
	}
	if math.Abs(north-101) > 30 {
		t.Fatalf("items in north %v, want 101 ± noise", north)
	}
	spentNow := spent(t, root, "shop.customers")
	if spentNow != 3 {
		t.Fatalf("spent %v after three queries at ε = 1", spentNow)
	}
	// The same query on the same snapshot: from the cache, no charge.
	_ = queryFloat(t, ana, "SELECT COUNT(*) FROM orders")
	// Refused before any charge: a join that does not preserve the unit.
	wantErr(t, ana, "SELECT COUNT(*) FROM orders o JOIN customers c ON o.id = c.id", "does not preserve")
	wantErr(t, ana, "SELECT MAX(amount) FROM orders", "not supported")
	for _, tbl := range []string{"shop.customers", "shop.orders", "shop.items"} {
		if s := spent(t, root, tbl); s != 3 {
			t.Fatalf("%s: spent %v, want the unit's 3 on every table", tbl, s)
		}
	}
}

// TestUnitFunctionsOverTheWire (issue 27 item 5): DP_MEAN, DP_HISTOGRAM and
// DP_QUANTILE on the shop's tables run at person level through the compiler and charge
// the unit's one account. Customer 0 has 500 orders of amount 100, the 200
// others one order of 10: row level, the mean would be ≈ 74.3 and the top
// bin 500; person level, customer 0 is one mean in [0, 100] and one row in
// one bin (k = C = 1), so the answers stay at ≈ 10.4 and 1 plus noise.
func TestUnitFunctionsOverTheWire(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupShop(t, ts)
	mustExec(t, root, "UPDATE orders SET amount = 100 WHERE customer_id = 0")
	mustExec(t, root, "CREATE USER 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON shop.* TO 'ana'@'%'")
	ana := ts.connect("ana", "ana-pw", "shop")
	tables := []string{"shop.customers", "shop.orders", "shop.items"}
	spentAll := func(want float64) {
		t.Helper()
		for _, tbl := range tables {
			if s := spent(t, root, tbl); math.Abs(s-want) > 1e-9 {
				t.Fatalf("%s: spent %v, want the unit's %v", tbl, s, want)
			}
		}
	}

	// Dry runs name the unit, its account and the per-person bound; no charge.
	dry := queryString(t, ana, "SELECT DP_MEAN('orders', 'amount', 2, 'dry_run=1')")
	for _, frag := range []string{`"unit":"shop.customer"`, `"account":"unit:shop.customer"`, `"per_person_bound":"each person contributes one mean clamped to [0, 100]`, `"persons_laplace_scale":1`, `"charged":false`} {
		if !strings.Contains(dry, frag) {
			t.Fatalf("DP_MEAN dry run lacks %s: %s", frag, dry)
		}
	}
	if strings.Contains(dry, `"n":`) {
		t.Fatalf("the dry run shows a row count, not public on a unit's table: %s", dry)
	}
	dry = queryString(t, ana, "SELECT DP_HISTOGRAM('orders', 'amount', 1, 'bins=4; max_groups_contributed=2; max_rows_contributed_per_group=3; dry_run=1')")
	for _, frag := range []string{`"unit":"shop.customer"`, `"max_groups_contributed":2`, `"max_rows_contributed_per_group":3`, `"laplace_scale":6`, `k·C = 6`} {
		if !strings.Contains(dry, frag) {
			t.Fatalf("DP_HISTOGRAM dry run lacks %s: %s", frag, dry)
		}
	}
	spentAll(0)

	// Refused on public inputs, before any charge.
	wantErr(t, ana, "SELECT DP_MEAN('customers', 'region', 1)", "no declared bounds")
	wantErr(t, ana, "SELECT DP_MEAN('orders', 'amount', 100)", "budget")
	wantErr(t, ana, "SELECT DP_HISTOGRAM('orders', 'amount', 1, 'bins=4; max_groups_contributed=0')", "must be > 0")
	wantErr(t, ana, "SELECT DP_QUANTILE('orders', 'amount', 0.5, 1, 'max_groups_contributed=2')", "unknown option")
	// Trainings run at person level (TestUnitTrainingsOverTheWire); a
	// public-input refusal charges nothing.
	wantErr(t, ana, "SELECT DP_TRAIN('orders', 1, 'linreg', 'label=amount')", "no feature columns")
	spentAll(0)

	// DP_MEAN at ε = 2: scales 1 (persons) and 50·σ (sum of person means
	// centred at 50). Person means: 100 once, 10 two hundred times; within
	// 15 scales of each noise the answer is in [3.2, 16.7], far from the
	// row-level 74.3.
	mean := queryFloat(t, ana, "SELECT DP_MEAN('orders', 'amount', 2)")
	if mean < 3 || mean > 17 {
		t.Fatalf("DP_MEAN = %v, want ≈ 10.4 (the heavy customer is one person mean), not the row-level 74.3", mean)
	}
	spentAll(2)

	// DP_HISTOGRAM at ε = 1, k = C = 1: scale 1 per bin.
	var h struct {
		N    *int64 `json:"n"`
		Unit string `json:"unit"`
		Bins []struct {
			Label string  `json:"label"`
			Count float64 `json:"count"`
		} `json:"bins"`
	}
	if err := json.Unmarshal([]byte(queryString(t, ana, "SELECT DP_HISTOGRAM('orders', 'amount', 1, 'bins=4')")), &h); err != nil {
		t.Fatal(err)
	}
	if h.Unit != "shop.customer" || h.N != nil || len(h.Bins) != 4 || math.Abs(h.Bins[0].Count-200) > 15 || math.Abs(h.Bins[3].Count-1) > 15 || h.Bins[1].Count > 15 || h.Bins[2].Count > 15 {
		t.Fatalf("DP_HISTOGRAM %+v: want ≈ [200, 0, 0, 1] (the 500 orders count once), no row count", h)
	}
	spentAll(3)

	// The table form, over a declared domain of the root table.
	rows, err := ana.Query("SELECT bin, count FROM DP_HISTOGRAM('customers', 'region', 1) AS h ORDER BY bin")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for rows.Next() {
		var b string
		var c float64
		if err := rows.Scan(&b, &c); err != nil {
			t.Fatal(err)
		}
		got[b] = c
	}
	rows.Close()
	if len(got) != 2 || math.Abs(got["north"]-101) > 15 || math.Abs(got["south"]-100) > 15 {
		t.Fatalf("regions %v, want ≈ 101 / 100", got)
	}
	spentAll(4)

	// DP_QUANTILE at ε = 1, C = 1: customers 1..200 now have amounts
	// 0..49 (four each), the heavy customer 500 orders at 100. Person level
	// the median is ≈ 25; row level (700 rows, 500 of them at 100) it is 100.
	mustExec(t, root, "UPDATE orders SET amount = customer_id % 50 WHERE customer_id > 0")
	dry = queryString(t, ana, "SELECT DP_QUANTILE('orders', 'amount', 0.5, 1, 'dry_run=1')")
	for _, frag := range []string{`"unit":"shop.customer"`, `"max_rows_contributed_per_group":1`, `"laplace_scale":2`, `"account":"unit:shop.customer"`} {
		if !strings.Contains(dry, frag) {
			t.Fatalf("DP_QUANTILE dry run lacks %s: %s", frag, dry)
		}
	}
	if med := queryFloat(t, ana, "SELECT DP_QUANTILE('orders', 'amount', 0.5, 1)"); med < 10 || med > 40 {
		t.Fatalf("DP_QUANTILE median %v, want ≈ 25 (the 500 orders at 100 are one value), not the row-level 100", med)
	}
	spentAll(5)

	// The ledger records the releases on the unit's account.
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger WHERE function_name IN ('DP_MEAN', 'DP_HISTOGRAM', 'DP_QUANTILE') AND table_name = 'unit:shop.customer'"); n != 4 {
		t.Fatalf("%v ledger rows on the unit's account, want 4", n)
	}
}
