package logreg

import (
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

func testAccuracy(t testing.TB, m *mechanism.Model, ds dataset) float64 {
	ok := 0
	for i, x := range ds.x {
		p, err := m.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		if p.Class == ds.classes[ds.y[i]] {
			ok++
		}
	}
	return float64(ok) / float64(len(ds.x))
}

// TestOutcomeIndependentOfRows: over extreme hyperparameters (one step and
// many, tiny and huge horizons, tiny and huge ε, pure and approximate DP)
// and on neighbouring tables (a corner row, a NULL row, values far outside
// the bounds, a single class), Train always returns a finite model, never
// an error, and releases exactly T noisy gradients — the same outcome and
// iteration count whatever the rows.
func TestOutcomeIndependentOfRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d, n = 3, 40
	nan := math.NaN()
	base := synthMixture(rng, 1, n, 3, d, 1)
	tables := map[string][2]any{"base": {base.x, base.y}}
	repl := func(row []float64, label int) ([][]float64, []int) {
		X := append([][]float64{row}, base.x[1:]...)
		y := append([]int{label}, base.y[1:]...)
		return X, y
	}
	for name, r := range map[string][]float64{"corner": {2, -2, 2}, "null": {nan, nan, nan}, "huge": {math.Inf(1), -1e300, 1e300}} {
		X, y := repl(r, 2)
		tables[name] = [2]any{X, y}
	}
	same := make([]int, n)
	tables["one-class"] = [2]any{base.x, same}
	for _, p := range []struct {
		eps, delta, horizon float64
		steps               int
	}{{1, 1e-6, 0, 0}, {1e-3, 1e-9, 0, 1}, {1e3, 0.5, 0, 0}, {1, 1e-5, 1e-9, 5}, {1, 1e-5, 1e6, 50}, {1, 0, 0, 0}, {50, 0, 1e5, 3}, {0.01, 0, 0, 0}} {
		for _, k := range []int{2, 3} {
			for name, tb := range tables {
				X, y := tb[0].([][]float64), tb[1].([]int)
				if k == 2 {
					y = append([]int(nil), y...)
					for i := range y {
						y[i] %= 2
					}
				}
				cfg := testConfig(d, k, n, p.eps, p.delta)
				cfg.Lo, cfg.Hi = base.lo, base.hi
				cfg.Steps, cfg.Horizon = p.steps, p.horizon
				if p.delta > 0 && p.steps%5 == 0 { // steps 0, 5, 50: also the accelerated path
					cfg.StepRule = StepNesterov
				}
				if p.delta > 0 && p.steps <= 1 { // steps 0, 1: the preconditioned path (one XᵀX release first)
					cfg.StepRule = StepPreconditioned
				}
				tr := mustPlan(t, cfg)
				calls, grams := 0, 0
				tr.trace = func(_, _ []float64) { calls++ }
				tr.traceGram = func(_, _ []float64) {
					if calls != 0 {
						t.Fatal("XᵀX released after a gradient")
					}
					grams++
				}
				m, err := tr.Train(X, y)
				if err != nil {
					t.Fatalf("%+v K=%d %s: %v", p, k, name, err)
				}
				if calls != tr.p.steps || grams != int(b2f(cfg.StepRule == StepPreconditioned)) {
					t.Fatalf("%+v K=%d %s: %d releases and %d XᵀX releases, want T = %d", p, k, name, calls, grams, tr.p.steps)
				}
				wantVecs := k
				if k == 2 {
					wantVecs = 1
				}
				if m.Kind != mechanism.KindLogReg || len(m.Weights) != wantVecs {
					t.Fatalf("model %+v", m)
				}
				for _, w := range m.Weights {
					if len(w) != d+1 || !finite(w) {
						t.Fatalf("%+v K=%d %s: weights %v", p, k, name, w)
					}
				}
				if _, err := m.Predict([]float64{0, 0, 0}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestInputShapeErrors: the only Train errors are caller shape mistakes.
func TestInputShapeErrors(t *testing.T) {
	tr := mustPlan(t, testConfig(2, 3, 2, 1, 1e-6))
	for _, c := range []struct {
		X [][]float64
		y []int
	}{
		{[][]float64{{0, 0}}, []int{0}},
		{[][]float64{{0, 0}, {0}}, []int{0, 1}},
		{[][]float64{{0, 0}, {0, 0}}, []int{0, 3}},
		{[][]float64{{0, 0}, {0, 0}}, []int{-1, 0}},
	} {
		if _, err := tr.Train(c.X, c.y); err == nil {
			t.Fatalf("accepted %v %v", c.X, c.y)
		}
	}
}

// TestResidual: σ(s) − y and softmax(s) − e_y, stable for huge scores.
func TestResidual(t *testing.T) {
	s := []float64{0}
	residual(s, 1, true)
	if s[0] != -0.5 {
		t.Fatalf("binary residual %v", s[0])
	}
	s = []float64{1000, -1000, 0}
	residual(s, 1, false)
	if s[0] != 1 || s[1] != -1 || s[2] != 0 {
		t.Fatalf("softmax residual %v", s)
	}
	s = []float64{math.Log(1), math.Log(3)}
	residual(s, 0, false)
	if !near(s[0], -0.75, 1e-15) || !near(s[1], 0.75, 1e-15) {
		t.Fatalf("softmax residual %v", s)
	}
}

// TestGradientMatchesDefinition: the blocked gradient sum equals the
// direct Σᵢ sᵢ(softmax(Θxᵢ) − e_{yᵢ}) ⊗ xᵢ with the clipping factor
// sᵢ = min(1, C/(‖rᵢ‖‖xᵢ‖)), across several blocks.
func TestGradientMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const d, k = 4, 3
	n := 2*chunkRows + 17
	ds := synthMixture(rng, 2, n, k, d, 1)
	tr := mustPlan(t, ds.config(n, 1, 1e-6))
	theta := make([]float64, k*(d+1))
	for j := range theta {
		theta[j] = rng.NormFloat64()
	}
	got := gradOf(tr, ds.x, ds.y, theta)
	want := make([]float64, len(theta))
	for i, row := range ds.x {
		x := tr.scaler.Transform(nil, row)
		s := make([]float64, k)
		for c := 0; c < k; c++ {
			for j, v := range x {
				s[c] += theta[c*(d+1)+j] * v
			}
		}
		residual(s, ds.y[i], false)
		var rn, xn float64
		for c := range s {
			rn += s[c] * s[c]
		}
		for _, v := range x {
			xn += v * v
		}
		if g := math.Sqrt(rn * xn); g > tr.p.clip {
			for c := range s {
				s[c] *= tr.p.clip / g
			}
		}
		for c := 0; c < k; c++ {
			for j, v := range x {
				want[c*(d+1)+j] += s[c] * v
			}
		}
	}
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-9*float64(n) {
			t.Fatalf("G[%d] = %v, want %v", j, got[j], want[j])
		}
	}
}

// TestUtility: on a separable-enough mixture (K = 3, d = 5, n = 6000) the
// private model at ε = 1, δ = 10⁻⁵ is within 10 points of the same descent
// without noise (measured gap ≈ 1–3 points).
func TestUtility(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 6000
	train := synthMixture(rng, 11, n, 3, 5, 1.5)
	test := synthMixture(rng, 11, 3000, 3, 5, 1.5)
	tr := mustPlan(t, train.config(n, 1, 1e-5))
	m, err := tr.Train(train.x, train.y)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tr.fit(train.x, train.y, tr.p.steps, tr.p.eta)
	if err != nil {
		t.Fatal(err)
	}
	priv, ref := testAccuracy(t, m, test), testAccuracy(t, tr.model(w), test)
	t.Logf("private %.3f, noiseless %.3f", priv, ref)
	if priv < ref-0.10 || ref < 0.8 {
		t.Fatalf("private %.3f vs noiseless %.3f", priv, ref)
	}
}

// TestWithBoundsMatchesPlan: re-planning on a released box through
// WithBounds gives exactly what Plan gives on those bounds (every public
// parameter, the configuration, the scaled rows), for the plain rule, the
// preconditioned rule (binary, n = 3·10⁵: its σ_H, ridge and T too), the
// Nesterov rule (K = 4) and pure ε; wrong widths and empty boxes are
// refused.
func TestWithBoundsMatchesPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 57))
	for _, c := range []struct {
		n, k  int
		delta float64
	}{{2000, 2, 1e-6}, {300000, 2, 1e-6}, {2000, 4, 1e-6}, {300000, 4, 1e-6}, {2000, 2, 0}} {
		ds := synthMixture(rng, 3, min(c.n, 500), c.k, 5, 1)
		cfg := ds.config(c.n, 1, c.delta)
		tr, err := Plan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := []float64{-0.5, -2, 0, -1, -3}, []float64{0.5, 1, 0.25, 3, -1}
		got, err := tr.WithBounds(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Lo, cfg.Hi = lo, hi
		want, err := Plan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		gp, wp := got.Params(), want.Params()
		if len(gp) != len(wp) {
			t.Fatalf("%+v: params %v, Plan gives %v", c, gp, wp)
		}
		for k, v := range wp {
			if gp[k] != v {
				t.Fatalf("%+v: param %s = %v, Plan gives %v", c, k, gp[k], v)
			}
		}
		gc, wc := got.Config(), want.Config()
		if gc.Steps != wc.Steps || gc.Horizon != wc.Horizon || gc.Clip != wc.Clip || gc.StepRule != wc.StepRule || gc.N != wc.N {
			t.Fatalf("%+v: config %+v, Plan gives %+v", c, gc, wc)
		}
		for j := range lo {
			if gc.Lo[j] != lo[j] || gc.Hi[j] != hi[j] || tr.Config().Lo[j] != ds.config(c.n, 1, c.delta).Lo[j] {
				t.Fatalf("%+v: bounds %v %v (original plan now %v)", c, gc.Lo, gc.Hi, tr.Config().Lo)
			}
		}
		buf1, buf2 := make([]float64, 6), make([]float64, 6)
		for _, x := range ds.x {
			a, b := got.prep.Transform(buf1, x), want.prep.Transform(buf2, x)
			for j := range a {
				if a[j] != b[j] {
					t.Fatalf("%+v: row %v scales to %v, Plan's scaler %v", c, x, a, b)
				}
			}
		}
	}
	tr, err := Plan(synthMixture(rng, 3, 100, 2, 2, 1).config(100, 1, 1e-6))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.WithBounds([]float64{0}, []float64{1}); err == nil {
		t.Fatal("WithBounds accepted one bound for two features")
	}
	if _, err := tr.WithBounds([]float64{0, 1}, []float64{1, 1}); err == nil {
		t.Fatal("WithBounds accepted an empty interval")
	}
}

// TestTrainCountedMatchesCorrect: the prior selection's score counted on
// the scaled copy (problem.correct) equals mechanism.Correct on the
// released model (the raw rows through the model's Scaler) — the two maps
// round differently, but no random row lies within rounding of a tie — for
// binary and multinomial labels, at small and large ε, on fresh and on
// pooled (reused, zeroed) buffers; the objective method answers counted =
// false.
func TestTrainCountedMatchesCorrect(t *testing.T) {
	for _, tc := range []struct{ n, k, d int }{{20000, 2, 5}, {20000, 4, 3}, {9000, 2, 21}} {
		rng := rand.New(rand.NewPCG(uint64(tc.k), uint64(tc.d)))
		ds := synthMixture(rng, 5, tc.n, tc.k, tc.d, 1.5)
		for _, eps := range []float64{0.3, 10} {
			for rep := 0; rep < 2; rep++ {
				tr, err := Plan(ds.config(tc.n, eps, 1e-6))
				if err != nil {
					t.Fatal(err)
				}
				m, c, counted, err := tr.TrainCounted(ds.x, ds.y)
				if err != nil || !counted {
					t.Fatal(counted, err)
				}
				want, err := mechanism.Correct(m, ds.x, ds.y)
				if err != nil {
					t.Fatal(err)
				}
				if c != want || c < int64(tc.n/tc.k) {
					t.Errorf("n %d k %d d %d ε %g: counted %d, mechanism.Correct %d", tc.n, tc.k, tc.d, eps, c, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	ds := synthMixture(rng, 5, 2000, 2, 3, 1.5)
	cfg := ds.config(2000, 1, 0)
	cfg.Method = MethodObjective
	tr, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, counted, err := tr.TrainCounted(ds.x, ds.y); err != nil || counted {
		t.Errorf("objective: counted %v, err %v", counted, err)
	}
}

// TestCorrectSensitivity: the selection's count on the scaled copy
// (problem.correct) moves by at most 1 when one row is replaced by an
// adversarial one (corners, outside the bounds, NULLs, ±Inf, the other
// label), for fixed θ — the sensitivity prior.md §5 charges — binary and
// multinomial, including θ that puts rows on a tie.
func TestCorrectSensitivity(t *testing.T) {
	for _, k := range []int{2, 3} {
		rng := rand.New(rand.NewPCG(9, uint64(k)))
		ds := synthMixture(rng, 5, 3000, k, 3, 1.5)
		tr, err := Plan(ds.config(len(ds.x), 1, 1e-6))
		if err != nil {
			t.Fatal(err)
		}
		count := func(X [][]float64, y []int, theta []float64) int64 {
			p := newProblem(X, y, tr.prep, tr.kp, tr.binary, 2, tr.p.clip)
			defer p.free()
			return p.correct(theta)
		}
		nan, inf := math.NaN(), math.Inf(1)
		subs := [][]float64{{2, 2, 2}, {-2, -2, -2}, {1e300, -1e300, 0}, {nan, nan, nan}, {inf, -inf, nan}, {0, 0, 0}, {-0.0, 5e-324, -2}}
		for _, theta := range [][]float64{randTheta(rng, tr.kp*tr.f), make([]float64, tr.kp*tr.f)} {
			base := count(ds.x, ds.y, theta)
			for _, i := range []int{0, 1234, len(ds.x) - 1} {
				for _, sub := range subs {
					for lab := 0; lab < k; lab++ {
						X := append([][]float64(nil), ds.x...)
						y := append([]int(nil), ds.y...)
						X[i], y[i] = sub, lab
						if d := count(X, y, theta) - base; d < -1 || d > 1 {
							t.Fatalf("K=%d: replacing row %d by %v (label %d) moved the count by %d", k, i, sub, lab, d)
						}
					}
				}
			}
		}
	}
}

func randTheta(rng *rand.Rand, n int) []float64 {
	th := make([]float64, n)
	for j := range th {
		th[j] = rng.NormFloat64()
	}
	return th
}
