package engine_test

import (
	"math"
	"testing"
)

// TestSVMOptionsOverTheWire: issue 9's convergence attack configuration and
// the other out-of-range options are refused before anything is charged;
// delta= gives one joint Gaussian release, charged as requested.
func TestSVMOptionsOverTheWire(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	root := ts.connect("root", rootPW, "demo")
	ledger := func() float64 { return queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger") }
	before, spentBefore := ledger(), spent(t, ana, "demo.iris")
	for _, q := range []string{
		"SELECT DP_SVM_TRAIN('iris', 1, 'rbf', 'c=1e12; loss=logistic')",
		"SELECT DP_SVM_TRAIN('iris', 1, 'linear', 'C=1.55e6')",
		"SELECT DP_SVM_TRAIN('iris', 1, 'linear', 'C=5e-324')",
		"SELECT DP_SVM_TRAIN('iris', 1, 'linear', 'loss=hinge')",
	} {
		wantErr(t, ana, q)
	}
	if ledger() != before || spent(t, ana, "demo.iris") != spentBefore {
		t.Fatal("a refused DP_SVM_TRAIN charged or recorded a release")
	}
	var name string
	if err := ana.QueryRow("SELECT DP_SVM_TRAIN('iris', 1, 'linear', 'delta=1e-6; model=iris_svm_g')").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if d := queryFloat(t, root, "SELECT delta FROM dp_models WHERE name = 'iris_svm_g'"); math.Abs(d-1e-6) > 1e-12 {
		t.Fatalf("model delta %v, want 1e-6", d)
	}
	if s := spent(t, ana, "demo.iris"); math.Abs(s-spentBefore-1) > 1e-9 {
		t.Fatalf("spent %v after one ε=1 release, want %v", s, spentBefore+1)
	}
}
