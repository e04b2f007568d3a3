package svm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// primal returns P(w) = ½‖w‖² + c·Σ ℓ(yᵢ⟨w, φᵢ⟩) on the cached features,
// accumulated exactly (big.Float) from float64 terms, and ‖∇P(w)‖.
func primal(fc *featureCache, y []float64, l loss, c float64, w []float64) (p, gradNorm float64) {
	var reg float64
	for _, v := range w {
		reg += v * v
	}
	sum := new(big.Float).SetPrec(256)
	grad := append([]float64(nil), w...)
	for i := 0; i < fc.n; i++ {
		m := y[i] * dot(w, fc.row(i))
		sum.Add(sum, new(big.Float).SetFloat64(l.value(m)))
		axpy(c*l.deriv(m)*y[i], fc.row(i), grad)
	}
	s, _ := sum.Float64()
	var g float64
	for _, v := range grad {
		g += v * v
	}
	return reg/2 + c*s, math.Sqrt(g)
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

// referenceObjective holds the minimum objective values found by
// docs/results/svm_sklearn_reference.py (Debian python3-sklearn 1.2.1 /
// scipy 1.10: LogisticRegression lbfgs and L-BFGS-B on the Huber primal)
// on the fixed 80/20 split of breast_cancer.csv, recorded when the script
// was written; the live run replaces them when python is present.
var referenceObjective = map[string]float64{
	"logistic/10": 6.553086309664936, "huber/10": 8.146889189805458,
	"logistic/100": 57.71019449559385, "huber/100": 60.714722117787865,
}

type reference struct {
	Loss      string
	C         float64
	N         int
	Objective float64
	Accuracy  float64
	W         []float64
}

// liveReference runs the reference script when Debian's python3 with
// sklearn and scipy is present; it returns nil (and says so) when not.
func liveReference(t *testing.T, cs ...float64) map[string]reference {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import sklearn, scipy, numpy").Run(); err != nil {
		t.Logf("live sklearn comparison not run (%s with sklearn unavailable: %v); recorded objectives still checked", py, err)
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
	out := make(map[string]reference)
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var r reference
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("reference output %q: %v", line, err)
		}
		out[fmt.Sprintf("%s/%v", r.Loss, r.C)] = r
	}
	return out
}

// TestSolverMatchesSklearn compares the noise-free solver (T steps of the
// public rule) on the breast-cancer table with independent solvers:
// sklearn's LogisticRegression for the logistic loss, scipy's L-BFGS-B for
// the Huber loss, at ε = 1000 (so that T is set by the score tolerance,
// not by the noise). Checks: the objective reaches the recorded (and, with
// python, the live) reference minimum within what the T rule promises —
// ‖w_T − w*‖ ≤ q^T·R, so P(w_T) − P* ≤ (β/2)·(q^T·R)² with β = 1 + C·β_ℓ —
// and the weights are within the distance strong convexity allows:
// ‖w − w_ref‖ ≤ ‖w − w*‖ + ‖w_ref − w*‖ ≤ q^T·R + √(2(P(w_ref) − P(w) + ½‖∇P(w)‖²)).
func TestSolverMatchesSklearn(t *testing.T) {
	train, test := split(loadCSV(t, "breast_cancer.csv"))
	live := liveReference(t, 10, 100)
	for _, loss := range []string{LossLogistic, LossHuber} {
		for _, c := range []float64{10, 100} {
			key := fmt.Sprintf("%s/%v", loss, c)
			cfg := breastCancerConfig(train, len(train.x))
			cfg.C, cfg.Loss, cfg.Epsilon = c, loss, 1000
			tr := mustPlan(t, cfg)
			ws, err := tr.fit(train.x, train.y)
			if err != nil {
				t.Fatal(err)
			}
			fc := buildCache(train.x, tr.scaler, nil)
			y := labels(train.y)
			cn := c / float64(len(y))
			p, g := primal(fc, y, tr.loss, cn, ws[0])
			r := math.Min(c, math.Sqrt(2*c*valueAtZero(tr.loss)))
			wErr := math.Pow(tr.q, float64(tr.iters)) * r
			pErr := (1 + c*tr.beta) / 2 * wErr * wErr
			t.Logf("%s: T = %d, P(w_T) = %.12g (recorded reference %.12g, promised within %.2g), ‖∇P‖ = %.2g, test accuracy %.4f",
				key, tr.iters, p, referenceObjective[key], pErr, g, testAccuracy(t, tr, ws, test))
			if p > referenceObjective[key]+pErr {
				t.Errorf("%s: P(w_T) = %v above the reference minimum %v + %v", key, p, referenceObjective[key], pErr)
			}
			ref, ok := live[key]
			if !ok {
				continue
			}
			pr, _ := primal(fc, y, tr.loss, cn, ref.W)
			allowed := wErr + math.Sqrt(2*math.Max(0, pr-p+g*g/2))
			dist := l2dist(ws[0], ref.W)
			t.Logf("%s: live reference P = %.12g (ours %.12g), ‖w − w_ref‖ = %.3g (allowed %.3g), accuracy %.4f (ours %.4f)",
				key, pr, p, dist, allowed, ref.Accuracy, testAccuracy(t, tr, ws, test))
			if p > pr+pErr {
				t.Errorf("%s: P(w_T) = %v above the live reference %v + %v", key, p, pr, pErr)
			}
			if dist > allowed*(1+1e-6)+1e-9 {
				t.Errorf("%s: ‖w − w_ref‖ = %v exceeds %v", key, dist, allowed)
			}
		}
	}
}

