package svm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/mechanism"
)

// primal returns P(w) = ½‖w‖² + c·Σ ℓ(yᵢ⟨w, φᵢ⟩) on the cached features,
// accumulated exactly (big.Float) from float64 terms.
func primal(fc *featureCache, y []float64, l loss, c float64, w []float64) float64 {
	var reg float64
	for _, v := range w {
		reg += v * v
	}
	sum := new(big.Float).SetPrec(256)
	for i := 0; i < fc.n; i++ {
		sum.Add(sum, new(big.Float).SetFloat64(l.value(y[i]*dot(w, fc.row(i)))))
	}
	s, _ := sum.Float64()
	return reg/2 + c*s
}

// conj returns ψ(a) = ℓ*(−a) from its textbook definition, for the exact
// duality-gap check.
func conj(l loss, a float64) float64 {
	switch l := l.(type) {
	case hinge:
		return -a
	case huber:
		return -a - l.h*a*(1-a)
	case logistic:
		var s float64
		if a > 0 {
			s += a * math.Log(a)
		}
		if a < 1 {
			s += (1 - a) * math.Log(1-a)
		}
		return s
	}
	panic("unknown loss")
}

// labels returns ±1 labels for binary class indices (1 ↦ +1).
func labels(y []int) []float64 {
	out := make([]float64, len(y))
	for i, c := range y {
		out[i] = float64(2*c - 1)
	}
	return out
}

func testAccuracy(t *testing.T, tr *Trainer, ws [][]float64, d dataset) float64 {
	t.Helper()
	m := tr.model(ws)
	ok := 0
	for i, x := range d.x {
		p, err := m.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		if p.Class == tr.cfg.Classes[d.y[i]] {
			ok++
		}
	}
	return float64(ok) / float64(len(d.x))
}

// sklearnAccuracy holds the test accuracies printed by
// docs/results/svm_sklearn_reference.py (Debian python3-sklearn 1.2.1,
// LinearSVC with loss="hinge", fit_intercept=False, C/n, tol=1e-12) on the
// fixed 80/20 split of breast_cancer.csv, recorded when the script was
// written: 91/114 and 106/114 test rows correct.
var sklearnAccuracy = map[float64]float64{100: 0.7982456140350878, 1000: 0.9298245614035088}

// liveAccuracy holds the accuracies of the live run, when there is one.
var liveAccuracy = map[float64]float64{}

// sklearnReference runs the reference script live when Debian's python3 with
// sklearn is present; it returns nil (and says so) when it is not.
func sklearnReference(t *testing.T, cs ...float64) map[float64][]float64 {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import sklearn, numpy").Run(); err != nil {
		t.Logf("live sklearn comparison not run (%s with sklearn unavailable: %v); recorded figures still checked", py, err)
		return nil
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	args := []string{filepath.Join(root, "docs", "results", "svm_sklearn_reference.py"), filepath.Join(root, "testdata", "breast_cancer.csv")}
	for _, c := range cs {
		args = append(args, fmt.Sprint(c))
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(py, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("reference script failed: %v\n%s", err, stderr.String())
	}
	out := make(map[float64][]float64)
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var r struct {
			C        float64
			N        int
			Accuracy float64
			W        []float64
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("reference output %q: %v", line, err)
		}
		t.Logf("live sklearn accuracy for C = %v: %.4f (recorded %.4f)", r.C, r.Accuracy, sklearnAccuracy[r.C])
		out[r.C] = r.W
		liveAccuracy[r.C] = r.Accuracy
	}
	return out
}

