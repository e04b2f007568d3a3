package engine_test

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/mysqlstore"
)

// Person-level pushdown (issue 27 item 6, docs/privacy/units.md §11): the
// same shop is held twice, attached from MariaDB (orders sharded by Spider
// over two shards, customers on the head) and in dpsql's embedded store.
// At ε = 10⁵ every release of the pushed-down path equals the streaming
// path's (counts exactly, sums and means within the noise); the backend's
// general log shows the pushed statements, free of analyst text; the
// charges and a refusal are the same on both.

// pushShopRows are the shop's rows: customer 0 has 500 orders of 100;
// customers 1…399 have 1…5 orders with amounts in [−20, 130) (clipped to
// the declared [0, 100]) and some NULLs; three customers are in "North"
// and three in "north " (text equality must be exact in SQL too: a
// case- or pad-insensitive GROUP BY would merge them into "north"); a few
// orders belong to no one. No domain is declared on region: its groups
// are selected privately (δ).
func pushShopRows() (customers, orders []string) {
	regions := []string{"north", "south", "east"}
	for c := 0; c < 400; c++ {
		r := regions[c%3]
		switch c {
		case 7, 10, 13:
			r = "North"
		case 8, 11, 14:
			r = "north "
		}
		customers = append(customers, fmt.Sprintf("(%d, '%s')", c, r))
	}
	id := 0
	add := func(c string, amount string) {
		orders = append(orders, fmt.Sprintf("(%d, %s, %s)", id, c, amount))
		id++
	}
	for o := 0; o < 500; o++ {
		add("0", "100")
	}
	for c := 1; c < 400; c++ {
		for o := 0; o <= c%5; o++ {
			a := fmt.Sprint((c*7+o*13)%150 - 20)
			if (c+o)%11 == 0 {
				a = "NULL"
			}
			add(fmt.Sprint(c), a)
		}
	}
	add("NULL", "50")
	add("NULL", "60")
	return customers, orders
}

// declarePushShop declares the shop's unit, bounds, domain and budget.
func declarePushShop(t *testing.T, root *sql.DB) {
	t.Helper()
	mustExec(t, root, "CALL dp_bounds('orders', 'amount', 0, 100, 'clip')")
	mustExec(t, root, "CALL dp_privacy_unit('customers', 'id', 'customer')")
	mustExec(t, root, "CALL dp_privacy_unit('orders', 'customer_id', 'customer')")
	mustExec(t, root, "CALL dp_protect('customers', 1e6, 1e-3)")
}

