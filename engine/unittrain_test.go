package engine_test

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// setupTrainShop is a two-table shop for person-level trainings: 400
// customers (age, region), orders with amount and a label big = amount > 50
// that follows the customer's age; customer 0 has 500 orders.
func setupTrainShop(t *testing.T, ts *testServer, budget float64) (root, ana *sql.DB) {
	t.Helper()
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE shop")
	root = ts.connect("root", rootPW, "shop")
	mustExec(t, root, "CREATE TABLE customers (id INT PRIMARY KEY, age DOUBLE, region VARCHAR(16))")
	mustExec(t, root, "CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT, amount DOUBLE, big VARCHAR(3), FOREIGN KEY (customer_id) REFERENCES customers(id))")
	var cs, os []string
	for c := 0; c < 400; c++ {
		cs = append(cs, fmt.Sprintf("(%d, %d, '%s')", c, 20+c%60, []string{"north", "south"}[c%2]))
	}
	id := 0
	order := func(c int) {
		amount := float64(c%60) * 100 / 60 // the customer's age decides the amount
		big := "no"
		if amount > 50 {
			big = "yes"
		}
		os = append(os, fmt.Sprintf("(%d, %d, %g, '%s')", id, c, amount, big))
		id++
	}
	for i := 0; i < 500; i++ {
		order(0)
	}
	for c := 1; c < 400; c++ {
		for k := 0; k < 1+c%3; k++ {
			order(c)
		}
	}
	mustExec(t, root, "INSERT INTO customers VALUES "+strings.Join(cs, ","))
	mustExec(t, root, "INSERT INTO orders VALUES "+strings.Join(os, ","))
	mustExec(t, root, "CALL dp_bounds('orders', 'amount', 0, 100)")
	mustExec(t, root, "CALL dp_labels('orders', 'big', 'no,yes')")
	mustExec(t, root, "CALL dp_bounds('orders', 'customer_id', 0, 400)")
	mustExec(t, root, "CALL dp_bounds('customers', 'age', 0, 100)")
	mustExec(t, root, "CALL dp_domain('customers', 'region', 'north,south')")
	mustExec(t, root, "CALL dp_privacy_unit('customers', 'id', 'customer')")
	mustExec(t, root, fmt.Sprintf("CALL dp_protect('customers', %g, 1e-5)", budget))
	ana = shopAnalyst(t, ts, root, "ana")
	return root, ana
}

