package linreg

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/mechanism"
)

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// TestTrainNeverFailsOnRows: once the plan is made, no table of the planned
// shape makes Train fail or return a non-finite model — over extreme
// privacy parameters, n = 1, NULL rows, values far outside the declared
// bounds, constant columns, and on neighbouring tables alike (the outcome
// "model, no error" is the same for all). There is no iteration count to
// compare: the release is three noise draws and a fixed post-processing.
func TestTrainNeverFailsOnRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const d = 4
	nan := math.NaN()
	tables := map[string]dataset{}
	base := synthLinear(rng, synthBeta(rng, d), 30, 0.2)
	tables["base"] = base
	tables["neighbour-corner"] = replaceRow(base, []float64{1, -1, 1, -1, 1})
	tables["neighbour-null"] = replaceRow(base, []float64{nan, nan, nan, nan, nan})
	huge := dataset{}
	nulls := dataset{}
	constant := dataset{}
	for i := 0; i < 30; i++ {
		huge.x = append(huge.x, []float64{1e300, -1e300, math.Inf(1), math.Inf(-1)})
		huge.y = append(huge.y, math.Inf(1))
		nulls.x = append(nulls.x, []float64{nan, nan, nan, nan})
		nulls.y = append(nulls.y, nan)
		constant.x = append(constant.x, []float64{0.5, 0.5, 0.5, 0.5})
		constant.y = append(constant.y, 0.25)
	}
	tables["huge"], tables["nulls"], tables["constant"] = huge, nulls, constant
	for _, p := range []struct{ eps, delta float64 }{{1e-4, 1e-12}, {0.01, 0}, {1, 1e-5}, {1e4, 0.5}, {1e4, 0}, {200, 0}} {
		for name, ds := range tables {
			tr := mustPlan(t, synthConfig(d, len(ds.x), p.eps, p.delta))
			m, err := tr.Train(ds.x, ds.y)
			if err != nil {
				t.Fatalf("ε=%v δ=%v %s: %v", p.eps, p.delta, name, err)
			}
			if m.Kind != mechanism.KindLinReg || len(m.Weights) != 1 || len(m.Weights[0]) != d+1 || !finite(m.Weights[0]) {
				t.Fatalf("ε=%v δ=%v %s: model %+v", p.eps, p.delta, name, m)
			}
			pr, err := m.Predict([]float64{0, 0, 0, 0})
			if err != nil || math.IsNaN(pr.Value) || pr.Value < -1 || pr.Value > 1 {
				t.Fatalf("prediction %+v, %v", pr, err)
			}
		}
	}
	// n = 1.
	one := dataset{x: [][]float64{{1, 1, 1, 1}}, y: []float64{1}}
	for _, delta := range []float64{0, 1e-6} {
		tr := mustPlan(t, synthConfig(d, 1, 1, delta))
		if m, err := tr.Train(one.x, one.y); err != nil || !finite(m.Weights[0]) {
			t.Fatalf("n = 1: %v", err)
		}
	}
}

