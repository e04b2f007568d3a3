package engine_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestDPTrainEndToEnd: DP_TRAIN through the wire — auto on a classification
// and a regression table, every new kind, the delegated paper kinds, dry_run
// (no charge, no ledger entry), and refusals before charging.
func TestDPTrainEndToEnd(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	str := func(q string) string { t.Helper(); return queryString(t, ana, q) }
	ledger := func() float64 { return queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger") }

	// dry_run: the plan as JSON, nothing charged, nothing recorded.
	before, spentBefore := ledger(), spent(t, ana, "demo.wine")
	var plan map[string]any
	if err := json.Unmarshal([]byte(str("SELECT DP_TRAIN('wine', 1, 'auto', 'dry_run=1')")), &plan); err != nil {
		t.Fatalf("dry run is not JSON: %v", err)
	}
	if plan["charged"] != false || plan["kind"] == "" || plan["auto"] == nil || plan["epsilon"].(float64) <= 0 || plan["epsilon"].(float64) > 1+1e-9 {
		t.Fatalf("dry run plan %v", plan)
	}
	if ledger() != before || spent(t, ana, "demo.wine") != spentBefore {
		t.Fatal("dry_run charged or recorded a release")
	}

	// auto on classification (label domain declared) and regression.
	m := str("SELECT DP_TRAIN('wine', 1)")
	kind := str("SELECT kind FROM dp_models WHERE name = '" + m + "'")
	if kind == "" || kind == "linreg" {
		t.Fatalf("auto on wine trained kind %q", kind)
	}
	if s := spent(t, ana, "demo.wine"); math.Abs(s-spentBefore-1) > 1e-9 {
		t.Fatalf("wine spent %v after an ε=1 training, want %v", s, spentBefore+1)
	}
	acc := queryFloat(t, ana, "SELECT DP_EVALUATE('"+m+"', 'wine_test', 1)")
	if acc < 0 || acc > 1 {
		t.Fatalf("accuracy %v", acc)
	}
	r := str("SELECT DP_TRAIN('diabetes', 1, 'auto', 'label=progression')")
	if k := str("SELECT kind FROM dp_models WHERE name = '" + r + "'"); k != "linreg" {
		t.Fatalf("auto on diabetes trained kind %q, want linreg", k)
	}
	rmse := queryFloat(t, ana, "SELECT DP_EVALUATE('"+r+"', 'diabetes_test', 1)")
	if !(rmse >= 0) {
		t.Fatalf("rmse %v", rmse)
	}

	// Every kind DP_TRAIN plans itself, pure ε and with δ.
	for _, k := range []string{"lda", "qda", "gnb", "logreg"} {
		for _, opt := range []string{"delta=0", "delta=1e-6"} {
			// prior=off: the kind's own model (by default a private
			// selection may release the DP class prior instead).
			name := str("SELECT DP_TRAIN('iris', 0.5, '" + k + "', 'prior=off; " + opt + "')")
			if got := str("SELECT kind FROM dp_models WHERE name = '" + name + "'"); got != k {
				t.Fatalf("%s: model kind %q", k, got)
			}
			var cls string
			if err := ana.QueryRow("SELECT DP_PREDICT('" + name + "', 5.1, 3.5, 1.4, 0.2)").Scan(&cls); err != nil {
				t.Fatalf("%s predict: %v", k, err)
			}
			if cls != "setosa" && cls != "versicolor" && cls != "virginica" {
				t.Fatalf("%s predicted %q", k, cls)
			}
		}
	}
	// The papers' kinds, delegated.
	str("SELECT DP_TRAIN('iris', 0.5, 'lmgc')")
	str("SELECT DP_TRAIN('diabetes', 0.5, 'lsq', 'label=progression')")

	// Refused before charging: unknown kind, unknown option, bad delta,
	// model name taken.
	before, spentBefore = ledger(), spent(t, ana, "demo.iris")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 0.5, 'forest')", "unknown kind")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 0.5, 'lda', 'depth=3')", "depth")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 0.5, 'lda', 'delta=2')", "delta")
	str("SELECT DP_TRAIN('iris', 0.5, 'gnb', 'model=taken; prior=off')")
	before++
	spentBefore += 0.5
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 0.5, 'gnb', 'model=taken')", "taken")
	if ledger() != before || math.Abs(spent(t, ana, "demo.iris")-spentBefore) > 1e-9 {
		t.Fatal("a refused DP_TRAIN charged or recorded a release")
	}
	if js := str("SELECT DP_MODEL_JSON('taken')"); !strings.Contains(js, `"kind":"gnb"`) {
		t.Fatalf("model json %s", js)
	}
}
