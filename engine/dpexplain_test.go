package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpsql/dpsql/mechanism/agg"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// The EXPLAIN of a DP query (docs/sql.md "EXPLAIN of a DP query"): the
// compiled plan, answered without charging or reading a row; its charge is
// what the query then charges, its noise scales those of the mechanism, its
// output the same on neighbouring databases, and a refused query refuses
// its EXPLAIN with the same message.

// explainItem is one row of a DP EXPLAIN.
type explainItem struct {
	item, name, value, mechanism            string
	epsilon, delta, noiseScale, sensitivity float64 // NaN: NULL
	bounds, detail                          string
}

// dpExplain runs EXPLAIN q (a text statement) and returns its rows and
// their raw text (for comparisons).
func dpExplain(t *testing.T, c querier, q string) ([]explainItem, string) {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), "EXPLAIN "+q)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", short(q), err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if strings.Join(cols, ",") != "item,name,value,mechanism,epsilon,delta,noise_scale,sensitivity,bounds,detail" {
		t.Fatalf("EXPLAIN %s: columns %v", short(q), cols)
	}
	num := func(v sql.NullString) float64 {
		if !v.Valid {
			return math.NaN()
		}
		return atof(t, v.String)
	}
	var out []explainItem
	var raw strings.Builder
	for _, r := range scanAll(t, rows) {
		for _, v := range r {
			fmt.Fprintf(&raw, "%v|", v)
		}
		raw.WriteString("\n")
		out = append(out, explainItem{item: r[0].String, name: r[1].String, value: r[2].String, mechanism: r[3].String,
			epsilon: num(r[4]), delta: num(r[5]), noiseScale: num(r[6]), sensitivity: num(r[7]), bounds: r[8].String, detail: r[9].String})
	}
	return out, raw.String()
}

// find returns the rows of kind item named name ("" any name).
func find(items []explainItem, item, name string) []explainItem {
	var out []explainItem
	for _, it := range items {
		if it.item == item && (name == "" || it.name == name) {
			out = append(out, it)
		}
	}
	return out
}

func one(t *testing.T, items []explainItem, item, name string) explainItem {
	t.Helper()
	f := find(items, item, name)
	if len(f) != 1 {
		t.Fatalf("%d rows %s %q in %+v", len(f), item, name, items)
	}
	return f[0]
}