// TestSolverConvergesAsPromised checks the utility half of the T rule on a
// table: ‖w_T − w*‖ ≤ q^T·R, with w* approximated by 20·T steps.
func TestSolverConvergesAsPromised(t *testing.T) {
	train, _ := split(loadCSV(t, "breast_cancer.csv"))
	for _, loss := range []string{LossLogistic, LossHuber} {
		for _, c := range []float64{1, 30} {
			cfg := breastCancerConfig(train, len(train.x))
			cfg.C, cfg.Loss = c, loss
			tr := mustPlan(t, cfg)
			ws, _ := tr.fit(train.x, train.y)
			cfg.Iterations = min(20*tr.iters, MaxIterations)
			long, _ := mustPlan(t, cfg).fit(train.x, train.y)
			r := math.Min(c, math.Sqrt(2*c*valueAtZero(tr.loss)))
			bound := math.Pow(tr.q, float64(tr.iters)) * r
			d := l2dist(ws[0], long[0])
			t.Logf("%s C=%v: T = %d, ‖w_T − w_20T‖ = %.3g ≤ q^T·R = %.3g", loss, c, tr.iters, d, bound)
			if d > bound*(1+1e-6) {
				t.Errorf("%s C=%v: ‖w_T − w*‖ ≈ %v exceeds q^T·R = %v", loss, c, d, bound)
			}
		}
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
			maxQ = math.Max(maxQ, q)
		}
		if maxQ > 1 || maxQ < 0.9999 {
			t.Fatalf("%s: max ‖φ‖² = %v", kernel, maxQ)
		}
	}
}

// TestLossConstants checks each loss against the constants the proof uses:
// ℓ′ is the derivative of ℓ, ℓ′ ∈ [−L, 0], ℓ′ is non-decreasing and
// β_ℓ-Lipschitz, and for the Huber loss the computed ℓ′ is within
// derivErr of the exact rational value.
func TestLossConstants(t *testing.T) {
	for _, l := range []loss{logistic{}, huber{h: 0.5}, huber{h: 0.05}, huber{h: 7}} {
		prevM, prevD := math.Inf(-1), -l.lipschitz()
		for k := -4000; k <= 4000; k++ {
			m := float64(k) / 500
			d := l.deriv(m)
			if d < -l.lipschitz() || d > 0 || d < prevD {
				t.Fatalf("%T: ℓ′(%v) = %v outside [−L, 0] or decreasing", l, m, d)
			}
			if !math.IsInf(prevM, 0) && d-prevD > l.smoothness()*(m-prevM)*(1+1e-9)+1e-15 {
				t.Fatalf("%T: ℓ′ not %v-Lipschitz at %v", l, l.smoothness(), m)
			}
			const e = 1e-6
			if num := (l.value(m+e) - l.value(m-e)) / (2 * e); math.Abs(num-d) > 1e-5 {
				t.Fatalf("%T: ℓ′(%v) = %v, numerical %v", l, m, d, num)
			}
			if h, ok := l.(huber); ok {
				x := new(big.Float).SetPrec(200).SetFloat64(1)
				x.Add(x, new(big.Float).SetFloat64(h.h))
				x.Sub(x, new(big.Float).SetFloat64(m))
				x.Quo(x, new(big.Float).SetFloat64(2*h.h))
				ex, _ := x.Float64()
				ex = -math.Min(1, math.Max(0, ex))
				if math.Abs(ex-d) > l.derivErr() {
					t.Fatalf("huber h=%v: ℓ′(%v) = %v, exact %v, allowed %v", h.h, m, d, ex, l.derivErr())
				}
			}
			prevM, prevD = m, d
		}
	}
}