// TestUnitTrainingsOverTheWire (issue 27 item 5, units.md §10): every
// training kind, the papers' functions and DP_EVALUATE run on the tables of
// a unit through the one-row-per-person reduction; each charge lands on
// the unit's account that dp_budget shows on every member; public-input
// refusals charge nothing; dry runs name the unit and the bound and show no
// row count; raw rows stay refused.
func TestUnitTrainingsOverTheWire(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root, ana := setupTrainShop(t, ts, 100)
	want := 0.0
	spentAll := func(w float64) {
		t.Helper()
		for _, tbl := range []string{"shop.customers", "shop.orders"} {
			if s := spent(t, root, tbl); s < w-1e-9 || s > w+1e-9 {
				t.Fatalf("%s: spent %v, want the unit's %v", tbl, s, w)
			}
		}
	}

	// Dry run: the unit, the bound, the split; no n.
	dry := queryString(t, ana, "SELECT DP_TRAIN('orders', 1, 'gnb', 'label=big; features=amount; dry_run=1')")
	for _, frag := range []string{`"unit":"shop.customer"`, `"account":"unit:shop.customer"`, `one row per person, uniformly chosen`,
		`"persons_count":0.05`, `"row_level":0.95`, `"charged":false`, `"rows_per_person":1`} {
		if !strings.Contains(dry, frag) {
			t.Fatalf("dry run lacks %s: %s", frag, dry)
		}
	}
	if strings.Contains(dry, `"n":`) {
		t.Fatalf("the dry run shows a row count: %s", dry)
	}
	spentAll(0)

	// Refused on public inputs, before any charge.
	wantErr(t, ana, "SELECT DP_TRAIN('orders', 1, 'gnb', 'label=nope')", "no column")
	wantErr(t, ana, "SELECT DP_TRAIN('orders', 1, 'nokind', 'label=big')", "unknown kind")
	wantErr(t, ana, "SELECT DP_SVM_TRAIN('orders', 1, 'linear', 'label=big; c=-1')", "")
	wantErr(t, ana, "SELECT DP_TRAIN('orders', 1000, 'gnb', 'label=big; features=amount')", "budget")
	wantErr(t, ana, "SELECT DP_EVALUATE('nomodel', 'orders', 1)", "")
	spentAll(0)

	// Every kind on orders (label big), regression kinds on amount.
	classify := []string{"gnb", "lda", "qda", "logreg", "svm", "lmgc", "auto"}
	models := map[string]string{}
	for _, k := range classify {
		name := queryString(t, ana, fmt.Sprintf("SELECT DP_TRAIN('orders', 1, '%s', 'label=big; features=amount')", k))
		models[k] = name
		want++
		spentAll(want)
	}
	for _, k := range []string{"linreg", "lsq"} {
		models[k] = queryString(t, ana, fmt.Sprintf("SELECT DP_TRAIN('orders', 1, '%s', 'label=amount; features=customer_id')", k))
		want++
		spentAll(want)
	}
	for _, q := range []string{
		"SELECT DP_SVM_TRAIN('orders', 1, 'linear', 'label=big; features=amount')",
		"SELECT DP_LSQ('orders', 1, 'linear', 'label=amount; features=customer_id')",
		"SELECT DP_LMGC_TRAIN('orders', 1, 'label=big; features=amount')",
		"SELECT DP_TRAIN('customers', 1, 'logreg', 'label=region; features=age')",
	} {
		models[q] = queryString(t, ana, q)
		want++
		spentAll(want)
	}
	if v := queryFloat(t, ana, "SELECT DP_LSQ_PREDICT('orders', 1, 'linear', 'label=amount; features=customer_id', 5)"); v < -1e6 || v > 1e6 {
		t.Fatalf("DP_LSQ_PREDICT = %v", v)
	}
	want++
	spentAll(want)

	// The models predict; dp_models shows m, the public size.
	for k, name := range models {
		var out sql.NullString
		if err := ana.QueryRow("SELECT DP_PREDICT('" + name + "', 70)").Scan(&out); err != nil || !out.Valid {
			t.Fatalf("DP_PREDICT on %s (%s): %v %v", name, k, out, err)
		}
	}
	params := queryString(t, root, "SELECT params FROM dpsql.dp_models WHERE name = ?", models["gnb"])
	if !strings.Contains(params, "privacy_unit=shop.customer") || !strings.Contains(params, "rows=one per person") {
		t.Fatalf("dp_models params %q do not say the model is person level", params)
	}

	// DP_EVALUATE on a unit table: the gnb model separates yes/no by amount.
	acc := queryFloat(t, ana, "SELECT DP_EVALUATE('"+models["gnb"]+"', 'orders', 2)")
	want += 2
	spentAll(want)
	if acc < 0.6 || acc > 1.05 {
		t.Fatalf("person-level accuracy %v of gnb on orders; the label is a threshold of amount", acc)
	}
	dry = queryString(t, ana, "SELECT DP_EVALUATE('"+models["gnb"]+"', 'orders', 1, 'dry_run=1')")
	if !strings.Contains(dry, `"unit":"shop.customer"`) || strings.Contains(dry, `"n":`) {
		t.Fatalf("DP_EVALUATE dry run: %s", dry)
	}

	// Every charge is on the unit's account; raw rows stay refused.
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger WHERE table_name = 'unit:shop.customer'"); n != float64(len(classify)+2+4+1+1) {
		t.Fatalf("%v ledger rows on the unit's account", n)
	}
	wantErr(t, ana, "SELECT * FROM orders", "protected")
	wantErr(t, ana, "SELECT amount FROM orders WHERE customer_id = 0", "protected")
	spentAll(want)
}

