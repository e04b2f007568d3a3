package engine_test

import (
	"math"
	"testing"
)

// TestDropRecreateKeepsBudget: an owner who drops a protected table and
// creates a new one under the same name does not get a fresh budget — the
// account and its spend outlive the table (docs/privacy/accounting.md).
func TestDropRecreateKeepsBudget(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 100, 1.0)
	ana := ts.connect("ana", "ana-pw", "demo")
	queryFloat(t, ana, "SELECT DP_MEAN('people', 'age', 0.75)")

	mustExec(t, root, "DROP TABLE people")
	mustExec(t, root, "CREATE TABLE people (id INT PRIMARY KEY, age DOUBLE)")
	mustExec(t, root, "INSERT INTO people VALUES (1, 30), (2, 40), (3, 50)")
	mustExec(t, root, "CALL dp_bounds('people', 'age', 0, 100)")
	mustExec(t, root, "CALL dp_protect('people', 1, 0)")
	if s := spent(t, root, "demo.people"); math.Abs(s-0.75) > 1e-9 {
		t.Fatalf("spent after drop and re-create = %v, want 0.75", s)
	}
	wantErr(t, ana, "SELECT DP_MEAN('people', 'age', 0.5)", "privacy budget exceeded")
	queryFloat(t, ana, "SELECT DP_MEAN('people', 'age', 0.25)")
}
