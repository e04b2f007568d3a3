package engine_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestDPTrainPrivateBoxOverTheWire: box=private on DP_TRAIN's
// classification kinds (docs/mechanisms/box.md). The dry run shows the mode
// and the rule without charging; the call charges exactly (ε, δ) once — the
// quantiles and the kind in one Gaussian event when δ > 0, their sum when
// δ = 0 — the model records the released box (its scaler) and DP_PREDICT
// uses it; box=public and a bad mode are planned before any charge.
func TestDPTrainPrivateBoxOverTheWire(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	str := func(q string) string { t.Helper(); return queryString(t, ana, q) }
	ledger := func() float64 { return queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger") }
	deltaSpent := func() float64 {
		return queryFloat(t, root, "SELECT delta_spent FROM dpsql.dp_budget WHERE table_name = 'demo.iris'")
	}
	type planJSON struct {
		Charged  bool             `json:"charged"`
		Epsilon  float64          `json:"epsilon"`
		Delta    float64          `json:"delta"`
		ReqDelta float64          `json:"requested_delta"`
		Events   []map[string]any `json:"events"`
		Hyper    map[string]any   `json:"hyperparameters"`
		Params   string           `json:"params"`
	}
	for _, c := range [][2]string{{"logreg", "delta=1e-6"}, {"logreg", "delta=0"}, {"lda", "delta=1e-6"}, {"gnb", "delta=0"}, {"svm", "delta=1e-6"}, {"svm", "delta=0"}, {"lmgc", "delta=1e-6"}, {"lmgc", "delta=0"}} {
		kind, dl := c[0], c[1]
		before, epsBefore, deltaBefore := ledger(), spent(t, ana, "demo.iris"), deltaSpent()
		var plan planJSON
		q := "SELECT DP_TRAIN('iris', 1, '" + kind + "', 'box=private; prior=off; " + dl + "; dry_run=1')" // the box's own event (issue 28's prior adds two)
		if err := json.Unmarshal([]byte(str(q)), &plan); err != nil {
			t.Fatal(err)
		}
		rule, _ := plan.Hyper["box_rule"].(string)
		if plan.Charged || plan.Hyper["box"] != "private" || !strings.HasPrefix(rule, "private:") || !strings.Contains(plan.Params, "box=private") {
			t.Fatalf("%s %s dry run %+v", kind, dl, plan)
		}
		if math.Abs(plan.Epsilon-1) > 1e-9 {
			t.Fatalf("%s %s: dry run would charge ε = %v, want 1", kind, dl, plan.Epsilon)
		}
		if dl == "delta=1e-6" {
			if len(plan.Events) != 1 || plan.Events[0]["kind"] != "gaussian" || plan.Events[0]["epsilon"] != 1.0 || math.Abs(plan.Delta-1e-6) > 1e-18 {
				t.Fatalf("%s: events %v, want one Gaussian event at (1, 1e-6)", kind, plan.Events)
			}
		} else if len(plan.Events) < 2 || plan.Delta != 0 {
			t.Fatalf("%s δ=0: events %v", kind, plan.Events)
		}
		if ledger() != before || spent(t, ana, "demo.iris") != epsBefore || deltaSpent() != deltaBefore {
			t.Fatal("dry run charged")
		}

		m := str("SELECT DP_TRAIN('iris', 1, '" + kind + "', 'box=private; prior=off; " + dl + "')")
		if ledger() != before+1 {
			t.Fatalf("ledger grew by %v, want one entry", ledger()-before)
		}
		if e := spent(t, ana, "demo.iris") - epsBefore; math.Abs(e-1) > 1e-9 {
			t.Fatalf("%s %s: charged ε = %v, want 1", kind, dl, e)
		}
		if d := deltaSpent() - deltaBefore; math.Abs(d-plan.Delta) > 1e-15 {
			t.Fatalf("%s %s: charged δ = %v, want %v", kind, dl, d, plan.Delta)
		}
		js := str("SELECT DP_MODEL_JSON('" + m + "')")
		if !strings.Contains(js, `"box_private":1`) || !strings.Contains(js, `"box_epsilon_quantile":`) {
			t.Fatalf("model json lacks the box: %s", js)
		}
		if p := str("SELECT params FROM dp_models WHERE name = '" + m + "'"); !strings.Contains(p, "box=private") {
			t.Fatalf("dp_models params %q lack box=private", p)
		}
		var cls string
		if err := ana.QueryRow("SELECT DP_PREDICT('" + m + "', 5.1, 3.5, 1.4, 0.2)").Scan(&cls); err != nil {
			t.Fatalf("%s predict: %v", kind, err)
		}
		if cls != "setosa" && cls != "versicolor" && cls != "virginica" {
			t.Fatalf("%s predicted %q", kind, cls)
		}
		// A row far outside the released (and the declared) box is
		// clipped, not refused.
		if err := ana.QueryRow("SELECT DP_PREDICT('" + m + "', 1e9, -1e9, 0, 1e9)").Scan(&cls); err != nil {
			t.Fatalf("%s predict outside the box: %v", kind, err)
		}
	}

	// box=public; a bad mode is refused before charging.
	var plan planJSON
	if err := json.Unmarshal([]byte(str("SELECT DP_TRAIN('iris', 1, 'logreg', 'box=public; dry_run=1')")), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Hyper["box"] != "public" || !strings.Contains(plan.Params, "box=public") {
		t.Fatalf("box=public dry run %+v", plan)
	}
	before, epsBefore := ledger(), spent(t, ana, "demo.iris")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'lda', 'box=data')", "box")
	// lmgc: the box belongs to method=stats; the margin release keeps the
	// declared bounds and refuses box=private before charging.
	wantErr(t, ana, "SELECT DP_LMGC_TRAIN('iris', 1, 'method=margin; box=private')", "method=stats only")
	wantErr(t, ana, "SELECT DP_LMGC_TRAIN('iris', 1, 'box=data')", "box")
	if ledger() != before || spent(t, ana, "demo.iris") != epsBefore {
		t.Fatal("a refused call charged")
	}
	for q, want := range map[string]string{
		"SELECT DP_LMGC_TRAIN('iris', 1, 'box=private; delta=1e-6; dry_run=1')":   "private",
		"SELECT DP_LMGC_TRAIN('iris', 1, 'method=margin; box=auto; dry_run=1')":   "",
		"SELECT DP_LMGC_TRAIN('iris', 1, 'method=margin; box=public; dry_run=1')": "",
	} {
		var plan planJSON
		if err := json.Unmarshal([]byte(str(q)), &plan); err != nil {
			t.Fatal(err)
		}
		if got, _ := plan.Hyper["box"].(string); got != want || plan.Charged {
			t.Fatalf("%s: box %q, want %q (%+v)", q, got, want, plan)
		}
	}
}
