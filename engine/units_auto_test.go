package engine_test

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestUnitAutoBoundsOverTheWire (issue 27, docs/privacy/units.md §3a): on
// the shop (customer 0 has 500 orders, 200 customers one order each), a
// BigQuery-clause query with max_rows_contributed_per_group = auto and the
// session path with dp_contribution_bounds = 'auto' answer through the
// real driver; each charges the unit's account once for the whole query
// (selection and release: one ledger row, ε as asked), SHOW WARNINGS names
// the privately chosen bounds, and bad options are refused before any
// charge.
func TestUnitAutoBoundsOverTheWire(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupShop(t, ts)
	ana := shopAnalyst(t, ts, root, "ana")
	ledger := func() float64 {
		return queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger WHERE table_name = 'unit:shop.customer'")
	}
	chosen := regexp.MustCompile(`chosen privately: max_rows_contributed_per_group = (\d+) \(COUNT scale ([0-9.e+]+)\), SUM bounds \[0, ([0-9.e+]+)\]`)
	check := func(q string, eps, spentBefore, ledgerBefore float64) {
		t.Helper()
		rows := queryRows(t, ana, q)
		warn := fmt.Sprint(queryRows(t, ana, "SHOW WARNINGS"))
		if len(rows) != 2 {
			t.Fatalf("%s: rows %v", q, rows)
		}
		m := chosen.FindStringSubmatch(warn)
		if m == nil {
			t.Fatalf("%s: the warning does not name the chosen bounds: %s", q, warn)
		}
		c, _ := strconv.Atoi(m[1])
		scale, _ := strconv.ParseFloat(m[2], 64)
		sum, _ := strconv.ParseFloat(m[3], 64)
		// Public limits: C in [1, 1000], the SUM clamp in (0, 1000·100];
		// the COUNT scale is C over 0.9·ε/2 (two vectors after the 10 %
		// of the selections).
		if c < 1 || c > 1000 || !(sum > 0 && sum <= 100000) || math.Abs(scale-float64(c)/(0.45*eps)) > 1e-3*scale {
			t.Fatalf("%s: chosen C %d (scale %v), SUM ≤ %v: %s", q, c, scale, sum, warn)
		}
		if s := spent(t, root, "shop.orders"); math.Abs(s-(spentBefore+eps)) > 1e-9 {
			t.Fatalf("%s: spent %v, want %v + %v (selection and release in one charge)", q, s, spentBefore, eps)
		}
		if l := ledger(); l != ledgerBefore+1 {
			t.Fatalf("%s: ledger rows %v → %v, want one more", q, ledgerBefore, l)
		}
	}
	s0, l0 := spent(t, root, "shop.orders"), ledger()
	check(`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 2, max_rows_contributed_per_group = auto)
		c.region, COUNT(*) AS n, SUM(o.amount) AS s FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region`, 2, s0, l0)
	check(`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, max_rows_contributed_per_group = auto)
		c.region, COUNT(*), SUM(o.amount, contribution_bounds_per_group => auto) FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region`, 1, s0+2, l0+1)

	// The session path.
	mustExec(t, ana, "SET SESSION dp_epsilon = 1")
	mustExec(t, ana, "SET SESSION dp_contribution_bounds = 'auto'")
	check("SELECT c.region, COUNT(*), SUM(o.amount) FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.amount >= 0 GROUP BY c.region", 1, s0+3, l0+2)
	mustExec(t, ana, "SET SESSION dp_contribution_bounds = 'default'")
	n := queryFloat(t, ana, "SELECT COUNT(*) FROM orders WHERE amount >= 0")
	if math.Abs(n-201) > 30 {
		t.Fatalf("back to the default C = 1: COUNT %v, want 201 persons ± noise", n)
	}
	warn := fmt.Sprint(queryRows(t, ana, "SHOW WARNINGS"))
	if strings.Contains(warn, "chosen privately") || !strings.Contains(warn, "max_rows_contributed_per_group = 1;") {
		t.Fatalf("default warning: %s", warn)
	}
	s1, l1 := spent(t, root, "shop.orders"), ledger()
	if math.Abs(s1-(s0+5)) > 1e-9 {
		t.Fatalf("spent %v, want %v", s1, s0+5)
	}

	// Refused before any charge.
	for q, frag := range map[string]string{
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, max_rows_contributed_per_group = automatic) COUNT(*) FROM orders`:                              "positive integer or auto",
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) AVG(amount, contribution_bounds_per_group => auto) FROM orders`:                                "is for SUM",
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) c.region, SUM(c.id, contribution_bounds_per_group => auto) FROM customers c GROUP BY c.region`: "declared bounds",
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1e-300, max_rows_contributed_per_group = auto) COUNT(*) FROM orders`:                              "minimum",
	} {
		wantErr(t, ana, q, frag)
	}
	wantErr(t, ana, "SET SESSION dp_contribution_bounds = 'sometimes'", "")
	if s, l := spent(t, root, "shop.orders"), ledger(); s != s1 || l != l1 {
		t.Fatalf("refusals charged: spent %v → %v, ledger %v → %v", s1, s, l1, l)
	}
}