// TestShapeErrors: the only errors of Train are the caller's shape
// mistakes, and a scan with another row count is reported as such.
func TestShapeErrors(t *testing.T) {
	tr := mustPlan(t, synthConfig(2, 3, 1, 0))
	if _, err := tr.Train([][]float64{{0, 0}, {0, 0}}, []float64{0, 0}); err == nil {
		t.Fatal("accepted 2 rows for n = 3")
	}
	if _, err := tr.Train([][]float64{{0}, {0, 0}, {0, 0}}, []float64{0, 0, 0}); err == nil {
		t.Fatal("accepted a short row")
	}
	scan := func(emit func([]float64) error) error {
		for i := 0; i < 4; i++ {
			if err := emit([]float64{0.1, 0.2, 0.3}); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := tr.TrainStream(scan); !errors.Is(err, ErrRowCountChanged) {
		t.Fatalf("row count change: %v", err)
	}
}

// TestStreamMatchesMemory: the streaming pass computes the same statistics
// as the in-memory pass (up to summation order).
func TestStreamMatchesMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const d, n = 5, 3000
	ds := synthLinear(rng, synthBeta(rng, d), n, 0.1)
	tr := mustPlan(t, synthConfig(d, n, 1, 1e-6))
	mem := tr.stats(ds.x, ds.y)
	st, err := streamStats(d, tr.prep, -1, 1, tr.workers, func(emit func([]float64) error) error {
		row := make([]float64, d+1)
		for i := range ds.x {
			copy(row, ds.x[i])
			row[d] = ds.y[i]
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || st.n != n {
		t.Fatalf("stream: %v, n = %d", err, st.n)
	}
	for i := range mem.a {
		if math.Abs(mem.a[i]-st.a[i]) > 1e-9 {
			t.Fatalf("A[%d]: %v vs %v", i, mem.a[i], st.a[i])
		}
	}
	for i := range mem.c {
		if math.Abs(mem.c[i]-st.c[i]) > 1e-9 {
			t.Fatalf("c[%d]: %v vs %v", i, mem.c[i], st.c[i])
		}
	}
	if _, err := tr.TrainStream(func(emit func([]float64) error) error {
		row := make([]float64, d+1)
		for i := range ds.x {
			copy(row, ds.x[i])
			row[d] = ds.y[i]
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestStatsExact: the pass computes Σxxᵀ and Σy′x of the scaled rows.
func TestStatsExact(t *testing.T) {
	cfg := diabetesConfig(2, 1, 0)
	tr := mustPlan(t, cfg)
	X := [][]float64{{50, 1.5, 30, 90, 200, 160, 60, 5.5, 5, 90}, {0, 1, 10, 40, 50, 20, 10, 1, 3, 40}}
	y := []float64{346, math.NaN()}
	st := tr.stats(X, y)
	var a [11 * 11]float64
	var c [11]float64
	for i, row := range X {
		x := tr.scaler.Transform(nil, row)
		yu := labelUnit(y[i], cfg.LabelLo, cfg.LabelHi)
		for j := range x {
			for k := range x {
				a[j*11+k] += x[j] * x[k]
			}
			c[j] += yu * x[j]
		}
	}
	for i := range a {
		if math.Abs(a[i]-st.a[i]) > 1e-15 {
			t.Fatalf("A[%d] = %v, want %v", i, st.a[i], a[i])
		}
	}
	for i := range c {
		if math.Abs(c[i]-st.c[i]) > 1e-15 {
			t.Fatalf("c[%d] = %v, want %v", i, st.c[i], c[i])
		}
	}
	if labelUnit(346, 25, 346) != 1 || labelUnit(math.NaN(), 25, 346) != 0 || labelUnit(-1e9, 25, 346) != -1 {
		t.Fatal("label map")
	}
	if tr.interceptEntry() != st.a[len(st.a)-1] {
		t.Fatalf("public intercept entry %v, computed %v", tr.interceptEntry(), st.a[len(st.a)-1])
	}
}

// TestPackRoundTrip: unpackA inverts packA and puts the public intercept
// entry back.
func TestPackRoundTrip(t *testing.T) {
	const f = 4
	a := make([]float64, f*f)
	for j := 0; j < f; j++ {
		for k := 0; k <= j; k++ {
			a[j*f+k] = float64(1 + j*f + k)
			a[k*f+j] = a[j*f+k]
		}
	}
	for _, scaled := range []bool{true, false} {
		v := packA(a, f, scaled)
		if len(v) != f*(f+1)/2-1 {
			t.Fatalf("packed length %d", len(v))
		}
		m := unpackA(v, f, scaled, 99)
		for j := 0; j < f; j++ {
			for k := 0; k < f; k++ {
				want := a[j*f+k]
				if j == f-1 && k == f-1 {
					want = 99
				}
				if math.Abs(m.At(j, k)-want) > 1e-12*want {
					t.Fatalf("scaled=%v (%d,%d): %v, want %v", scaled, j, k, m.At(j, k), want)
				}
			}
		}
	}
}

// TestSolveFloor: eigenvalues below the floor are raised to it.
func TestSolveFloor(t *testing.T) {
	m := unpackA([]float64{-3, 0}, 2, false, 4) // diag(−3, 4)
	theta := solveFloor(m, []float64{2, 8}, 0.5)
	if !near(theta[0], 4, 1e-12) || !near(theta[1], 2, 1e-12) {
		t.Fatalf("θ = %v, want (4, 2)", theta)
	}
}

// TestUtility: at n = 20 000, d = 5, ε = 1, δ = 10⁻⁵ the private model's
// test RMSE is within 10% of least squares (measured ≈ 1–2%; the margin
// keeps the test from failing by chance), and far better than the mean.
func TestUtility(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const d, n = 5, 20000
	beta := synthBeta(rng, d)
	train, test := synthLinear(rng, beta, n, 0.1), synthLinear(rng, beta, 5000, 0.1)
	for _, delta := range []float64{1e-5, 0} {
		tr := mustPlan(t, synthConfig(d, n, 1, delta))
		w, err := tr.fitExact(train.x, train.y, 0)
		if err != nil {
			t.Fatal(err)
		}
		ols := &mechanism.Model{Kind: mechanism.KindLinReg, Features: tr.cfg.Features, LabelLo: -1, LabelHi: 1, Scaler: tr.scaler, Weights: [][]float64{w}}
		m, err := tr.Train(train.x, train.y)
		if err != nil {
			t.Fatal(err)
		}
		pred := func(m *mechanism.Model) func([]float64) float64 {
			return func(x []float64) float64 {
				p, _ := m.Predict(x)
				return p.Value
			}
		}
		base, got := rmse(test, pred(ols)), rmse(test, pred(m))
		mu := mean(train.y)
		meanPred := rmse(test, func([]float64) float64 { return mu })
		t.Logf("δ=%g: OLS %.4f, linreg %.4f, mean %.4f (λ = %.3g)", delta, base, got, meanPred, m.Params["lambda"])
		limit := 1.1
		if delta == 0 {
			limit = 1.5 // Laplace with ℓ₁ sensitivities is much noisier
		}
		if got > limit*base || got > 0.7*meanPred {
			t.Fatalf("δ=%g: private RMSE %.4f vs OLS %.4f and mean %.4f", delta, got, base, meanPred)
		}
	}
}