// TestSolverMatchesSklearn compares the noise-free linear hinge SVM on the
// breast-cancer table with LIBLINEAR (through sklearn): test accuracy within
// one point of the recorded reference, and, when python is present, the
// weight vectors within the distance that strong convexity allows:
// ‖w − w_sk‖ ≤ √(2(P(w_sk) − P(w) + gap)) + √(2·gap).
func TestSolverMatchesSklearn(t *testing.T) {
	train, test := split(loadCSV(t, "breast_cancer.csv"))
	live := sklearnReference(t, 100, 1000)
	for _, c := range []float64{100, 1000} {
		cfg := breastCancerConfig(train, len(train.x))
		cfg.C = c
		tr := mustPlan(t, cfg)
		ws, sols, err := tr.fit(train.x, train.y)
		if err != nil {
			t.Fatal(err)
		}
		acc := testAccuracy(t, tr, ws, test)
		t.Logf("C = %v: accuracy %.4f (sklearn %.4f), certified gap %.3g ≤ τ = %.3g after %d epochs", c, acc, sklearnAccuracy[c], sols[0].gap, tr.tau, sols[0].epochs)
		if math.Abs(acc-sklearnAccuracy[c]) > 0.01 {
			t.Errorf("C = %v: accuracy %.4f differs from sklearn's %.4f by more than one point", c, acc, sklearnAccuracy[c])
		}
		wsk, ok := live[c]
		if !ok {
			continue
		}
		if math.Abs(acc-liveAccuracy[c]) > 0.01 {
			t.Errorf("C = %v: accuracy %.4f differs from live sklearn's %.4f by more than one point", c, acc, liveAccuracy[c])
		}
		fc := buildCache(train.x, tr.scaler, nil)
		y := labels(train.y)
		cn := c / float64(len(y))
		pGo, pSk := primal(fc, y, hinge{}, cn, ws[0]), primal(fc, y, hinge{}, cn, wsk)
		gap := sols[0].gap
		slack := 1e-12 * c // rounding of the two objective values
		allowed := math.Sqrt(2*math.Max(0, pSk-pGo+gap+slack)) + math.Sqrt(2*gap)
		dist := l2dist(ws[0], wsk)
		t.Logf("C = %v: P(w) = %.12g, P(w_sklearn) = %.12g, ‖w − w_sklearn‖ = %.3g (allowed %.3g)", c, pGo, pSk, dist, allowed)
		if pGo > pSk+gap+slack {
			t.Errorf("C = %v: P(w) = %v exceeds P(w_sklearn) + gap = %v", c, pGo, pSk+gap)
		}
		if dist > allowed {
			t.Errorf("C = %v: ‖w − w_sklearn‖ = %v exceeds %v", c, dist, allowed)
		}
	}
}

// referenceAGD minimises the smooth, 1-strongly convex primal with
// Nesterov's accelerated gradient method: an independent solver for the
// logistic and Huber losses. It returns w and ‖∇P(w)‖ ≥ ‖w − w*‖.
func referenceAGD(fc *featureCache, y []float64, l loss, c float64) ([]float64, float64) {
	var beta float64 // Lipschitz constant of ℓ′
	switch l := l.(type) {
	case logistic:
		beta = 0.25
	case huber:
		beta = 1 / (2 * l.h)
	}
	var sq float64
	for _, q := range fc.q {
		sq += q
	}
	lip := 1 + c*beta*sq
	kappa := 1 / lip
	mom := (1 - math.Sqrt(kappa)) / (1 + math.Sqrt(kappa))
	grad := func(w []float64) []float64 {
		g := append([]float64(nil), w...)
		for i := 0; i < fc.n; i++ {
			x := fc.row(i)
			m := y[i] * dot(w, x)
			var d float64
			switch l := l.(type) {
			case logistic:
				d = -sigmoid(-m)
			case huber:
				switch {
				case m >= 1+l.h:
				case m <= 1-l.h:
					d = -1
				default:
					d = -(1 + l.h - m) / (2 * l.h)
				}
			}
			axpy(c*d*y[i], x, g)
		}
		return g
	}
	w := make([]float64, fc.f)
	v := make([]float64, fc.f)
	for it := 0; it < 3000; it++ {
		g := grad(v)
		next := make([]float64, fc.f)
		for j := range next {
			next[j] = v[j] - g[j]/lip
		}
		for j := range v {
			v[j] = next[j] + mom*(next[j]-w[j])
		}
		w = next
	}
	var gn float64
	for _, v := range grad(w) {
		gn += v * v
	}
	return w, math.Sqrt(gn)
}

// TestSolverMatchesPrimalReference checks the dual coordinate descent for
// the smooth losses against an independent primal solver: the distance to
// the reference must be within √(2·gap) + ‖∇P(w_ref)‖, the guarantee the
// privacy proof relies on (‖w − w*‖ ≤ √(2τ)).
func TestSolverMatchesPrimalReference(t *testing.T) {
	train, _ := split(loadCSV(t, "breast_cancer.csv"))
	for _, kernel := range []string{KernelLinear, KernelRBF} {
		for _, loss := range []string{LossLogistic, LossHuber} {
			for _, c := range []float64{10, 1000} {
				cfg := breastCancerConfig(train, len(train.x))
				cfg.Kernel, cfg.Loss, cfg.C = kernel, loss, c
				if kernel == KernelRBF {
					cfg.Dim = 32
				}
				tr := mustPlan(t, cfg)
				ws, sols, err := tr.fit(train.x, train.y)
				if err != nil {
					t.Fatal(err)
				}
				fc := buildCache(train.x, tr.scaler, tr.rff)
				y := labels(train.y)
				cn := c / float64(len(y))
				wref, gn := referenceAGD(fc, y, tr.loss, cn)
				dist := l2dist(ws[0], wref)
				allowed := math.Sqrt(2*sols[0].gap) + gn + 1e-12
				pw, pr := primal(fc, y, tr.loss, cn, ws[0]), primal(fc, y, tr.loss, cn, wref)
				t.Logf("%s/%s C=%v: ‖w − w_ref‖ = %.3g ≤ %.3g; P(w) − P(w_ref) = %.3g ≤ gap %.3g; ‖∇P(w_ref)‖ = %.2g", kernel, loss, c, dist, allowed, pw-pr, sols[0].gap, gn)
				if dist > allowed {
					t.Errorf("%s/%s C=%v: ‖w − w_ref‖ = %v exceeds √(2·gap) + ‖∇P(w_ref)‖ = %v", kernel, loss, c, dist, allowed)
				}
				if pw-pr > sols[0].gap+1e-12*c {
					t.Errorf("%s/%s C=%v: P(w) − P(w_ref) = %v exceeds the certified gap %v", kernel, loss, c, pw-pr, sols[0].gap)
				}
			}
		}
	}
}