// sameFloat: the scales travel as text; allow the last bit.
func sameFloat(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// lastLedger is the newest dp_ledger row: function, table, ε, δ.
func lastLedger(t *testing.T, root *sql.DB) (fn, table string, eps, delta float64) {
	t.Helper()
	if err := root.QueryRow("SELECT function_name, table_name, epsilon, delta FROM dpsql.dp_ledger ORDER BY id DESC LIMIT 1").Scan(&fn, &table, &eps, &delta); err != nil {
		t.Fatal(err)
	}
	return
}

// checkCharge runs q for real and checks that dp_ledger charged exactly
// what its EXPLAIN said.
func checkCharge(t *testing.T, root *sql.DB, c querier, q string, items []explainItem) {
	t.Helper()
	before := ledgerTotal(t, root)
	_ = queryRows(t, c, q)
	if ledgerTotal(t, root) != before+1 {
		t.Fatalf("%s: %d ledger rows after, %d before", short(q), ledgerTotal(t, root), before)
	}
	rel := one(t, items, "release", "")
	fn, table, eps, delta := lastLedger(t, root)
	if fn != rel.name || table != rel.value || !sameFloat(eps, rel.epsilon) || !sameFloat(delta, rel.delta) {
		t.Fatalf("%s: ledger %s %s ε=%v δ=%v, EXPLAIN said %s %s ε=%v δ=%v", short(q), fn, table, eps, delta, rel.name, rel.value, rel.epsilon, rel.delta)
	}
}

// TestDPExplainUnits: the shop (customers ← orders ← items, unit
// customer), both query paths, joins, declared domains and private
// partition selection.
func TestDPExplainUnits(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupShop(t, ts)
	ana := shopAnalyst(t, ts, root, "ana")
	mustExec(t, ana, "SET SESSION dp_epsilon = 1")
	mustExec(t, ana, "SET SESSION dp_delta = 1e-7")

	session := "SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS s, AVG(o.amount) AS a FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region"
	clause := "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5, delta = 1e-7, max_groups_contributed = 2, max_rows_contributed_per_group = 3) " +
		"c.region, COUNT(*) AS n, SUM(o.amount, contribution_bounds_per_group => (0, 250)) AS s FROM items i JOIN orders o ON i.order_id = o.id JOIN customers c ON o.customer_id = c.id GROUP BY c.region"
	selection := "SELECT o.amount, COUNT(*) AS n FROM orders o GROUP BY o.amount"
	domain := []string{"north", "south"}
	cases := []struct {
		q    string
		spec bound.Spec
		cols []string // output columns of the aggregates, in order (AVG twice)
	}{
		{session, bound.Spec{MaxGroups: 1, MaxRows: 1, Domain: domain, Epsilon: 1,
			Measures: []bound.Measure{{Kind: bound.Count}, {Kind: bound.Sum, Lo: 0, Hi: 100}, {Kind: bound.Avg, Lo: 0, Hi: 100}}}, []string{"n", "s", "a"}},
		{clause, bound.Spec{MaxGroups: 2, MaxRows: 3, Domain: domain, Epsilon: 0.5, Delta: 1e-7,
			Measures: []bound.Measure{{Kind: bound.Count}, {Kind: bound.Sum, Lo: 0, Hi: 250}}}, []string{"n", "s"}},
		{selection, bound.Spec{MaxGroups: 1, MaxRows: 1, Epsilon: 1, Delta: 1e-7,
			Measures: []bound.Measure{{Kind: bound.Count}}}, []string{"n"}},
	}
	explained := make([]string, len(cases))
	for i, tc := range cases {
		items, raw := dpExplain(t, ana, tc.q)
		explained[i] = raw
		if s := spent(t, root, "shop.customers"); s != 0 || ledgerTotal(t, root) != 0 {
			t.Fatalf("EXPLAIN charged: spent %v, %d ledger rows", s, ledgerTotal(t, root))
		}
		rel := one(t, items, "release", "DP_UNIT_AGGREGATE")
		if rel.value != "unit:shop.customer" || !strings.Contains(rel.detail, "admitted now") {
			t.Fatalf("release row %+v", rel)
		}
		if u := one(t, items, "unit", "shop.customer"); !strings.Contains(u.detail, "add or remove one person") {
			t.Fatalf("unit row %+v", u)
		}
		// The mechanism's own scales for the same public spec.
		bp, err := bound.New(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		for m, name := range tc.cols {
			rows := find(items, "column", name)
			first, second := bp.Scales(m)
			s1, s2 := bp.Sensitivity(m)
			if len(rows) == 0 || !sameFloat(rows[0].noiseScale, first) || !sameFloat(rows[0].sensitivity, s1) || !sameFloat(rows[0].epsilon, bp.Share) {
				t.Fatalf("%s: column %s %+v, mechanism scale %v sensitivity %v share %v", short(tc.q), name, rows, first, s1, bp.Share)
			}
			if tc.spec.Measures[m].Kind == bound.Avg && (len(rows) != 2 || !sameFloat(rows[1].noiseScale, second) || !sameFloat(rows[1].sensitivity, s2)) {
				t.Fatalf("AVG %s: %+v, mechanism scales %v, %v", name, rows, first, second)
			}
		}
		k := one(t, items, "contribution", "max_groups_contributed")
		c := one(t, items, "contribution", "max_rows_contributed_per_group")
		if k.value != fmt.Sprint(tc.spec.MaxGroups) || c.value != fmt.Sprint(tc.spec.MaxRows) {
			t.Fatalf("contribution rows %+v %+v", k, c)
		}
		g := one(t, items, "groups", "")
		if tc.spec.Domain == nil {
			if g.value != "private partition selection" || !sameFloat(g.noiseScale, bp.SelectScale()) || !sameFloat(g.epsilon, bp.EpsSelect) ||
				!strings.Contains(g.bounds, fmt.Sprintf("τ = %.6g", bp.Threshold())) {
				t.Fatalf("selection row %+v, mechanism scale %v τ %v", g, bp.SelectScale(), bp.Threshold())
			}
		} else if g.value != "declared domain: 2 group(s)" {
			t.Fatalf("groups row %+v", g)
		}
	}
	// The joins: the three-table query joins along the unit path.
	items, _ := dpExplain(t, ana, clause)
	if j := find(items, "join", ""); len(j) != 2 || j[0].name != "i.order_id = o.id" || j[1].name != "o.customer_id = c.id" || !strings.Contains(j[1].detail, "unit's key") {
		t.Fatalf("join rows %+v", j)
	}
	if tb := one(t, items, "table", "i"); tb.value != "shop.items" || !strings.Contains(tb.detail, "order_id → shop.orders.id") {
		t.Fatalf("table row %+v", tb)
	}

	// Data independence: a neighbouring database (one more customer, with
	// 50 orders and items) gives the same EXPLAIN, byte for byte.
	mustExec(t, root, "INSERT INTO customers VALUES (1000, 'south')")
	for o := 1000; o < 1050; o++ {
		mustExec(t, root, fmt.Sprintf("INSERT INTO orders VALUES (%d, 1000, 99)", o))
		mustExec(t, root, fmt.Sprintf("INSERT INTO items VALUES (%d, %d, 7)", o, o))
	}
	for i, tc := range cases {
		if _, raw := dpExplain(t, ana, tc.q); raw != explained[i] {
			t.Fatalf("%s: EXPLAIN differs on a neighbouring database:\n%s\nvs\n%s", short(tc.q), raw, explained[i])
		}
	}

	// The charges: each query then charges what its EXPLAIN said.
	for _, tc := range cases {
		items, _ := dpExplain(t, ana, tc.q)
		checkCharge(t, root, ana, tc.q, items)
	}

	// Refusals: the same message for the EXPLAIN, nothing charged.
	before := ledgerTotal(t, root)
	for _, q := range []string{
		"SELECT COUNT(*) FROM orders o JOIN customers c ON o.id = c.id",
		"SELECT MAX(amount) FROM orders",
		"SELECT COUNT(DISTINCT customer_id) FROM orders",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, privacy_unit_column = o.id) COUNT(*) FROM orders o",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) o.amount, COUNT(*) FROM orders o GROUP BY o.amount",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, max_groups_contributed = 0) COUNT(*) FROM orders",
	} {
		errQ := wantErr(t, ana, q)
		errE := wantErr(t, ana, "EXPLAIN "+q)
		if errQ.Error() != errE.Error() {
			t.Fatalf("%s: refused as %q, its EXPLAIN as %q", short(q), errQ, errE)
		}
	}
	// EXPLAIN ANALYZE would run the release: refused, not charged.
	wantErr(t, ana, "EXPLAIN ANALYZE "+session, "EXPLAIN ANALYZE would run the DP release")
	wantErr(t, ana, "EXPLAIN ANALYZE SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM orders", "EXPLAIN ANALYZE would run the DP release")
	// The same as server-side prepared statements (COM_STMT_PREPARE, then
	// EXECUTE): refused at the execution, before the release charges.
	for _, q := range []string{
		"EXPLAIN ANALYZE SELECT COUNT(*) FROM orders WHERE amount > 5",
		"EXPLAIN ANALYZE SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM orders WHERE amount > 5",
	} {
		st, err := ana.Prepare(q)
		if err == nil {
			var rows *sql.Rows
			if rows, err = st.Query(); err == nil {
				rows.Close()
			}
			st.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "EXPLAIN ANALYZE would run the DP release") {
			t.Fatalf("prepared %s: %v, want the EXPLAIN ANALYZE refusal", q, err)
		}
	}
	if ledgerTotal(t, root) != before {
		t.Fatalf("refusals charged: %d ledger rows, %d before", ledgerTotal(t, root), before)
	}
	// Raw rows stay refused, EXPLAIN of them too.
	wantErr(t, ana, "EXPLAIN SELECT * FROM orders", "protected")

	// Budget: an EXPLAIN past the unit's budget says it would be refused.
	items, _ = dpExplain(t, ana, "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 100) COUNT(*) FROM orders")
	if rel := one(t, items, "release", ""); !strings.Contains(rel.detail, "would be refused now") {
		t.Fatalf("over budget: %+v", rel)
	}

	// Owners: the clause is a DP query for them too.
	owner, err := root.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	items, _ = dpExplain(t, owner, clause)
	if rel := one(t, items, "release", ""); rel.name != "DP_UNIT_AGGREGATE" {
		t.Fatalf("owner: %+v", rel)
	}
}

