package engine_test

import (
	"strings"
	"testing"
)

// TestLMGCMethodOverTheWire: DP_LMGC_TRAIN defaults to method=stats (the
// paper's model fitted from noisy sufficient statistics, lmgc.md §11),
// method=margin runs the paper's release, both are kind lmgc and show their
// method in dp_models; λ/h with stats and an unknown method are refused
// before anything is charged.
func TestLMGCMethodOverTheWire(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	for _, c := range []struct{ q, model, method string }{
		{"SELECT DP_LMGC_TRAIN('iris', 1, 'model=lm_default')", "lm_default", "stats"},
		{"SELECT DP_TRAIN('iris', 1, 'lmgc', 'prior=off; model=lm_t_default')", "lm_t_default", "stats"},
		{"SELECT DP_LMGC_TRAIN('iris', 1, 'method=margin; model=lm_margin')", "lm_margin", "margin"},
	} {
		var name string
		if err := ana.QueryRow(c.q).Scan(&name); err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		var params, kind string
		if err := root.QueryRow("SELECT params, kind FROM dp_models WHERE name = ?", c.model).Scan(&params, &kind); err != nil {
			t.Fatal(err)
		}
		if kind != "lmgc" || !strings.Contains(params, "method="+c.method) {
			t.Errorf("%s: kind %q params %q, want lmgc and method=%s", c.q, kind, params, c.method)
		}
		var pred string
		if err := ana.QueryRow("SELECT DP_PREDICT(?, 5.1, 3.5, 1.4, 0.2)", c.model).Scan(&pred); err != nil {
			t.Fatalf("%s: predict: %v", c.q, err)
		}
	}
	before := spent(t, ana, "demo.iris")
	wantErr(t, ana, "SELECT DP_LMGC_TRAIN('iris', 1, 'lambda=0.1')", "method=margin")
	wantErr(t, ana, "SELECT DP_LMGC_TRAIN('iris', 1, 'method=stats; h=0.5')", "method=margin")
	wantErr(t, ana, "SELECT DP_LMGC_TRAIN('iris', 1, 'method=bogus')", "unknown method")
	if s := spent(t, ana, "demo.iris"); s != before {
		t.Fatalf("a refused release was charged: %v → %v", before, s)
	}
}
