package engine_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// trainJoin is the training source of the tests below: the unit's two
// tables and the public regions table.
const trainJoin = "orders o JOIN customers c ON o.customer_id = c.id JOIN regions r ON c.region = r.name"

// TestUnitJoinTrainingOverTheWire (issue 27 item 5, units.md §10 "Joined
// training sources"): trainings whose table argument is a FROM clause
// joining the unit's tables with a public table take features from every
// side, charge the unit's one account exactly once per call, predict with
// DP_PREDICT and evaluate with DP_EVALUATE on the same join; joins the
// compiler refuses (a row-level protected table, keys that do not preserve
// the unit, outer joins, filters) are refused before any charge; raw rows
// stay refused.
func TestUnitJoinTrainingOverTheWire(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root, ana := setupTrainShop(t, ts, 100)
	mustExec(t, root, "CREATE TABLE regions (name VARCHAR(16) PRIMARY KEY, income DOUBLE, coastal VARCHAR(3))")
	mustExec(t, root, "INSERT INTO regions VALUES ('north', 30, 'no'), ('south', 70, 'yes'), ('east', 50, 'yes')")
	mustExec(t, root, "CALL dp_bounds('regions', 'income', 0, 100)")
	mustExec(t, root, "CALL dp_domain('regions', 'coastal', 'no,yes')")
	// A row-level protected table (no unit) that names orders.
	mustExec(t, root, "CREATE TABLE audit (id INT PRIMARY KEY, order_id INT, note DOUBLE)")
	mustExec(t, root, "INSERT INTO audit VALUES (1, 1, 3), (2, 2, 4)")
	mustExec(t, root, "CALL dp_bounds('audit', 'note', 0, 10)")
	mustExec(t, root, "CALL dp_protect('audit', 10, 1e-5)")

	ledger := func() float64 {
		t.Helper()
		return queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger WHERE table_name = 'unit:shop.customer'")
	}
	want, rows := 0.0, 0.0
	check := func(what string) {
		t.Helper()
		for _, tbl := range []string{"shop.customers", "shop.orders"} {
			if s := spent(t, root, tbl); s < want-1e-9 || s > want+1e-9 {
				t.Fatalf("%s: %s spent %v, want the unit's %v", what, tbl, s, want)
			}
		}
		if n := ledger(); n != rows {
			t.Fatalf("%s: %v ledger rows on unit:shop.customer, want %v", what, n, rows)
		}
		if s := spent(t, root, "shop.audit"); s != 0 {
			t.Fatalf("%s: the row-level table was charged %v", what, s)
		}
	}
	q := func(f string, a ...any) string { return fmt.Sprintf(f, a...) }

	// The dry run names the unit, the join and the per-person bound.
	dry := queryString(t, ana, q("SELECT DP_TRAIN('%s', 1, 'gnb', 'label=o.big; features=o.amount,c.age,r.income; dry_run=1')", trainJoin))
	for _, frag := range []string{`"unit":"shop.customer"`, `"account":"unit:shop.customer"`, `one row per person, uniformly chosen`,
		`"source":"shop.orders AS o JOIN shop.customers AS c ON o.customer_id = c.id JOIN shop.regions AS r ON c.region = r.name"`,
		`"join_rule":`, `"rows_per_person":1`, `"charged":false`} {
		if !strings.Contains(dry, frag) {
			t.Fatalf("dry run lacks %s: %s", frag, dry)
		}
	}
	if strings.Contains(dry, `"n":`) {
		t.Fatalf("the dry run shows a row count: %s", dry)
	}
	check("dry run")

	// Refused on public inputs, before any charge, with the reason.
	for _, c := range []struct{ sql, why string }{
		{q("SELECT DP_TRAIN('orders o JOIN audit a ON o.id = a.order_id', 1, 'gnb', 'label=o.big; features=o.amount')"), "protected at row level"},
		{q("SELECT DP_TRAIN('orders o JOIN customers c ON o.id = c.id', 1, 'gnb', 'label=o.big; features=o.amount')"), "does not preserve the privacy unit"},
		{q("SELECT DP_TRAIN('orders o LEFT JOIN customers c ON o.customer_id = c.id', 1, 'gnb', 'label=o.big')"), "LEFT JOIN"},
		{q("SELECT DP_TRAIN('orders o JOIN customers c ON o.customer_id = c.id WHERE c.age > 30', 1, 'gnb', 'label=o.big')"), "more than a FROM clause"},
		{q("SELECT DP_TRAIN('orders o, regions r', 1, 'gnb', 'label=o.big')"), "comma"},
		{q("SELECT DP_TRAIN('regions r JOIN regions s ON r.name = s.name', 1, 'gnb', 'label=r.coastal')"), "public tables only"},
		{q("SELECT DP_TRAIN('orders o JOIN nosuch n ON o.id = n.id', 1, 'gnb', 'label=o.big')"), "does not exist"},
		{q("SELECT DP_TRAIN('%s', 1, 'gnb', 'label=o.big; features=r.name')", trainJoin), "no declared bounds"},
		{q("SELECT DP_TRAIN('%s', 1, 'gnb', 'label=o.big; features=id')", trainJoin), "ambiguous"},
		{q("SELECT DP_TRAIN('%s', 1, 'gnb', 'label=o.big; features=o.nope')", trainJoin), "no column"},
		{q("SELECT DP_TRAIN('%s', 1000, 'gnb', 'label=o.big; features=o.amount')", trainJoin), "budget"},
		{q("SELECT DP_MEAN('%s', 'o.amount', 1)", trainJoin), "training source"},
	} {
		wantErr(t, ana, c.sql, c.why)
		check(c.sql)
	}

	// Features from both sides of the unit and from the public table.
	models := map[string]string{}
	for _, c := range []struct{ name, sql string }{
		{"gnb", q("SELECT DP_TRAIN('%s', 1, 'gnb', 'label=o.big; features=amount,c.age,r.income')", trainJoin)},
		{"logreg", q("SELECT DP_TRAIN('%s', 1, 'logreg', 'label=big; features=o.amount,c.age,r.coastal')", trainJoin)},
		{"auto", q("SELECT DP_TRAIN('%s', 1, 'auto', 'label=o.big; features=o.amount,c.age,r.income')", trainJoin)},
		{"linreg", q("SELECT DP_TRAIN('%s', 1, 'linreg', 'label=o.amount; features=c.age,r.income')", trainJoin)},
		{"svm", q("SELECT DP_SVM_TRAIN('%s', 1, 'linear', 'label=o.big; features=o.amount,c.age,r.income')", trainJoin)},
		{"lsq", q("SELECT DP_LSQ('%s', 1, 'linear', 'label=o.amount; features=c.age,r.income')", trainJoin)},
		{"lmgc", q("SELECT DP_LMGC_TRAIN('%s', 1, 'label=o.big; features=o.amount,c.age,r.income')", trainJoin)},
	} {
		models[c.name] = queryString(t, ana, c.sql)
		want, rows = want+1, rows+1
		check(c.sql)
	}

	// DP_PREDICT takes the feature values, in the model's order.
	for k, name := range models {
		args := "70, 40, 30"
		switch k {
		case "logreg":
			args = "70, 40, 'no'"
		case "linreg", "lsq":
			args = "40, 30"
		}
		var out sql.NullString
		if err := ana.QueryRow("SELECT DP_PREDICT('" + name + "', " + args + ")").Scan(&out); err != nil || !out.Valid {
			t.Fatalf("DP_PREDICT on %s (%s): %v %v", name, k, out, err)
		}
	}
	var table, params string
	if err := root.QueryRow("SELECT table_name, params FROM dpsql.dp_models WHERE name = ?", models["gnb"]).Scan(&table, &params); err != nil {
		t.Fatal(err)
	}
	if table != "shop.orders" || !strings.Contains(params, "privacy_unit=shop.customer") || !strings.Contains(params, "source=shop.orders AS o JOIN") {
		t.Fatalf("dp_models: table %q params %q", table, params)
	}

	// DP_EVALUATE on the same join: one person-level charge; the label
	// is a threshold of o.amount.
	acc := queryFloat(t, ana, q("SELECT DP_EVALUATE('%s', '%s', 2)", models["gnb"], trainJoin))
	want, rows = want+2, rows+1
	check("DP_EVALUATE")
	if acc < 0.6 || acc > 1.05 {
		t.Fatalf("person-level accuracy %v of gnb on the join", acc)
	}

	// Raw rows of the join stay refused.
	wantErr(t, ana, "SELECT o.amount, c.age, r.income FROM "+trainJoin, "protected")
	wantErr(t, ana, "SELECT * FROM orders", "protected")
	check("raw rows")
}