// TestCertificate recomputes P(ŵ) − D(a) from the textbook definitions of
// the primal and the dual (exact accumulation) and checks that the solver's
// certified gap bounds it and is at most τ.
func TestCertificate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, loss := range []string{LossHinge, LossLogistic, LossHuber} {
		for _, c := range []float64{1, 50, 5000} {
			n := 60
			cfg := cfgD(4, n, 1, KernelLinear)
			cfg.C, cfg.Loss = c, loss
			tr := mustPlan(t, cfg)
			X := make([][]float64, n)
			yi := make([]int, n)
			for i := range X {
				X[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.Float64(), 2*rng.Float64() - 1}
				if X[i][0]-X[i][1]+0.5*rng.NormFloat64() > 0 {
					yi[i] = 1
				}
			}
			fc := buildCache(X, tr.scaler, nil)
			y := labels(yi)
			cn := c / float64(n)
			p := &problem{fc: fc, y: y, loss: tr.loss, c: cn, tau: tr.tau, log: testLog()}
			sol, err := p.solve()
			if err != nil {
				t.Fatal(err)
			}
			// D(a) = −½‖w(a)‖² − c·Σψ(aᵢ), w(a) = c·Σ aᵢyᵢφᵢ, exactly.
			wa := make([]*big.Float, fc.f)
			for j := range wa {
				wa[j] = new(big.Float).SetPrec(512)
			}
			psi := new(big.Float).SetPrec(512)
			for i := 0; i < n; i++ {
				for j, v := range fc.row(i) {
					term := new(big.Float).SetPrec(512).SetFloat64(sol.dual[i] * y[i])
					term.Mul(term, new(big.Float).SetFloat64(float64(v)))
					wa[j].Add(wa[j], term)
				}
				psi.Add(psi, new(big.Float).SetFloat64(conj(tr.loss, sol.dual[i])))
			}
			norm := new(big.Float).SetPrec(512)
			for j := range wa {
				wa[j].Mul(wa[j], new(big.Float).SetFloat64(cn))
				norm.Add(norm, new(big.Float).Mul(wa[j], wa[j]))
			}
			dual := new(big.Float).Mul(norm, big.NewFloat(-0.5))
			dual.Sub(dual, psi.Mul(psi, new(big.Float).SetFloat64(cn)))
			dv, _ := dual.Float64()
			pv := primal(fc, y, tr.loss, cn, sol.w)
			trueGap := pv - dv
			t.Logf("%s C=%v: P(ŵ) − D(a) = %.4g, certified %.4g, τ = %.4g", loss, c, trueGap, sol.gap, tr.tau)
			// P(ŵ) and ψ are evaluated in float64: allow their rounding.
			if trueGap > sol.gap+8*u*(math.Abs(pv)+math.Abs(dv)) || sol.gap > tr.tau || trueGap < -8*u*(math.Abs(pv)+math.Abs(dv)) {
				t.Errorf("%s C=%v: true gap %v, certified %v, τ %v", loss, c, trueGap, sol.gap, tr.tau)
			}
		}
	}
	// At a = 0 (w = 0) the hinge gap is P(0) − D(0) = c·n = C exactly.
	fc := buildCache([][]float64{{0.5}, {-0.5}, {0.1}, {0.9}}, mechanism.Scaler{Lo: []float64{-1}, Hi: []float64{1}, Intercept: true}, nil)
	p := &problem{fc: fc, y: []float64{1, -1, 1, 1}, loss: hinge{}, c: 0.25}
	if _, gap := p.certify(make([]float64, 4)); math.Abs(gap-1) > 1e-14 {
		t.Fatalf("hinge gap at a = 0: %v, want C = 1", gap)
	}
}

