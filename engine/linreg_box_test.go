package engine_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestLinRegBoxOverTheWire: bounds=box (linreg.md §13) is planned before
// any charge (the dry run shows the box's ε and the rule), the real call
// charges exactly (ε, δ) once, and the model's scaler is the released box
// inside the declared bounds (bmi declared [10, 50]).
func TestLinRegBoxOverTheWire(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	str := func(q string) string { t.Helper(); return queryString(t, ana, q) }
	ledger := func() float64 { return queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger") }
	const eps = 3.0
	var plan struct {
		Charged     bool               `json:"charged"`
		Epsilon     float64            `json:"epsilon"`
		Events      []map[string]any   `json:"events"`
		Calibration map[string]float64 `json:"calibration"`
		Hyper       map[string]any     `json:"hyperparameters"`
	}
	before, epsBefore := ledger(), spent(t, ana, "demo.diabetes")
	if err := json.Unmarshal([]byte(str("SELECT DP_TRAIN('diabetes', 3, 'linreg', 'label=progression; bounds=box; features=bmi,bp,s5; dry_run=1')")), &plan); err != nil {
		t.Fatal(err)
	}
	clip, _ := plan.Hyper["clip"].(string)
	if plan.Charged || plan.Hyper["bounds"] != "box" || plan.Calibration["private_box"] != 1 || !(plan.Calibration["epsilon_box_quantile"] > 0) || !strings.Contains(clip, "per-feature private box") {
		t.Fatalf("dry run %+v", plan)
	}
	if math.Abs(plan.Epsilon-eps) > 1e-9 || ledger() != before || spent(t, ana, "demo.diabetes") != epsBefore {
		t.Fatal("dry run charged or plans another ε")
	}
	m := str("SELECT DP_TRAIN('diabetes', 3, 'linreg', 'label=progression; bounds=box; features=bmi,bp,s5')")
	if ledger() != before+1 || math.Abs(spent(t, ana, "demo.diabetes")-epsBefore-eps) > 1e-9 {
		t.Fatalf("charged %v in %v entries, want ε = %v once", spent(t, ana, "demo.diabetes")-epsBefore, ledger()-before, eps)
	}
	var rec struct {
		Model struct {
			Scaler struct{ Lo, Hi []float64 } `json:"scaler"`
			Params map[string]float64         `json:"params"`
		} `json:"model"`
	}
	if err := json.Unmarshal([]byte(str("SELECT DP_MODEL_JSON('"+m+"')")), &rec); err != nil {
		t.Fatal(err)
	}
	sc := rec.Model.Scaler
	if len(sc.Lo) != 3 || !(sc.Lo[0] >= 10 && sc.Lo[0] < sc.Hi[0] && sc.Hi[0] <= 50) || rec.Model.Params["private_box"] != 1 {
		t.Fatalf("model scaler %+v params %v", sc, rec.Model.Params)
	}
	if rmse := queryFloat(t, ana, "SELECT DP_EVALUATE('"+m+"', 'diabetes_test', 1)"); !(rmse >= 0) {
		t.Fatalf("rmse %v", rmse)
	}
}