// TestUnitTrainingUtility (docs/results/units.md): on a synthetic unit
// table where each of 2,000 persons has 1–20 rows (≈ 21,000 rows), the
// person-level models (one row per person, m ≈ 1,940) against the same
// kinds trained at row level on an identical row-level table and the
// majority constant, all scored exactly on a public test table. The
// person-level model must beat the constant.
func TestUnitTrainingUtility(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE u")
	root := ts.connect("root", rootPW, "u")
	mustExec(t, root, "CREATE TABLE persons (id INT PRIMARY KEY)")
	for _, tbl := range []string{"visits", "flat", "test"} {
		mustExec(t, root, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, person_id INT, x DOUBLE, z DOUBLE, y VARCHAR(3))")
	}
	mustExec(t, root, "ALTER TABLE visits ADD FOREIGN KEY (person_id) REFERENCES persons(id)")
	rng := rand.New(rand.NewSource(27))
	// y = yes iff x + z + noise > 100: a linear boundary, 30 % label noise
	// comes from the noise term.
	row := func(id, p int) string {
		x, z := rng.Float64()*100, rng.Float64()*100
		y := "no"
		if x+z+rng.NormFloat64()*25 > 100 {
			y = "yes"
		}
		return fmt.Sprintf("(%d, %d, %.3f, %.3f, '%s')", id, p, x, z, y)
	}
	var ps, vs, test []string
	id := 0
	for p := 0; p < 2000; p++ {
		ps = append(ps, fmt.Sprintf("(%d)", p))
		for k, rows := 0, 1+rng.Intn(20); k < rows; k++ {
			vs = append(vs, row(id, p))
			id++
		}
	}
	for i := 0; i < 4000; i++ {
		test = append(test, row(i, -1))
	}
	mustExec(t, root, "INSERT INTO persons VALUES "+strings.Join(ps, ","))
	for i := 0; i < len(vs); i += 2000 {
		batch := strings.Join(vs[i:min(i+2000, len(vs))], ",")
		mustExec(t, root, "INSERT INTO visits VALUES "+batch)
		mustExec(t, root, "INSERT INTO flat VALUES "+batch)
	}
	mustExec(t, root, "INSERT INTO test VALUES "+strings.Join(test, ","))
	for _, tbl := range []string{"visits", "flat", "test"} {
		mustExec(t, root, "CALL dp_bounds('"+tbl+"', 'x', 0, 100)")
		mustExec(t, root, "CALL dp_bounds('"+tbl+"', 'z', 0, 100)")
		mustExec(t, root, "CALL dp_labels('"+tbl+"', 'y', 'no,yes')")
	}
	mustExec(t, root, "CALL dp_privacy_unit('persons', 'id', 'person')")
	mustExec(t, root, "CALL dp_protect('persons', 100, 1e-5)")
	mustExec(t, root, "CALL dp_protect('flat', 100, 1e-5)")
	yes := queryFloat(t, root, "SELECT AVG(y = 'yes') FROM test")
	majority := math.Max(yes, 1-yes)
	t.Logf("rows %d, persons 2000, test rows 4000, majority constant accuracy %.3f", len(vs), majority)
	for _, kind := range []string{"gnb", "logreg", "lda"} {
		for _, eps := range []float64{0.5, 1, 2} {
			var acc [2]float64
			var names [2]string
			for i, tbl := range []string{"visits", "flat"} {
				names[i] = queryString(t, root, fmt.Sprintf("SELECT DP_TRAIN('%s', %g, '%s', 'label=y; features=x,z')", tbl, eps, kind))
				acc[i] = queryFloat(t, root, "SELECT DP_EVALUATE('"+names[i]+"', 'test', 1)")
			}
			m := queryString(t, root, "SELECT n FROM dpsql.dp_models WHERE name = ?", names[0])
			t.Logf("%-6s ε = %-3g person level (m = %s) accuracy %.3f | row level (n = %d) %.3f | majority %.3f", kind, eps, m, acc[0], len(vs), acc[1], majority)
			if acc[0] < majority+0.1 {
				t.Errorf("%s at ε = %g: person-level accuracy %.3f is not better than the constant %.3f", kind, eps, acc[0], majority)
			}
		}
	}
}
