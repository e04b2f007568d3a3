package engine_test

import (
	"encoding/json"
	"testing"
)

// TestDPTrainLogRegObjective: method=objective (pure ε) reaches the plan
// through DP_TRAIN (dry_run shows the Laplace scale and the ridge), trains
// a usable model, and its public refusals (δ > 0, steps=) come before
// charging.
func TestDPTrainLogRegObjective(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	plan, s := trainDryRun(t, ana, "SELECT DP_TRAIN('iris', 1, 'logreg', 'method=objective; delta=0; dry_run=1')")
	if plan.Calibration["method_objective"] != 1 || !(plan.Calibration["laplace_scale"] > 0) || !(plan.Calibration["ridge"] > 0) {
		t.Fatalf("plan %s", s)
	}
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'logreg', 'method=objective; delta=1e-6')", "pure")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'logreg', 'method=objective; delta=0; steps=5')", "steps")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'logreg', 'method=newton; delta=0')", "method")
}

// TestDPTrainAutoPureObjective: auto with δ = 0 on a classification table
// plans logreg's objective method.
func TestDPTrainAutoPureObjective(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	var s string
	if err := ana.QueryRow("SELECT DP_TRAIN('wine', 1, 'auto', 'delta=0; dry_run=1')").Scan(&s); err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Kind        string             `json:"kind"`
		Calibration map[string]float64 `json:"calibration"`
	}
	if err := json.Unmarshal([]byte(s), &plan); err != nil {
		t.Fatalf("dry run %q: %v", s, err)
	}
	if plan.Kind != "logreg" || plan.Calibration["method_objective"] != 1 {
		t.Fatalf("auto δ=0 plan %s", s)
	}
}
