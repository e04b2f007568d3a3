package engine_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestDPTrainTuneEndToEnd: DP_TRAIN with tune=1 over the wire — dry_run
// shows the grid and the split without charging; the real call trains,
// charges exactly the total (ε, δ) in ONE ledger entry, and dp_models
// records tune=1, the grid and the choice but not the trial count; public
// refusals come before any charge.
func TestDPTrainTuneEndToEnd(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	str := func(q string) string {
		t.Helper()
		var s string
		if err := ana.QueryRow(q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return s
	}
	ledger := func() float64 { return queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger") }
	deltaSpent := func() float64 {
		return queryFloat(t, ana, "SELECT delta_spent FROM dp_budget WHERE table_name = 'demo.wine'")
	}

	before, eps0, d0 := ledger(), spent(t, ana, "demo.wine"), deltaSpent()
	var plan map[string]any
	if err := json.Unmarshal([]byte(str("SELECT DP_TRAIN('wine', 1.5, 'auto', 'tune=1; dry_run=1')")), &plan); err != nil {
		t.Fatalf("dry run is not JSON: %v", err)
	}
	hyper, _ := plan["hyperparameters"].(map[string]any)
	grid, _ := hyper["grid"].([]any)
	split, _ := hyper["split"].(map[string]any)
	if plan["charged"] != false || len(grid) != 5 || split == nil {
		t.Fatalf("dry run plan %v", plan)
	}
	if et, es := split["epsilon_train"].(float64), split["epsilon_score"].(float64); math.Abs(et+es-0.5) > 1e-12 || math.Abs(es-0.1) > 1e-12 {
		t.Fatalf("split %v, want ε_train + ε_score = 1.5/3 with score 0.1", split)
	}
	if e := plan["epsilon"].(float64); e > 1.5+1e-9 || e < 1.5-1e-9 {
		t.Fatalf("dry run quotes ε %v, want 1.5", e)
	}
	dTrunc := split["delta_truncation"].(float64)
	if !(dTrunc > 0 && dTrunc <= 1e-6) {
		t.Fatalf("truncation δ %v, want in (0, 1e-6]", dTrunc)
	}
	if ledger() != before || spent(t, ana, "demo.wine") != eps0 || deltaSpent() != d0 {
		t.Fatal("dry_run charged or recorded a release")
	}

	m := str("SELECT DP_TRAIN('wine', 1.5, 'auto', 'tune=1; model=wine_tuned')")
	if m != "wine_tuned" {
		t.Fatalf("model %q", m)
	}
	if got := ledger(); got != before+1 {
		t.Fatalf("ledger grew by %v entries, want 1", got-before)
	}
	if e := spent(t, ana, "demo.wine"); math.Abs(e-eps0-1.5) > 1e-9 {
		t.Fatalf("ε spent %v, want %v", e-eps0, 1.5)
	}
	if d := deltaSpent() - d0; math.Abs(d-dTrunc) > 1e-15 {
		t.Fatalf("δ spent %v, want the truncation δ %v", d, dTrunc)
	}
	params := str("SELECT params FROM dp_models WHERE name = 'wine_tuned'")
	for _, want := range []string{"tune=1", "grid=", "chosen=", "score="} {
		if !strings.Contains(params, want) {
			t.Fatalf("dp_models params %q lack %q", params, want)
		}
	}
	for _, kv := range strings.Split(params, "; ") {
		if k, _, _ := strings.Cut(kv, "="); k == "trials" || k == "trial_count" {
			t.Fatalf("dp_models params %q release the trial count", params)
		}
	}
	kind := str("SELECT kind FROM dp_models WHERE name = 'wine_tuned'")
	if kind != "lda" && kind != "gnb" && kind != "logreg" {
		t.Fatalf("tuned kind %q", kind)
	}
	if acc := queryFloat(t, ana, "SELECT DP_EVALUATE('wine_tuned', 'wine_test', 1)"); acc < 0 || acc > 1 {
		t.Fatalf("accuracy %v", acc)
	}
	// Per-kind grids train too.
	for _, k := range []string{"lda", "logreg"} {
		name := str("SELECT DP_TRAIN('iris', 0.9, '" + k + "', 'tune=1')")
		if got := str("SELECT kind FROM dp_models WHERE name = '" + name + "'"); got != k {
			t.Fatalf("tune=1 kind %s trained %q", k, got)
		}
	}

	// Public refusals, before any charge: a paper kind, pure ε (no δ for
	// the truncation), a bad stop probability, an unknown option.
	before, eps0 = ledger(), spent(t, ana, "demo.iris")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'svm', 'tune=1')", "tune=1")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'lda', 'tune=1; delta=0')", "δ > 0")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'lda', 'tune=1; stop=2')", "stop probability")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'lda', 'tune=1; depth=3')", "depth")
	if ledger() != before || spent(t, ana, "demo.iris") != eps0 {
		t.Fatal("a refused tune=1 call charged or recorded a release")
	}
}