// TestNotConverged checks that a solve that runs out of passes fails with
// the fixed, data-free error and releases nothing.
func TestNotConverged(t *testing.T) {
	train, _ := split(loadCSV(t, "breast_cancer.csv"))
	cfg := breastCancerConfig(train, len(train.x))
	cfg.C = 1e6
	tr := mustPlan(t, cfg)
	tr.maxEpochs = 2
	m, err := tr.Train(train.x, train.y)
	if !errors.Is(err, errNotConverged) || m != nil {
		t.Fatalf("Train with 2 passes: %v, %v; want errNotConverged", m, err)
	}
	if err.Error() != errNotConverged.Error() {
		t.Fatalf("error %q carries more than the fixed message", err)
	}
}

// TestFeatureCacheNorm checks κ ≤ 1 on the float32 features that are
// actually solved over: corners of the public box (‖x‖ = 1 before
// rounding) and random-feature rows (‖φ̂‖ = 1 before rounding).
func TestFeatureCacheNorm(t *testing.T) {
	d := 7
	var X [][]float64
	for mask := 0; mask < 1<<d; mask++ {
		x := make([]float64, d)
		for j := range x {
			x[j] = -3 // beyond the bound: clipped to −1
			if mask&(1<<j) != 0 {
				x[j] = 3
			}
		}
		X = append(X, x)
	}
	X = append(X, []float64{math.NaN(), 0, 0, 0, 0, 0, math.Inf(1)})
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range lo {
		lo[j], hi[j] = -1, 1
	}
	for _, kernel := range []string{KernelLinear, KernelRBF, KernelLaplacian, KernelCauchy} {
		cfg := cfgD(d, len(X), 1, kernel)
		tr := mustPlan(t, cfg)
		fc := buildCache(X, tr.scaler, tr.rff)
		maxQ := 0.0
		for i := 0; i < fc.n; i++ {
			var q float64
			for _, v := range fc.row(i) {
				q += float64(v) * float64(v)
			}
			if q != fc.q[i] {
				t.Fatalf("%s: cached ‖φ‖² %v, recomputed %v", kernel, fc.q[i], q)
			}
			maxQ = math.Max(maxQ, q)
		}
		if maxQ > 1 || maxQ < 0.9999 && kernel != KernelLinear {
			t.Fatalf("%s: max ‖φ‖² = %v", kernel, maxQ)
		}
		if kernel == KernelLinear && maxQ < 0.9999 {
			t.Fatalf("linear corners should reach ‖x‖ ≈ 1, got %v", maxQ)
		}
	}
}

// TestLossConjugates checks each loss's coordinate step against a brute
// force maximisation of the one-dimensional dual, and its gap term against
// ℓ(m) + ψ(a) + a·m, on a grid.
func TestLossConjugates(t *testing.T) {
	for _, l := range []loss{hinge{}, logistic{}, huber{h: 0.5}, huber{h: 0.05}} {
		for _, m := range []float64{-3, -0.2, 0.5, 0.97, 1, 1.02, 1.4, 4} {
			for _, a := range []float64{0, 0.01, 0.3, 0.5, 0.99, 1} {
				if _, ok := l.(logistic); ok && (a == 0 || a == 1) {
					continue
				}
				g, _ := l.gapTerm(m, a, 0)
				want := l.value(m) + conj(l, a) + a*m
				if math.Abs(g-want) > 1e-12*(1+math.Abs(want)) || g < 0 {
					t.Errorf("%T m=%v a=%v: gap term %v, definition %v", l, m, a, g, want)
				}
				// Coordinate step: maximise −½q·c²(a′−a)² − c·m(a′−a) − c·ψ(a′)
				// over a grid and compare objective values.
				q, c := 0.7, 0.3
				obj := func(b float64) float64 { return -0.5*q*c*c*(b-a)*(b-a) - c*m*(b-a) - c*conj(l, b) }
				got := obj(l.step(a, m, q, c))
				best := math.Inf(-1)
				for k := 1; k < 100000; k++ {
					best = math.Max(best, obj(float64(k)/100000))
				}
				if _, ok := l.(logistic); !ok {
					best = math.Max(best, math.Max(obj(0), obj(1)))
				}
				if got < best-1e-9 {
					t.Errorf("%T m=%v a=%v: step reaches %v, grid %v", l, m, a, got, best)
				}
			}
		}
	}
}

func testLog() *logrus.Entry { return logrus.NewEntry(logrus.StandardLogger()) }

// TestMain keeps the per-training log lines out of test output unless
// SVM_TEST_DEBUG is set.
func TestMain(m *testing.M) {
	if os.Getenv("SVM_TEST_DEBUG") == "" {
		logrus.SetLevel(logrus.WarnLevel)
	} else {
		logrus.SetLevel(logrus.DebugLevel)
	}
	os.Exit(m.Run())
}