func TestUnitPushdownOverTheWire(t *testing.T) {
	needSpider(t)
	cs, os := pushShopRows()
	createSharded(t, "ushop", "orders", "id INT PRIMARY KEY, customer_id INT, amount DOUBLE")
	createSingle(t, "ushop", "customers", "id INT PRIMARY KEY, region VARCHAR(16)")
	head := headConn(t)
	insertRows(t, head, "ushop.customers", cs)
	insertRows(t, head, "ushop.orders", os)

	ts := startBackendServer(t, t.TempDir())
	root := ts.connect("root", rootPW, "")
	mustExec(t, root, "CREATE DATABASE ushop")
	mustExec(t, root, "CREATE DATABASE eshop")
	mustExec(t, root, "CALL dp_attach('ushop.orders')")
	mustExec(t, root, "CALL dp_attach('ushop.customers')")
	eroot := ts.connect("root", rootPW, "eshop")
	mustExec(t, eroot, "CREATE TABLE customers (id INT PRIMARY KEY, region VARCHAR(16))")
	mustExec(t, eroot, "CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT, amount DOUBLE)")
	insertRows(t, eroot, "customers", cs)
	insertRows(t, eroot, "orders", os)
	uroot := ts.connect("root", rootPW, "ushop")
	declarePushShop(t, uroot)
	declarePushShop(t, eroot)
	mustExec(t, root, "CREATE USER 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON ushop.* TO 'ana'@'%'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON eshop.* TO 'ana'@'%'")

	mustExec(t, head, "SET GLOBAL log_output = 'TABLE'")
	mustExec(t, head, "SET GLOBAL general_log = 1")
	defer mustExec(t, head, "SET GLOBAL general_log = 0")
	pushedStatements := func() []string {
		return queryStrings(t, head, "SELECT CONVERT(argument USING utf8mb4) FROM mysql.general_log WHERE command_type = 'Prepare' AND CONVERT(argument USING utf8mb4) LIKE '%GROUP BY a%' AND CONVERT(argument USING utf8mb4) LIKE '%`ushop`%'")
	}

	// Each query on both copies; pushed says whether the backend computes
	// its per-person aggregates.
	queries := []struct {
		q      string
		pushed bool
		// sampled: the answer depends on which value of each person is
		// kept (C = 1 of several), not only on the noise: not compared.
		sampled bool
	}{
		{"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1e5, delta = 1e-6, max_rows_contributed_per_group = 3) c.region, COUNT(*), SUM(o.amount), AVG(o.amount), COUNT(o.amount) FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region ORDER BY c.region", true, false},
		{"SELECT COUNT(*), SUM(amount) FROM orders", true, false},
		{"SELECT DP_MEAN('orders', 'amount', 1e5)", true, false},
		{"SELECT bin, count FROM DP_HISTOGRAM('orders', 'amount', 1e5, 'bins=4; max_groups_contributed=4; max_rows_contributed_per_group=2') AS h ORDER BY bin", true, false},
		{"SELECT DP_QUANTILE('orders', 'amount', 0.5, 1e5)", false, true},                                                                   // values per person: streamed
		{"SELECT COUNT(*) FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.region = 'north' GROUP BY c.region", false, false}, // WHERE: streamed
	}
	answers := map[string][2][][]string{}
	for side, db := range []string{"ushop", "eshop"} {
		ana := ts.connect("ana", "ana-pw", db)
		ana.SetMaxOpenConns(1)
		mustExec(t, ana, "SET SESSION dp_epsilon = 1e5")
		mustExec(t, ana, "SET SESSION dp_delta = 1e-6")
		for _, c := range queries {
			before := mysqlstore.UnitPushes()
			got := queryRows(t, ana, c.q)
			pushes := mysqlstore.UnitPushes() - before
			if want := int64(0); side == 0 && c.pushed {
				want = 1
				if pushes != want {
					t.Errorf("%s: %d pushed statements, want %d", c.q, pushes, want)
				}
			} else if pushes != 0 {
				t.Errorf("%s on %s: %d pushed statements, want none", c.q, db, pushes)
			}
			a := answers[c.q]
			a[side] = got
			answers[c.q] = a
		}
	}
	for _, c := range queries {
		u, e := answers[c.q][0], answers[c.q][1]
		if c.sampled {
			continue
		}
		if len(u) != len(e) || len(u) == 0 {
			t.Fatalf("%s: pushed %v, streamed %v", c.q, u, e)
		}
		for i := range u {
			for j := range u[i] {
				a, b := u[i][j], e[i][j]
				if a == b {
					continue
				}
				fa, fb := atof(t, a), atof(t, b)
				// Counts are exact at this ε (scale ≤ 10⁻⁵, rounded); sums
				// and means carry noise of scale ≤ 10⁻³.
				if math.Abs(fa-fb) > 0.02*math.Max(1, math.Abs(fb)/100) {
					t.Errorf("%s: row %d col %d: pushed %s, streamed %s", c.q, i, j, a, b)
				}
			}
		}
		t.Logf("%s → %v", c.q, u)
	}
	// The bounded truth of the grouped query, computed here: per region
	// the persons' min(orders, 3) (customer 0 counts 3, not 500).
	g := answers[queries[0].q][0]
	wantCount := map[string]int{}
	for c := 0; c < 400; c++ {
		n := c%5 + 1
		if c == 0 {
			n = 500
		}
		r := []string{"north", "south", "east"}[c%3]
		switch c {
		case 7, 10, 13:
			r = "North"
		case 8, 11, 14:
			r = "north "
		}
		wantCount[r] += min(n, 3)
	}
	if len(g) != 5 {
		t.Errorf("grouped rows %v, want 5 regions (North and 'north ' apart from north)", g)
	}
	for _, r := range g {
		if fmt.Sprint(wantCount[r[0]]) != r[1] {
			t.Errorf("grouped COUNT of %s = %s, want the bounded truth %d", r[0], r[1], wantCount[r[0]])
		}
	}

	// The backend received the pushed statements: one per pushed query,
	// with no analyst text (no string literal: only schema names,
	// generated aliases and the public bounds).
	stmts := pushedStatements()
	if len(stmts) != 4 {
		t.Errorf("general log has %d pushed statements, want 4: %q", len(stmts), stmts)
	}
	for _, s := range stmts {
		if strings.ContainsAny(s, "'\"") || strings.Contains(strings.ToUpper(s), "DIFFERENTIAL") || strings.Contains(s, "north") {
			t.Errorf("pushed statement carries analyst text: %s", s)
		}
	}
	t.Logf("pushed statements: %q", stmts)

	// Same charges; the same refusal before charging on both.
	su, se := spent(t, uroot, "ushop.customers"), spent(t, eroot, "eshop.customers")
	if su != se || !(su > 5e5) {
		t.Fatalf("spent %v (pushed) vs %v (streamed)", su, se)
	}
	for _, db := range []string{"ushop", "eshop"} {
		ana := ts.connect("ana", "ana-pw", db)
		wantErr(t, ana, "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM orders o JOIN customers c ON o.id = c.id", "does not preserve")
	}
	if su2, se2 := spent(t, uroot, "ushop.customers"), spent(t, eroot, "eshop.customers"); su2 != su || se2 != se {
		t.Fatalf("a refusal was charged: %v→%v, %v→%v", su, su2, se, se2)
	}
}
