package engine_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestLinRegPrivateBoundsOverTheWire: DP_TRAIN linreg's default at n·ε ≥ 1000
// is bounds=private (linreg.md §11). The dry run shows the ε split and the
// clip rule without charging; the real default call charges exactly (ε, δ)
// once — the quantiles and AdaSSP in one ledger entry — and
// the model records the released radii; bounds=public and a bad mode are
// planned before any charge.
func TestLinRegPrivateBoundsOverTheWire(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	str := func(q string) string { t.Helper(); return queryString(t, ana, q) }
	ledger := func() float64 { return queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger") }
	deltaSpent := func() float64 {
		return queryFloat(t, root, "SELECT delta_spent FROM dpsql.dp_budget WHERE table_name = 'demo.diabetes'")
	}
	const eps = 3.0 // n = 353: n·ε ≥ 1000

	before, epsBefore, deltaBefore := ledger(), spent(t, ana, "demo.diabetes"), deltaSpent()
	var plan struct {
		Charged     bool               `json:"charged"`
		Epsilon     float64            `json:"epsilon"`
		Delta       float64            `json:"delta"`
		ReqDelta    float64            `json:"requested_delta"`
		Events      []map[string]any   `json:"events"`
		Calibration map[string]float64 `json:"calibration"`
		Hyper       map[string]any     `json:"hyperparameters"`
	}
	if err := json.Unmarshal([]byte(str("SELECT DP_TRAIN('diabetes', 3, 'linreg', 'label=progression; dry_run=1')")), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Charged || plan.Hyper["bounds"] != "private" || plan.Hyper["clip"] == nil {
		t.Fatalf("dry run %+v", plan)
	}
	c := plan.Calibration
	if math.Abs(c["epsilon_norm_quantile"]-0.05*eps) > 1e-12 || math.Abs(c["epsilon_label_radius"]-0.05*eps) > 1e-12 || c["private_bounds"] != 1 {
		t.Fatalf("dry-run ε split %v", c)
	}
	// One zCDP event for the whole release, or the basic split (two
	// quantile events and AdaSSP at 0.9ε), whichever is tighter.
	if joint := c["joint_zcdp"] == 1; (joint && len(plan.Events) != 1) || (!joint && (len(plan.Events) != 3 || math.Abs(c["epsilon_ssp"]-0.9*eps) > 1e-12)) {
		t.Fatalf("dry-run events %v, calibration %v", plan.Events, c)
	}
	if math.Abs(plan.Epsilon-eps) > 1e-9 || !(plan.ReqDelta > 0) || math.Abs(plan.Delta-plan.ReqDelta) > 1e-15 {
		t.Fatalf("dry run would charge (%v, %v), want (%v, %v)", plan.Epsilon, plan.Delta, eps, plan.ReqDelta)
	}
	if ledger() != before || spent(t, ana, "demo.diabetes") != epsBefore || deltaSpent() != deltaBefore {
		t.Fatal("dry run charged")
	}

	m := str("SELECT DP_TRAIN('diabetes', 3, 'linreg', 'label=progression')")
	if ledger() != before+1 {
		t.Fatalf("ledger grew by %v, want one entry", ledger()-before)
	}
	if e := spent(t, ana, "demo.diabetes") - epsBefore; math.Abs(e-eps) > 1e-9 {
		t.Fatalf("charged ε = %v, want %v", e, eps)
	}
	if d := deltaSpent() - deltaBefore; math.Abs(d-plan.ReqDelta) > 1e-15 {
		t.Fatalf("charged δ = %v, want %v", d, plan.ReqDelta)
	}
	if js := str("SELECT DP_MODEL_JSON('" + m + "')"); !strings.Contains(js, `"clip_feature_norm":`) || !strings.Contains(js, `"clip_label_radius":`) {
		t.Fatalf("model json lacks the released radii: %s", js)
	}
	if rmse := queryFloat(t, ana, "SELECT DP_EVALUATE('"+m+"', 'diabetes_test', 1)"); !(rmse >= 0) {
		t.Fatalf("rmse %v", rmse)
	}

	// bounds=public at the same ε; a bad mode is refused before charging.
	if err := json.Unmarshal([]byte(str("SELECT DP_TRAIN('diabetes', 3, 'linreg', 'label=progression; bounds=public; dry_run=1')")), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Hyper["bounds"] != "public" || len(plan.Events) != 1 || plan.Calibration["private_bounds"] != 0 {
		t.Fatalf("bounds=public dry run %+v", plan)
	}
	before, epsBefore = ledger(), spent(t, ana, "demo.diabetes")
	wantErr(t, ana, "SELECT DP_TRAIN('diabetes', 1, 'linreg', 'label=progression; bounds=data')", "bounds")
	if ledger() != before || spent(t, ana, "demo.diabetes") != epsBefore {
		t.Fatal("a refused call charged")
	}
}
