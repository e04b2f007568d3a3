package engine_test

import (
	"database/sql"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestDryRunEveryFunction: over the wire, dry_run=1 on every ★ function
// answers its plan as JSON without a ledger row or any charge, and the real
// call that follows charges exactly what the dry run announced (same ledger
// function, same ε and δ after accounting; trained models: the same
// dp_models params).
func TestDryRunEveryFunction(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	str := func(db *sql.DB, q string) string {
		t.Helper()
		var s string
		if err := db.QueryRow(q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return s
	}
	ledgerCount := func() float64 { return queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger") }
	budgets := func() map[string][2]float64 {
		rows, err := ana.Query("SELECT table_name, epsilon_spent, delta_spent FROM dp_budget")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string][2]float64{}
		for rows.Next() {
			var name string
			var e, d float64
			if err := rows.Scan(&name, &e, &d); err != nil {
				t.Fatal(err)
			}
			out[name] = [2]float64{e, d}
		}
		return out
	}
	sameBudgets := func(a, b map[string][2]float64) bool {
		if len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if b[k] != v {
				return false
			}
		}
		return true
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

	// A model for DP_EVALUATE.
	str(ana, "SELECT DP_TRAIN('wine', 0.5, 'lda', 'model=wine_lda')")

	cases := []struct {
		dry, real string // the real call is dry with dry_run removed
		table     string // dp_budget table charged
		trains    bool
	}{
		{"SELECT DP_MEAN('diabetes', 'bmi', 0.1, 'dry_run=1')", "SELECT DP_MEAN('diabetes', 'bmi', 0.1)", "demo.diabetes", false},
		{"SELECT DP_HISTOGRAM('iris', 'species', 0.1, 'dry_run=1')", "SELECT DP_HISTOGRAM('iris', 'species', 0.1)", "demo.iris", false},
		{"SELECT DP_HISTOGRAM('diabetes', 'age', 0.1, 'bins=5; dry_run=1')", "SELECT DP_HISTOGRAM('diabetes', 'age', 0.1, 'bins=5')", "demo.diabetes", false},
		{"SELECT DP_QUANTILE('diabetes', 'bmi', 0.5, 0.1, 'grid=100; dry_run=1')", "SELECT DP_QUANTILE('diabetes', 'bmi', 0.5, 0.1, 'grid=100')", "demo.diabetes", false},
		{"SELECT DP_EVALUATE('wine_lda', 'wine_test', 0.1, 'dry_run=1')", "SELECT DP_EVALUATE('wine_lda', 'wine_test', 0.1)", "demo.wine_test", false},
		{"SELECT DP_LSQ_PREDICT('diabetes', 0.1, 'linear', 'label=progression; dry_run=1', 50, 1, 25, 90, 180, 100, 50, 4, 4.5, 90)",
			"SELECT DP_LSQ_PREDICT('diabetes', 0.1, 'linear', 'label=progression', 50, 1, 25, 90, 180, 100, 50, 4, 4.5, 90)", "demo.diabetes", false},
		{"SELECT DP_SVM_TRAIN('breast_cancer', 0.5, 'linear', 'model=dr_svm; dry_run=1')", "SELECT DP_SVM_TRAIN('breast_cancer', 0.5, 'linear', 'model=dr_svm')", "demo.breast_cancer", true},
		{"SELECT DP_SVM_TRAIN('iris', 0.5, 'rbf', 'delta=1e-7; dim=16; model=dr_svm_rbf; dry_run=1')", "SELECT DP_SVM_TRAIN('iris', 0.5, 'rbf', 'delta=1e-7; dim=16; model=dr_svm_rbf')", "demo.iris", true},
		{"SELECT DP_LMGC_TRAIN('iris', 0.5, 'model=dr_lmgc; dry_run=1')", "SELECT DP_LMGC_TRAIN('iris', 0.5, 'model=dr_lmgc')", "demo.iris", true},
		{"SELECT DP_LSQ('diabetes', 0.5, 'linear', 'label=progression; model=dr_lsq; dry_run=1')", "SELECT DP_LSQ('diabetes', 0.5, 'linear', 'label=progression; model=dr_lsq')", "demo.diabetes", true},
		{"SELECT DP_LSQ('diabetes', 0.5, 'linear', 'label=progression; method=objective; delta=1e-7; model=dr_lsq_obj; dry_run=1')",
			"SELECT DP_LSQ('diabetes', 0.5, 'linear', 'label=progression; method=objective; delta=1e-7; model=dr_lsq_obj')", "demo.diabetes", true},
		{"SELECT DP_LSQ('diabetes', 0.5, 'linear', 'label=progression; center=0.25; delta=0; model=dr_lsq_c; dry_run=1')",
			"SELECT DP_LSQ('diabetes', 0.5, 'linear', 'label=progression; center=0.25; delta=0; model=dr_lsq_c')", "demo.diabetes", true},
		{"SELECT DP_TRAIN('iris', 0.5, 'svm', 'model=dr_t_svm; dry_run=1')", "SELECT DP_TRAIN('iris', 0.5, 'svm', 'model=dr_t_svm')", "demo.iris", true},
		{"SELECT DP_TRAIN('iris', 0.5, 'lmgc', 'model=dr_t_lmgc; dry_run=1')", "SELECT DP_TRAIN('iris', 0.5, 'lmgc', 'model=dr_t_lmgc')", "demo.iris", true},
		{"SELECT DP_TRAIN('diabetes', 0.5, 'lsq', 'label=progression; model=dr_t_lsq; dry_run=1')", "SELECT DP_TRAIN('diabetes', 0.5, 'lsq', 'label=progression; model=dr_t_lsq')", "demo.diabetes", true},
		{"SELECT DP_TRAIN('diabetes', 0.5, 'linreg', 'label=progression; model=dr_t_lin; dry_run=1')", "SELECT DP_TRAIN('diabetes', 0.5, 'linreg', 'label=progression; model=dr_t_lin')", "demo.diabetes", true},
		{"SELECT DP_TRAIN('wine', 0.5, 'auto', 'model=dr_t_auto; dry_run=1')", "SELECT DP_TRAIN('wine', 0.5, 'auto', 'model=dr_t_auto')", "demo.wine", true},
	}
	for _, c := range cases {
		n0, b0 := ledgerCount(), budgets()
		var plan map[string]any
		js := str(ana, c.dry)
		if err := json.Unmarshal([]byte(js), &plan); err != nil {
			t.Fatalf("%s: not JSON: %v (%s)", c.dry, err, js)
		}
		if plan["dry_run"] != true || plan["charged"] != false || plan["admitted"] != true || plan["mechanism"] == "" || plan["calibration"] == nil {
			t.Fatalf("%s: plan %s", c.dry, js)
		}
		if n1, b1 := ledgerCount(), budgets(); n1 != n0 || !sameBudgets(b0, b1) {
			t.Fatalf("%s: the dry run changed dp_ledger (%v → %v rows) or dp_budget (%v → %v)", c.dry, n0, n1, b0, b1)
		}
		// The real call: one ledger row charging what the plan said.
		out := str(ana, c.real)
		var fn string
		var eps, delta float64
		if err := root.QueryRow("SELECT function_name, epsilon, delta FROM dpsql.dp_ledger ORDER BY id DESC LIMIT 1").Scan(&fn, &eps, &delta); err != nil {
			t.Fatal(err)
		}
		if ledgerCount() != n0+1 {
			t.Fatalf("%s: %v ledger rows added, want 1", c.real, ledgerCount()-n0)
		}
		if fn != plan["function"] || !near(eps, plan["epsilon"].(float64)) || !near(delta, plan["delta"].(float64)) {
			t.Fatalf("%s: ledger (%s, %v, %v), dry run (%v, %v, %v)", c.real, fn, eps, delta, plan["function"], plan["epsilon"], plan["delta"])
		}
		spentE := budgets()[c.table][0] - b0[c.table][0]
		if !near(spentE, plan["epsilon"].(float64)) {
			t.Fatalf("%s: %s spent %v more, the dry run said %v", c.real, c.table, spentE, plan["epsilon"])
		}
		if c.trains {
			if out != plan["model"] {
				t.Fatalf("%s: model %q, dry run named %v", c.real, out, plan["model"])
			}
			params := str(ana, "SELECT params FROM dp_models WHERE name = '"+out+"'")
			if params != plan["params"] {
				t.Fatalf("%s: dp_models params %q, dry run %q", c.real, params, plan["params"])
			}
		}
	}

	// The default DP_LSQ call shows the rule's choice; the demo tables have
	// a δ budget, so δ defaults to a share of it.
	var plan map[string]any
	if err := json.Unmarshal([]byte(str(ana, "SELECT DP_LSQ('diabetes', 1, 'linear', 'label=progression; dry_run=1')")), &plan); err != nil {
		t.Fatal(err)
	}
	hyper := plan["hyperparameters"].(map[string]any)
	if hyper["method"] != "output" || !(plan["delta"].(float64) > 0) || !(hyper["lambda"].(float64) > 0) {
		t.Fatalf("default DP_LSQ on 353 rows: %v", plan)
	}

	// Errors from public inputs come before any charge, dry run or not; a
	// dry run of a call over budget is answered (admitted=false), not charged.
	n0 := ledgerCount()
	wantErr(t, ana, "SELECT DP_MEAN('diabetes', 'bmi', 0.1, 'dry_run=maybe')", "dry_run")
	wantErr(t, ana, "SELECT DP_MEAN('diabetes', 'bmi', 0.1, 'grid=3')", "grid")
	wantErr(t, ana, "SELECT DP_LSQ('diabetes', 1, 'linear', 'label=progression; method=magic; dry_run=1')", "method")
	if err := json.Unmarshal([]byte(str(ana, "SELECT DP_MEAN('diabetes', 'bmi', 1000, 'dry_run=1')")), &plan); err != nil {
		t.Fatal(err)
	}
	if plan["admitted"] != false || !strings.Contains(plan["refusal"].(string), "budget") {
		t.Fatalf("over-budget dry run: %v", plan)
	}
	if ledgerCount() != n0 {
		t.Fatal("refused calls or dry runs wrote to dp_ledger")
	}
}
