package engine_test

import (
	"database/sql"
	"encoding/json"
	"testing"
)

// TestDPTrainLogRegClip: logreg's clip= option reaches the plan (dry_run
// shows the bound C and the sensitivity 2C it implies) and a bad value is
// refused before charging.
func TestDPTrainLogRegClip(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	plan, s := trainDryRun(t, ana, "SELECT DP_TRAIN('iris', 1, 'logreg', 'clip=0.3; dry_run=1')")
	if c := plan.Calibration["clip"]; c != 0.3 {
		t.Fatalf("clip in plan = %v, want 0.3 (%s)", c, s)
	}
	if l2 := plan.Calibration["sensitivity_l2"]; !(l2 >= 0.6 && l2 < 0.6*(1+1e-6)) {
		t.Fatalf("sensitivity %v, want 2·0.3 (+ rounding slack)", l2)
	}
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'logreg', 'clip=-1')", "clip")
}

// trainDryRun runs a DP_TRAIN dry run and decodes the plan's calibration
// and params (the JSON text is returned for messages).
func trainDryRun(t *testing.T, db *sql.DB, query string) (trainPlanJSON, string) {
	t.Helper()
	var s string
	if err := db.QueryRow(query).Scan(&s); err != nil {
		t.Fatal(err)
	}
	var plan trainPlanJSON
	if err := json.Unmarshal([]byte(s), &plan); err != nil {
		t.Fatalf("dry run %q: %v", s, err)
	}
	return plan, s
}

type trainPlanJSON struct {
	Calibration map[string]float64 `json:"calibration"`
	Params      string             `json:"params"`
}
