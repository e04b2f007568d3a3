package engine_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/mechanism/selection"
)

// tuneRegTable imports demo.reg: 800 deterministic rows y = 2·x1 − x2 +
// small noise, bounds declared, protected with (10, 1e-5).
func tuneRegTable(t *testing.T, ts *testServer) {
	t.Helper()
	csv := filepath.Join(t.TempDir(), "reg.csv")
	var b strings.Builder
	b.WriteString("id,x1,x2,y\n")
	for i := 0; i < 800; i++ {
		h := uint64(i)*0x9E3779B97F4A7C15 + 777
		x1, x2 := float64(h>>11%1000)/1000, float64(h>>31%1000)/1000
		e := (float64(h>>51%100) - 50) / 500
		fmt.Fprintf(&b, "%d,%.3f,%.3f,%.4f\n", i, x1, x2, 2*x1-x2+e)
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.e.ImportCSVFile("demo.reg", csv); err != nil {
		t.Fatal(err)
	}
	root := ts.connect("root", rootPW, "demo")
	for _, q := range []string{"CALL dp_bounds('reg', 'x1', 0, 1)", "CALL dp_bounds('reg', 'x2', 0, 1)",
		"CALL dp_bounds('reg', 'y', -2, 3)", "CALL dp_protect('reg', 10, 1e-5)"} {
		mustExec(t, root, q)
	}
}

// TestDPTrainTuneEndToEnd: DP_TRAIN with tune=1 over the wire — dry_run
// shows the grid, the split sizes and the charge without charging; the real
// call trains, charges exactly the call's (ε, δ) in ONE ledger entry, and
// dp_models records tune=1, the grid, the choice and n_fit/n_score; public
// refusals come before any charge.
func TestDPTrainTuneEndToEnd(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	str := func(q string) string { t.Helper(); return queryString(t, ana, q) }
	ledger := func() float64 { return queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger") }
	deltaSpent := func(tbl string) float64 {
		return queryFloat(t, ana, "SELECT delta_spent FROM dp_budget WHERE table_name = '"+tbl+"'")
	}

	before, eps0, d0 := ledger(), spent(t, ana, "demo.digits"), deltaSpent("demo.digits")
	var plan map[string]any
	if err := json.Unmarshal([]byte(str("SELECT DP_TRAIN('digits', 2, 'lda', 'tune=1; dry_run=1')")), &plan); err != nil {
		t.Fatalf("dry run is not JSON: %v", err)
	}
	hyper, _ := plan["hyperparameters"].(map[string]any)
	grid, _ := hyper["grid"].([]any)
	split, _ := hyper["split"].(map[string]any)
	if plan["charged"] != false || len(grid) != len(selection.GaussVariants) || split == nil {
		t.Fatalf("dry run plan %v", plan)
	}
	n, nFit, nScore := split["n"].(float64), split["n_fit"].(float64), split["n_score"].(float64)
	if nScore != math.Floor(n/selection.HoldoutDivisor) || nFit+nScore != n {
		t.Fatalf("split %v, want n_score = ⌊n/%d⌋", split, selection.HoldoutDivisor)
	}
	if e := plan["epsilon"].(float64); math.Abs(e-2) > 1e-9 {
		t.Fatalf("dry run quotes ε %v, want 2", e)
	}
	if eb := hyper["score_epsilon"].(float64); !(eb > 0 && eb <= 2) {
		t.Fatalf("score ε %v", eb)
	}
	dQuote := plan["delta"].(float64)
	if ledger() != before || spent(t, ana, "demo.digits") != eps0 || deltaSpent("demo.digits") != d0 {
		t.Fatal("dry_run charged or recorded a release")
	}

	if m := str("SELECT DP_TRAIN('digits', 2, 'lda', 'tune=1; model=digits_tuned')"); m != "digits_tuned" {
		t.Fatalf("model %q", m)
	}
	if got := ledger(); got != before+1 {
		t.Fatalf("ledger grew by %v entries, want 1", got-before)
	}
	if e := spent(t, ana, "demo.digits"); math.Abs(e-eps0-2) > 1e-9 {
		t.Fatalf("ε spent %v, want 2", e-eps0)
	}
	if d := deltaSpent("demo.digits") - d0; math.Abs(d-dQuote) > 1e-15 {
		t.Fatalf("δ spent %v, the dry run quoted %v", d, dQuote)
	}
	params := str("SELECT params FROM dp_models WHERE name = 'digits_tuned'")
	for _, want := range []string{"tune=1", "grid=default|", "chosen=", "n_fit=", "n_score=", "score_epsilon="} {
		if !strings.Contains(params, want) {
			t.Fatalf("dp_models params %q lack %q", params, want)
		}
	}
	if k := str("SELECT kind FROM dp_models WHERE name = 'digits_tuned'"); k != "lda" {
		t.Fatalf("tuned kind %q", k)
	}
	if acc := queryFloat(t, ana, "SELECT DP_EVALUATE('digits_tuned', 'digits_test', 1)"); acc < 0 || acc > 1 {
		t.Fatalf("accuracy %v", acc)
	}

	// Regression: linreg over its ridge grid, and auto on a regression table.
	tuneRegTable(t, ts)
	for _, k := range []string{"linreg", "auto"} {
		name := str("SELECT DP_TRAIN('reg', 2, '" + k + "', 'tune=1; features=x1,x2; label=y')")
		if got := str("SELECT kind FROM dp_models WHERE name = '" + name + "'"); got != "linreg" {
			t.Fatalf("tune=1 kind %s trained %q", k, got)
		}
		if p := str("SELECT params FROM dp_models WHERE name = '" + name + "'"); !strings.Contains(p, "chosen=ridge=") {
			t.Fatalf("linreg tune params %q", p)
		}
	}

	// kind=auto on a classification table: a tuned plan of the kind auto
	// picks, or (when auto picks logreg, which has no grid) a refusal that
	// says so, before any charge.
	var auto string
	if err := ana.QueryRow("SELECT DP_TRAIN('digits', 2, 'auto', 'tune=1; dry_run=1')").Scan(&auto); err != nil {
		if !strings.Contains(err.Error(), "auto chose logreg") {
			t.Fatalf("auto tune=1: %v", err)
		}
	} else if !strings.Contains(auto, `"tune":1`) || !strings.Contains(auto, `"kind":"lda"`) && !strings.Contains(auto, `"kind":"gnb"`) && !strings.Contains(auto, `"kind":"qda"`) {
		t.Fatalf("auto tune=1 plan %s", auto)
	}
	t.Logf("auto tune=1 on digits: %.200s", auto)

	// Public refusals, before any charge: a paper kind, logreg, a table too
	// small to hold out (iris: n_score = 24), ε too small for the held-out
	// part to score, an unknown option.
	for _, tbl := range []string{"demo.iris", "demo.digits"} {
		before, eps0 = ledger(), spent(t, ana, tbl)
		short := strings.TrimPrefix(tbl, "demo.")
		wantErr(t, ana, "SELECT DP_TRAIN('"+short+"', 1, 'svm', 'tune=1')", "tune=1")
		wantErr(t, ana, "SELECT DP_TRAIN('"+short+"', 1, 'logreg', 'tune=1')", "tune=1")
		if ledger() != before || spent(t, ana, tbl) != eps0 {
			t.Fatal("a refused tune=1 call charged or recorded a release")
		}
	}
	before, eps0 = ledger(), spent(t, ana, "demo.iris")
	wantErr(t, ana, "SELECT DP_TRAIN('iris', 1, 'lda', 'tune=1')", "held-out")
	before2, eps2 := ledger(), spent(t, ana, "demo.digits")
	wantErr(t, ana, "SELECT DP_TRAIN('digits', 1, 'lda', 'tune=1; depth=3')", "depth")
	wantErr(t, ana, "SELECT DP_TRAIN('digits', 0.05, 'lda', 'tune=1')", "n_B·ε_B")
	if ledger() != before2 || spent(t, ana, "demo.iris") != eps0 || spent(t, ana, "demo.digits") != eps2 || before2 != before {
		t.Fatal("a refused tune=1 call charged or recorded a release")
	}
}
