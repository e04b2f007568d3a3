package engine_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/server"
)

// TestUnitMemoryAdmission (docs/privacy/units.md §6): --max-release-memory
// applies to person-level queries and to DP_MEAN / DP_HISTOGRAM /
// DP_QUANTILE on a unit's tables. The estimate uses the stored row counts
// rounded up to powers of two; a release above the limit is refused before
// any charge, with a message that names no count and no estimate (the
// same text for tables of 5,000 and 7,000 rows, both padded to 8,192);
// the shop's small queries pass.
func TestUnitMemoryAdmission(t *testing.T) {
	ts := startServerOpts(t, t.TempDir(), engine.Options{MaxReleaseMemory: 2 << 20}, server.Options{})
	root := setupShop(t, ts)
	for _, tc := range []struct {
		name string
		rows int
	}{{"events5", 5000}, {"events7", 7000}} {
		mustExec(t, root, "CREATE TABLE "+tc.name+" (id INT PRIMARY KEY, customer_id INT, v DOUBLE)")
		var rows []string
		for i := 0; i < tc.rows; i++ {
			rows = append(rows, fmt.Sprintf("(%d, %d, %d)", i, i%201, i%10))
		}
		insertRows(t, root, tc.name, rows)
		mustExec(t, root, "CALL dp_bounds('"+tc.name+"', 'v', 0, 10)")
		mustExec(t, root, "CALL dp_privacy_unit('"+tc.name+"', 'customer_id', 'customer')")
	}
	ana := shopAnalyst(t, ts, root, "ana")
	mustExec(t, ana, "SET SESSION dp_epsilon = 0.5")
	before := spent(t, root, "shop.customers")
	refused := map[string]string{}
	for _, tbl := range []string{"events5", "events7"} {
		for _, q := range []string{
			"SELECT COUNT(*) FROM " + tbl,
			"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5) SUM(v) FROM " + tbl,
			"SELECT DP_MEAN('" + tbl + "', 'v', 0.5)",
			"SELECT * FROM DP_HISTOGRAM('" + tbl + "', 'v', 0.5, 'bins=2')",
			"SELECT DP_QUANTILE('" + tbl + "', 'v', 0.5, 0.5)",
		} {
			err := wantErr(t, ana, q, "--max-release-memory", "nothing was charged")
			msg := strings.ReplaceAll(err.Error(), tbl, "T")
			// No number but the operator's limit (and the MySQL error code).
			rest := regexp.MustCompile(`^Error \d+ \(\w+\): `).ReplaceAllString(msg, "")
			if rest = strings.ReplaceAll(rest, "2.0 MiB", ""); regexp.MustCompile(`\d`).MatchString(rest) {
				t.Errorf("%s: the refusal names a number: %s", q, msg)
			}
			key := strings.ReplaceAll(q, tbl, "T")
			if prev, ok := refused[key]; ok && prev != msg {
				t.Errorf("%s: refusals differ between 5,000 and 7,000 rows:\n%s\n%s", key, prev, msg)
			}
			refused[key] = msg
		}
	}
	if s := spent(t, root, "shop.customers"); s != before {
		t.Fatalf("refused releases were charged: %v → %v", before, s)
	}
	// Dry runs read nothing and are not admitted: they still answer.
	if dry := queryString(t, ana, "SELECT DP_MEAN('events5', 'v', 0.5, 'dry_run=1')"); !strings.Contains(dry, "unit") {
		t.Fatalf("dry run: %s", dry)
	}
	// The shop's tables (≤ 1,024 rows padded) fit: answered and charged.
	queryFloat(t, ana, "SELECT COUNT(*) FROM orders")
	queryRows(t, ana, "SELECT c.region, COUNT(*) FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region")
	queryFloat(t, ana, "SELECT DP_MEAN('orders', 'amount', 0.5)")
	if s := spent(t, root, "shop.customers"); s != before+1.5 {
		t.Fatalf("spent %v after three releases of 0.5, want %v", s, before+1.5)
	}

	// An owner's declared maximum row count replaces the stored count in
	// the estimate: orders (stored ≤ 1,024) declared up to 10⁵ rows is
	// refused like the large tables; removing it admits it again.
	wantErr(t, ana, "CALL dp_max_rows('orders', 100000)", "only data owners")
	wantErr(t, root, "CALL dp_max_rows('events5', 10)", "already has 5000 rows")
	wantErr(t, root, "CALL dp_max_rows('events5', 1.5)", "whole number")
	mustExec(t, root, "CALL dp_max_rows('orders', 100000)")
	mid := spent(t, root, "shop.customers")
	// (A new query: the one answered above would be re-read from the
	// answer cache.)
	err := wantErr(t, ana, "SELECT COUNT(*) FROM orders WHERE amount > 1", "--max-release-memory", "nothing was charged")
	if want := refused["SELECT COUNT(*) FROM T"]; strings.ReplaceAll(err.Error(), "orders", "T") != want {
		t.Fatalf("declared maximum: %v, want the refusal %q", err, want)
	}
	wantErr(t, ana, "SELECT DP_MEAN('orders', 'amount', 0.5)", "--max-release-memory")
	if s := spent(t, root, "shop.customers"); s != mid {
		t.Fatalf("refused releases were charged: %v → %v", mid, s)
	}
	mustExec(t, root, "CALL dp_max_rows('orders', 0)")
	queryFloat(t, ana, "SELECT COUNT(*) FROM orders WHERE amount > 1")
	if s := spent(t, root, "shop.customers"); s != mid+0.5 {
		t.Fatalf("spent %v after the declaration was removed, want %v", s, mid+0.5)
	}
}
