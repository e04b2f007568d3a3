package selection

import (
	"math"
	"reflect"
	"testing"

	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/mechanism/linreg"
	"github.com/dpsql/dpsql/noise"
)

func tuneData(n int) ([][]float64, []int, []float64) {
	X := make([][]float64, n)
	yc := make([]int, n)
	yr := make([]float64, n)
	for i := range X {
		c := int(noise.IntN(2))
		X[i] = []float64{float64(c) + 0.3*noise.Normal(), 0.5 * noise.Normal()}
		yc[i] = c
		yr[i] = X[i][0] - X[i][1]
	}
	return X, yc, yr
}

// TestTunerPlan: the cost is exactly the A-release's events (planned for
// n_A at the full ε, δ), the sizes follow the public rule, and the public
// refusals fire at planning.
func TestTunerPlan(t *testing.T) {
	cfg := gauss.Config{Kind: gauss.KindLDA, Epsilon: 1, Delta: 1e-6, N: 5000, Features: []string{"a", "b"},
		Lo: []float64{-2, -2}, Hi: []float64{3, 3}, Label: "y", Classes: []string{"0", "1"}}
	tu, err := PlanGauss(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg
	a.N = 4500
	tr, err := gauss.Plan(a)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tu.Events(), tr.Events()) {
		t.Fatalf("events %v, the A-release's are %v", tu.Events(), tr.Events())
	}
	if n, nA, nB := tu.Sizes(); n != 5000 || nA != 4500 || nB != 500 {
		t.Fatalf("sizes %d %d %d", n, nA, nB)
	}
	if len(tu.Grid()) != len(GaussVariants) || tu.Grid()[0] != "default" {
		t.Fatalf("grid %v", tu.Grid())
	}
	small := cfg
	small.N = 400
	if _, err := PlanGauss(small); err == nil {
		t.Fatal("n = 400 accepted")
	}
	low := cfg
	low.Epsilon = 0.05
	if _, err := PlanGauss(low); err == nil {
		t.Fatal("n_B·ε_B below the rule accepted")
	}
	if err := tu.CapScoreEpsilon(0.01); err == nil {
		t.Fatal("a cap below the rule accepted")
	}
}

// TestTunerTrains: classification and regression train, record the split
// in the model, and are better than chance / the midpoint.
func TestTunerTrains(t *testing.T) {
	const n = 4000
	X, yc, yr := tuneData(n)
	tu, err := PlanGauss(gauss.Config{Kind: gauss.KindLDA, Epsilon: 2, Delta: 1e-6, N: n, Features: []string{"a", "b"},
		Lo: []float64{-2, -2}, Hi: []float64{3, 3}, Label: "y", Classes: []string{"0", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	m, c, err := tu.TrainClassification(X, yc)
	if err != nil {
		t.Fatal(err)
	}
	if c < 0 || c >= len(GaussVariants) || m.Params["tune_n_score"] != 400 {
		t.Fatalf("chosen %d, params %v", c, m.Params)
	}
	if acc := ClassScore(m, []string{"0", "1"}, X, yc) / n; acc < 0.8 {
		t.Fatalf("accuracy %v", acc)
	}
	if _, _, err := tu.TrainClassification(X[:10], yc[:10]); err == nil {
		t.Fatal("wrong row count accepted")
	}
	tl, err := PlanLinReg(linreg.Config{Epsilon: 2, Delta: 1e-6, N: n, Features: []string{"a", "b"},
		Lo: []float64{-2, -2}, Hi: []float64{3, 3}, Label: "y", LabelLo: -4, LabelHi: 5})
	if err != nil {
		t.Fatal(err)
	}
	mr, _, err := tl.TrainRegression(X, yr)
	if err != nil {
		t.Fatal(err)
	}
	var se, sm float64
	for i, x := range X {
		p, err := mr.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		se += (p.Value - yr[i]) * (p.Value - yr[i])
		sm += (0.5 - yr[i]) * (0.5 - yr[i])
	}
	if math.Sqrt(se/n) > 0.5*math.Sqrt(sm/n) {
		t.Fatalf("RMSE %v against the midpoint's %v", math.Sqrt(se/n), math.Sqrt(sm/n))
	}
}
