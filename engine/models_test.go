package engine_test

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// demoServer starts a server with the demo datasets loaded.
func demoServer(t *testing.T) *testServer {
	t.Helper()
	ts := startServer(t, t.TempDir())
	if err := ts.e.LoadDemo("../testdata"); err != nil {
		t.Fatalf("load demo: %v", err)
	}
	return ts
}

func TestModelsEndToEnd(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	str := func(q string) string { t.Helper(); return queryString(t, ana, q) }

	// Linear SVM on breast cancer, evaluated on the held-out table.
	if m := str("SELECT DP_SVM_TRAIN('breast_cancer', 2, 'linear', 'C=1; model=cancer_svm')"); m != "cancer_svm" {
		t.Fatalf("model name %q", m)
	}
	acc := queryFloat(t, ana, "SELECT DP_EVALUATE('cancer_svm', 'breast_cancer_test', 1)")
	if acc < 0 || acc > 1 {
		t.Fatalf("DP accuracy %v outside [0, 1]", acc)
	}
	// rbf SVM with options.
	str("SELECT DP_SVM_TRAIN('breast_cancer', 1, 'rbf', 'C=1; dim=64; gamma=0.5')")

	// Multiclass Gaussian classifier, used on a public table.
	str("SELECT DP_LMGC_TRAIN('iris', 2, 'model=flowers')")
	rows, err := ana.Query("SELECT id, DP_PREDICT('flowers', sepal_length_cm, sepal_width_cm, petal_length_cm, petal_width_cm) FROM new_flowers ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var id int
		var cls string
		if err := rows.Scan(&id, &cls); err != nil {
			t.Fatal(err)
		}
		if cls != "setosa" && cls != "versicolor" && cls != "virginica" {
			t.Fatalf("prediction %q outside the label domain", cls)
		}
		n++
	}
	rows.Close()
	if n != 3 {
		t.Fatalf("%d predictions, want 3", n)
	}

	// Least squares on diabetes, DP RMSE on the test table.
	str("SELECT DP_LSQ('diabetes', 1, 'linear', 'label=progression; model=prog')")
	rmse := queryFloat(t, ana, "SELECT DP_EVALUATE('prog', 'diabetes_test', 1)")
	if rmse < 0 || rmse > 346-25 {
		t.Fatalf("DP RMSE %v outside [0, hi−lo]", rmse)
	}
	pred := str("SELECT DP_PREDICT('prog', 50, 1, 25, 90, 180, 100, 50, 4, 4.5, 90)")
	if v, err := strconv.ParseFloat(pred, 64); err != nil || v < 25 || v > 346 {
		t.Fatalf("regression prediction %q outside the label bounds", pred)
	}
	// Nie–Wang private prediction.
	p := queryFloat(t, ana, "SELECT DP_LSQ_PREDICT('diabetes', 0.5, 'linear', 'label=progression; lambda=0.5', 50, 1, 25, 90, 180, 100, 50, 4, 4.5, 90)")
	if math.IsNaN(p) {
		t.Fatal("NaN prediction")
	}

	// Models are listed and exported.
	if c := queryFloat(t, ana, "SELECT COUNT(*) FROM dp_models"); c != 4 {
		t.Fatalf("dp_models has %v rows, want 4", c)
	}
	var js string
	if err := ana.QueryRow("SELECT DP_MODEL_JSON('cancer_svm')").Scan(&js); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("DP_MODEL_JSON is not JSON: %v", err)
	}
	if strings.Contains(strings.ToLower(js), "alpha") || strings.Contains(strings.ToLower(js), "support") {
		t.Fatal("model JSON mentions dual coefficients or support vectors")
	}

	// Spent budget matches the releases: breast_cancer 2 + 1, iris 2,
	// diabetes 1 + 0.5; test tables 1 each.
	for table, want := range map[string]float64{"demo.breast_cancer": 3, "demo.iris": 2, "demo.diabetes": 1.5, "demo.breast_cancer_test": 1, "demo.diabetes_test": 1} {
		if s := spent(t, ana, table); math.Abs(s-want) > 1e-9 {
			t.Fatalf("%s spent %v, want %v", table, s, want)
		}
	}
	// DP_PREDICT per row of a protected table is refused, also for owners.
	wantErr(t, ana, "SELECT DP_PREDICT('flowers', sepal_length_cm, sepal_width_cm, petal_length_cm, petal_width_cm) FROM iris", "protected")
	wantErr(t, root, "SELECT DP_PREDICT('flowers', sepal_length_cm, sepal_width_cm, petal_length_cm, petal_width_cm) FROM iris", "not differentially private")
	// Models survive a restart.
	dir := ts.dir
	ts.stop()
	ts2 := startServer(t, dir)
	ana2 := ts2.connect("analyst", "analyst", "demo")
	if c := queryFloat(t, ana2, "SELECT COUNT(*) FROM dp_models"); c != 4 {
		t.Fatalf("dp_models after restart has %v rows", c)
	}
}

