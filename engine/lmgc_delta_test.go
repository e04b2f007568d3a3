package engine_test

import (
	"math"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/mechanism/auto"
)

// TestLMGCDeltaDefaultOverTheWire: DP_LMGC_TRAIN and DP_TRAIN(…, 'lmgc')
// without delta= take DP_TRAIN's default (a tenth of the table's δ budget)
// and run the Gaussian objective perturbation; the δ is charged to the table
// and shown in dp_models and the ledger. delta=0 keeps the pure-ε release.
func TestLMGCDeltaDefaultOverTheWire(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	deltaSpent := func() float64 {
		return queryFloat(t, ana, "SELECT delta_spent FROM dp_budget WHERE table_name = 'demo.iris'")
	}
	total := queryFloat(t, ana, "SELECT delta_total FROM dp_budget WHERE table_name = 'demo.iris'")
	want := auto.DefaultDelta(total)
	if !(want > 0) {
		t.Fatalf("demo.iris has δ budget %v: the test needs one", total)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1e-300, math.Abs(b)) }
	for _, c := range []struct {
		q, model string
		delta    float64
	}{
		{"SELECT DP_LMGC_TRAIN('iris', 0.5, 'model=lmgc_gdef')", "lmgc_gdef", want},
		{"SELECT DP_TRAIN('iris', 0.5, 'lmgc', 'model=lmgc_tdef')", "lmgc_tdef", want},
		{"SELECT DP_LMGC_TRAIN('iris', 0.5, 'delta=0; model=lmgc_pure')", "lmgc_pure", 0},
		{"SELECT DP_TRAIN('iris', 0.5, 'lmgc', 'delta=2e-7; model=lmgc_texp')", "lmgc_texp", 2e-7},
	} {
		d0, e0 := deltaSpent(), spent(t, ana, "demo.iris")
		var name string
		if err := ana.QueryRow(c.q).Scan(&name); err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if name != c.model {
			t.Fatalf("%s: model %q", c.q, name)
		}
		if d := queryFloat(t, root, "SELECT delta FROM dp_models WHERE name = ?", c.model); !near(d, c.delta) {
			t.Errorf("%s: dp_models delta %v, want %v", c.q, d, c.delta)
		}
		if d := queryFloat(t, root, "SELECT delta FROM dpsql.dp_ledger ORDER BY id DESC LIMIT 1"); !near(d, c.delta) {
			t.Errorf("%s: ledger delta %v, want %v", c.q, d, c.delta)
		}
		if d := deltaSpent() - d0; math.Abs(d-c.delta) > 1e-12*math.Max(c.delta, 1e-300)+1e-18 {
			t.Errorf("%s: δ spent %v, want %v", c.q, d, c.delta)
		}
		if e := spent(t, ana, "demo.iris") - e0; math.Abs(e-0.5) > 1e-9 {
			t.Errorf("%s: ε spent %v, want 0.5", c.q, e)
		}
		var params string
		if err := root.QueryRow("SELECT params FROM dp_models WHERE name = ?", c.model).Scan(&params); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(params, "delta=") {
			t.Errorf("%s: params %q do not show delta", c.q, params)
		}
	}
	wantErr(t, ana, "SELECT DP_LMGC_TRAIN('iris', 0.5, 'delta=1')", "delta")
}
