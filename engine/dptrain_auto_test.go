package engine_test

import (
	"encoding/json"
	"testing"
)

// TestDPTrainLogRegClip: logreg's clip= option reaches the plan (dry_run
// shows the bound C and the sensitivity 2C it implies) and a bad value is
// refused before charging.
func TestDPTrainLogRegClip(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	var s string
	if err := ana.QueryRow("SELECT DP_TRAIN('iris', 1, 'logreg', 'clip=0.3; dry_run=1')").Scan(&s); err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Calibration map[string]float64 `json:"calibration"`
		Params      string             `json:"params"`
	}
	if err := json.Unmarshal([]byte(s), &plan); err != nil {
		t.Fatalf("dry run %q: %v", s, err)
	}
	if c := plan.Calibration["clip"]; c != 0.3 {
		t.Fatalf("clip in plan = %v, want 0.3 (%s)", c, s)
	}
	if l2 := plan.Calibration["sensitivity_l2"]; !(l2 >= 0.6 && l2 < 0.6*(1+1e-6)) {
		t.Fatalf("sensitivity %v, want 2·0.3 (+ rounding slack)", l2)
	}
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'logreg', 'clip=-1')", "clip")
}
