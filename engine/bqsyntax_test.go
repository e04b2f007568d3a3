package engine_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestBigQuerySyntaxOverTheWire: SELECT WITH DIFFERENTIAL_PRIVACY
// OPTIONS(…) (issue 27) over the wire, text protocol: its ε is what is
// charged, max_groups_contributed / contribution_bounds_per_group reach
// the person-level compiler, a privacy_unit_column that is not the unit is
// refused before charging, the clause on a row-level table uses the clause's
// ε and refuses person-level options, and an owner's clause query over a
// protected table is a DP release too (never an exact answer).
func TestBigQuerySyntaxOverTheWire(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupShop(t, ts)
	ana := shopAnalyst(t, ts, root, "ana")

	// No session ε: the clause alone carries the budget.
	n := queryFloat(t, ana, "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 2, delta = 1e-7, max_groups_contributed = 1) COUNT(*) FROM orders")
	if math.Abs(n-201) > 20 {
		t.Fatalf("COUNT(*) = %v, want 201 persons ± noise (the heavy customer counts once)", n)
	}
	if s := spent(t, root, "shop.customers"); s != 2 {
		t.Fatalf("spent %v, want the clause's ε = 2", s)
	}
	// Grouped, with per-group contribution bounds on the SUM.
	rows := queryRows(t, ana, "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, privacy_unit_column = customer_id) c.region, SUM(o.amount, contribution_bounds_per_group => (0, 10)) AS s FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region ORDER BY c.region")
	if len(rows) != 2 || rows[0][0] != "north" {
		t.Fatalf("grouped rows %v", rows)
	}
	if north := atof(t, rows[0][1]); math.Abs(north-1010) > 300 { // 101 persons × clamp 10, Laplace scale 20
		t.Fatalf("north SUM %v, want 1010 ± noise (the heavy customer's 5000 clamped to 10)", north)
	}
	if s := spent(t, root, "shop.orders"); s != 3 {
		t.Fatalf("spent %v after ε 2 + 1", s)
	}
	// Refused before charging.
	for q, frag := range map[string]string{
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, privacy_unit_column = id) COUNT(*) FROM orders": "privacy",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(delta = 1e-7) COUNT(*) FROM orders":                          "epsilon",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) MAX(amount) FROM orders":                        "not supported",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = -1) COUNT(*) FROM orders":                          "epsilon",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1 COUNT(*) FROM orders":                            "DIFFERENTIAL_PRIVACY",
	} {
		wantErr(t, ana, q, frag)
	}
	if s := spent(t, root, "shop.orders"); s != 3 {
		t.Fatalf("refusals charged: spent %v", s)
	}

	// A row-level table: the clause's ε; person-level options refused.
	mustExec(t, root, "CREATE TABLE visits (id INT PRIMARY KEY, minutes DOUBLE)")
	var vs []string
	for i := 0; i < 300; i++ {
		vs = append(vs, "("+strconv.Itoa(i)+", 30)")
	}
	mustExec(t, root, "INSERT INTO visits VALUES "+strings.Join(vs, ","))
	mustExec(t, root, "CALL dp_bounds('visits', 'minutes', 0, 60)")
	mustExec(t, root, "CALL dp_protect('visits', 10, 0)")
	if v := queryFloat(t, ana, "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5) COUNT(*) FROM visits"); math.Abs(v-300) > 60 {
		t.Fatalf("row-level COUNT %v", v)
	}
	if s := spent(t, root, "shop.visits"); s != 0.5 {
		t.Fatalf("visits spent %v, want 0.5", s)
	}
	wantErr(t, ana, "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, privacy_unit_column = id) COUNT(*) FROM visits", "no declared privacy unit")
	wantErr(t, ana, "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) SUM(minutes, contribution_bounds_per_group => (0, 5)) FROM visits", "contribution_bounds_per_group")
	// An owner's clause query is a charged DP release, not an exact answer.
	before := spent(t, root, "shop.visits")
	if v := queryFloat(t, root, "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.25) SUM(minutes) FROM visits"); v == 9000 {
		t.Logf("owner's DP SUM happened to equal the exact 9000")
	}
	if s := spent(t, root, "shop.visits"); s != before+0.25 {
		t.Fatalf("owner's clause query: spent %v, want %v (a DP release)", s, before+0.25)
	}
}