func TestModelBadInputChargesNothing(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	cases := map[string]string{
		"SELECT DP_SVM_TRAIN('breast_cancer', 1, 'poly')":                                                     "kernel",
		"SELECT DP_SVM_TRAIN('breast_cancer', 0, 'linear')":                                                   "epsilon",
		"SELECT DP_SVM_TRAIN('breast_cancer', -1, 'linear')":                                                  "epsilon",
		"SELECT DP_SVM_TRAIN('breast_cancer', 1, 'linear', 'C=0')":                                            "C",
		"SELECT DP_SVM_TRAIN('breast_cancer', 1, 'linear', 'C=-2')":                                           "C",
		"SELECT DP_SVM_TRAIN('breast_cancer', 1, 'rbf', 'dim=0')":                                             "dim",
		"SELECT DP_SVM_TRAIN('breast_cancer', 1, 'rbf', 'dim=100000000')":                                     "dim",
		"SELECT DP_SVM_TRAIN('breast_cancer', 1, 'linear', 'features=nosuch')":                                "no column",
		"SELECT DP_SVM_TRAIN('breast_cancer', 1, 'linear', 'bogus=1')":                                        "unknown option",
		"SELECT DP_SVM_TRAIN('breast_cancer', 1, 'linear', 'C')":                                              "key=value",
		"SELECT DP_SVM_TRAIN('breast_cancer', 1, 'linear', 'label=mean_radius')":                              "label domain",
		"SELECT DP_SVM_TRAIN('new_flowers', 1, 'linear')":                                                     "not protected",
		"SELECT DP_LMGC_TRAIN('iris', 0)":                                                                     "epsilon",
		"SELECT DP_LMGC_TRAIN('iris', 1, 'lambda=-1')":                                                        "lambda",
		"SELECT DP_LMGC_TRAIN('iris', 1, 'h=0')":                                                              "",
		"SELECT DP_LMGC_TRAIN('diabetes', 1)":                                                                 "label",
		"SELECT DP_LSQ('diabetes', 1, 'linear', 'method=magic')":                                              "method",
		"SELECT DP_LSQ('diabetes', 1, 'linear', 'method=input; delta=0')":                                     "delta",
		"SELECT DP_LSQ('diabetes', 1, 'linear', 'method=objective; delta=0')":                                 "delta",
		"SELECT DP_LSQ('diabetes', 1, 'linear', 'method=input; delta=0.01')":                                  "",
		"SELECT DP_LSQ_PREDICT('diabetes', 1, 'linear', 'lambda=2', 50, 1, 25, 90, 180, 100, 50, 4, 4.5, 90)": "lambda must be in (0, 1]",
		"SELECT DP_LSQ_PREDICT('diabetes', 1, 'linear', '', 1, 2)":                                            "feature values",
		"SELECT DP_LSQ('diabetes', 1, 'spline')":                                                              "kernel",
		"SELECT DP_EVALUATE('nomodel', 'iris_test', 1)":                                                       "does not exist",
	}
	for q, frag := range cases {
		if frag == "" {
			wantErr(t, ana, q)
		} else {
			wantErr(t, ana, q, frag)
		}
	}
	for _, table := range []string{"demo.breast_cancer", "demo.iris", "demo.diabetes", "demo.new_flowers"} {
		var s float64
		err := ana.QueryRow("SELECT epsilon_spent FROM dp_budget WHERE table_name = ?", table).Scan(&s)
		if err == nil && s != 0 {
			t.Fatalf("bad input charged %v to %s", s, table)
		}
	}
	if c := queryFloat(t, ana, "SELECT COUNT(*) FROM dp_models"); c != 0 {
		t.Fatalf("bad input created %v models", c)
	}
}