// TestDPExplainRowLevel: a row-level protected table (neighbours replace
// one row), declared domain and private partition selection.
func TestDPExplainRowLevel(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 300, 100)
	mustExec(t, root, "CALL dp_labels('people', 'town', '0,1,2')")
	mustExec(t, root, "CALL dp_protect('people', 100, 1e-3)")
	c := aggSession(t, ts, 1)
	if _, err := c.ExecContext(context.Background(), "SET SESSION dp_delta = 1e-6"); err != nil {
		t.Fatal(err)
	}
	grouped := "SELECT town, COUNT(*) AS n, SUM(age) AS s, AVG(age) AS a FROM people WHERE age > 30 GROUP BY town"
	clause := "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5, delta = 1e-6) name, COUNT(*) AS n FROM people GROUP BY name"

	items, raw := dpExplain(t, c, grouped)
	if ledgerTotal(t, root) != 0 {
		t.Fatal("EXPLAIN charged")
	}
	p, err := agg.New(agg.Spec{Groups: 3, Count: true, Sums: []agg.Bound{{Lo: 0, Hi: 100}}, Epsilon: 1})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300 // the public row count
	if r := one(t, items, "column", "n"); !sameFloat(r.noiseScale, p.CountScale()) || !sameFloat(r.epsilon, p.EpsCount) || r.sensitivity != agg.CountSensitivity {
		t.Fatalf("COUNT row %+v, mechanism scale %v", r, p.CountScale())
	}
	for _, col := range []string{"s", "a"} {
		if r := one(t, items, "column", col); !sameFloat(r.noiseScale, p.SumScale(0, n)) || !sameFloat(r.sensitivity, p.SumSensitivity(0, n)) || !sameFloat(r.epsilon, p.EpsSum[0]) {
			t.Fatalf("%s row %+v, mechanism scale %v", col, r, p.SumScale(0, n))
		}
	}
	// Through a derived table, as BI tools wrap queries: the same plan
	// (its columns named as inside the derived table).
	wrapped, _ := dpExplain(t, c, "SELECT x.n AS total, x.town FROM ("+grouped+") AS x ORDER BY x.town LIMIT 10")
	if r := one(t, wrapped, "column", "n"); r.value != "COUNT(*)" || !sameFloat(r.noiseScale, p.CountScale()) {
		t.Fatalf("wrapped COUNT row %+v", r)
	}
	if u := one(t, items, "unit", "row"); u.value != "demo.people" {
		t.Fatalf("unit row %+v", u)
	}
	if w := one(t, items, "where", ""); !strings.Contains(w.name, "age") {
		t.Fatalf("where row %+v", w)
	}
	sel, err := agg.NewSelect(nil, 0.5, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	selItems, selRaw := dpExplain(t, c, clause)
	if g := one(t, selItems, "groups", "name"); !sameFloat(g.noiseScale, sel.CountScale()) || !strings.Contains(g.bounds, fmt.Sprintf("τ = %.6g", sel.Threshold())) {
		t.Fatalf("selection row %+v, mechanism scale %v τ %v", g, sel.CountScale(), sel.Threshold())
	}
	// A client with multi-statements on (as the mariadb and mysql command
	// line clients) sends every statement that way: the same answer.
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "ana", "ana-pw", "tcp", ts.srv.Addr(), "demo"
	cfg.AllowNativePasswords, cfg.MultiStatements = true, true
	cfg.Params = map[string]string{"dp_epsilon": "1"}
	multi, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mdb := sql.OpenDB(multi)
	defer mdb.Close()
	if _, viaMulti := dpExplain(t, mdb, grouped+";"); viaMulti != raw {
		t.Fatalf("multi-statement client:\n%s\nvs\n%s", viaMulti, raw)
	}
	// A neighbour (one row replaced) gives the same EXPLAIN.
	mustExec(t, root, "UPDATE people SET age = 99, name = 'someone-else', town = 2 WHERE id = 7")
	if _, again := dpExplain(t, c, grouped); again != raw {
		t.Fatalf("EXPLAIN differs on a neighbour:\n%s\nvs\n%s", again, raw)
	}
	if _, again := dpExplain(t, c, clause); again != selRaw {
		t.Fatalf("EXPLAIN differs on a neighbour:\n%s\nvs\n%s", again, selRaw)
	}
	// The real queries charge what the EXPLAIN said; SHOW WARNINGS names
	// the same scale.
	checkCharge(t, root, c, grouped, items)
	if w := fmt.Sprint(queryRows(t, c, "SHOW WARNINGS")); !strings.Contains(w, fmt.Sprintf("scale %.6g", p.CountScale())) || !strings.Contains(w, fmt.Sprintf("scale %.6g", p.SumScale(0, n))) {
		t.Fatalf("warnings %s", w)
	}
	checkCharge(t, root, c, clause, selItems)

	// Refusals: the same message, nothing charged.
	before := ledgerTotal(t, root)
	noBudget := aggSession(t, ts, 0)
	for _, tc := range []struct {
		c querier
		q string
	}{
		{c, "SELECT MIN(age) FROM people"},
		{c, "SELECT COUNT(DISTINCT town) FROM people"},
		{c, "SELECT name, COUNT(*) FROM people p JOIN towns t ON p.town = t.id GROUP BY name"},
		{c, "SELECT SUM(town) FROM people"},
		{c, "SELECT COUNT(*) FROM people WHERE name REGEXP 'a'"},
		{c, "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, privacy_unit_column = id) COUNT(*) FROM people"},
		{noBudget, "SELECT COUNT(*) FROM people"},
		{noBudget, "SELECT name, COUNT(*) FROM people GROUP BY name"},
	} {
		errQ := refusalOf(t, tc.c, tc.q)
		errE := refusalOf(t, tc.c, "EXPLAIN "+tc.q)
		if errQ != errE {
			t.Fatalf("%s: refused as %q, its EXPLAIN as %q", short(tc.q), errQ, errE)
		}
	}
	if ledgerTotal(t, root) != before {
		t.Fatalf("refusals charged: %d ledger rows, %d before", ledgerTotal(t, root), before)
	}
}

// refusalOf runs q and returns its error's text (failing when it succeeds).
func refusalOf(t *testing.T, c querier, q string) string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if err == nil {
		t.Fatalf("%s: accepted", short(q))
	}
	return err.Error()
}
